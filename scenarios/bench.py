"""The benchmark matrix: memory mode x Grounding Layer, one replay per configuration.

Every configuration is an ordinary `replay` run directory under `out_dir`
(`chunks-gl-on`, ...), so `grounding report` reads them like any other run. All
configurations run in this one process on purpose: the embedder's process-wide
cache then embeds each history's turns once for the whole matrix. With `jobs > 1`
one set of worker processes serves every configuration and a history always goes
to the same worker, so the same holds per worker. A combined `report.md` with the
matrix table and the charts goes into `out_dir`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.settings import load_settings
from scenarios.histories import build_histories
from scenarios.loader import load_corpus
from scenarios.pool import ReplayPool
from scenarios.replay import ReplayStats, replay
from scenarios.report import Run, load_run, render_markdown, write_charts

OFFLINE_MEMORY = ("none", "history", "chunks")
REAL_MODEL_MEMORY = (*OFFLINE_MEMORY, "facts")  # facts memory needs a model to write facts


@dataclass(frozen=True)
class Config:
    """One cell of the matrix."""

    memory: str
    gl: bool

    @property
    def name(self) -> str:
        return f"{self.memory}-gl-{'on' if self.gl else 'off'}"


@dataclass
class CellResult:
    """What one configuration produced and how long it took."""

    config: Config
    run_dir: Path
    metrics: dict[str, Any]
    stats: ReplayStats
    seconds: float


@dataclass
class BenchResult:
    """The whole matrix."""

    out_dir: Path
    cells: list[CellResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def report(self) -> Path:
        return self.out_dir / "report.md"


def matrix(model: str = "reference") -> list[Config]:
    """The configurations to run: facts memory only with a real model."""
    memories = OFFLINE_MEMORY if model == "reference" else REAL_MODEL_MEMORY
    return [Config(memory, gl) for memory in memories for gl in (False, True)]


def bench(
    corpus_dir: Path,
    out_dir: Path,
    *,
    model: str = "reference",
    overrides: dict[str, Any] | None = None,
    limit: int | None = None,
    on_progress: Callable[[Config, str, int, int], None] | None = None,
    jobs: int = 1,
    max_model_calls: int | None = None,
) -> BenchResult:
    """Replay the corpus once per configuration and write the combined report.

    `jobs` and `max_model_calls` as in `replay`; the workers serve the whole matrix.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    result = BenchResult(out_dir=out_dir)
    started = time.perf_counter()
    corpus = load_corpus(corpus_dir)  # once for every configuration
    histories = len(build_histories(corpus)[: limit or None])
    workers = min(jobs, histories)
    with ReplayPool(workers, max_model_calls) if workers > 1 else nullcontext() as pool:
        for config in matrix(model):
            settings = load_settings(
                {**(overrides or {}), "model": model, "memory": config.memory, "gl": config.gl}
            )

            def tick(history: str, done: int, total: int, config: Config = config) -> None:
                if on_progress is not None:
                    on_progress(config, history, done, total)

            t0 = time.perf_counter()
            metrics, stats = replay(
                corpus_dir,
                out_dir / config.name,
                settings,
                limit=limit,
                on_progress=tick,
                pool=pool,
                corpus=corpus,
            )
            result.cells.append(
                CellResult(config, out_dir / config.name, metrics, stats, time.perf_counter() - t0)
            )
    result.seconds = time.perf_counter() - started
    write_bench_report(result)
    return result


def timing_table(result: BenchResult) -> str:
    rows = [
        "| configuration | probes | ingest s | probes s | total s |",
        "|---|---|---|---|---|",
    ]
    for cell in result.cells:
        s = cell.stats
        rows.append(
            f"| {cell.config.name} | {s.probes} | {s.ingest_s:.1f} | {s.probe_s:.1f} "
            f"| {cell.seconds:.1f} |"
        )
    rows.append(f"| whole matrix | | | | {result.seconds:.1f} |")
    return "\n".join(rows)


def write_bench_report(result: BenchResult) -> Path:
    """`report.md` and the charts in the bench directory; the matrix table is part of it."""
    runs: list[Run] = [load_run(cell.run_dir) for cell in result.cells]
    write_charts(result.out_dir, runs)
    text = render_markdown(runs) + "\n## Timing\n\n" + timing_table(result) + "\n"
    result.report.write_text(text, encoding="utf-8")
    return result.report
