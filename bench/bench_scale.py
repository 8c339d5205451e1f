"""Scale: ingest and per-probe time as histories grow longer and as the corpus grows.

Usage: .venv/bin/python bench/bench_scale.py [--full] [--corpus DIR] [--lengths 18,72,288]
       [--sizes 48,160,640] [--skip-lengths] [--skip-sizes] [--chroma-url URL] [--json FILE]

Default: about 2.5 minutes on a loaded 2-core machine; `--full` (every probe, three
histories per length, five per corpus size, and a real `replay` with 1 and 2 jobs):
about 25 minutes there. docs/SCALING_FIGURES.md has the figures, docs/SCALING.md
what they mean for a large sweep.

Everything runs with the offline reference policy and default `Settings()` (chunks
memory, Grounding Layer on, rules ledger writer, no model cache), through the replay
code (`scenarios.replay.ingest`, `run_probe`, `replay_history`, `replay`). Each
measurement runs in a fresh spawned process (as a `--jobs` worker is), so its peak
RSS is its own; the embedding cache is emptied before every history, so each history
pays for embedding its own distinct texts (a pessimistic worker: a real one keeps its
cache across the five versions of a persona). Wall and process CPU seconds are both
given: on a shared machine the CPU figure is the steadier one.

(a) History length. A real history (default `maya-v0`; `--full`: three of them) is
lengthened to 18, 72 and 288 sessions by putting whole histories of *other* personas
before it (version 0 of every other persona first, then version 1, ...), each block
shifted back in time so that dates strictly increase, session ids made unique. The
target history stays last with its own dates, so its probes (same requests, same
date) run at the end as in the benchmark. Other personas' sessions, not the target
persona's other versions: those would contradict the target's own conditions. They
do bring their own arrangements into the ledger, so accuracy on the longer
histories measures interference, not the benchmark. Default: the same 8 probes
(spread over the history's probe list) at every length; `--full`: all probes.
Ingest is split into the memory's embedding (MiniLM inference inside
`Memory.add_session`), the Chroma store (the rest of it) and the ledger writer (with
its own embeddings). The first probe of a history is shown apart: it embeds the
ledger's texts for the gate, which later probes find in the cache. `decide` and
classifier calls are counted: each would be one model call with an LLM policy or
`--ledger-writer llm`; the prompt size is the JSON of the messages an LLM policy would
get for each `decide` (system prompt with recalled memory and the whole ledger, the
request, tool steps), without the constant tool schemas.

(b) Corpus size. 48 scenarios = 3 personas of the real corpus, 160 = the real corpus,
640 = the real corpus four times (copies `<persona>-c1..c3`, scenario ids suffixed,
starts moved back by 7 days per copy), written to a temp dir in format v1 and loaded
by the real loader. Per size: corpus load (`load_corpus`), history and probe assembly,
the RSS they add, the same sampled histories through `replay_history` (default 1,
`--full` 5; the ids exist at every size; the first call also loads the corpus, as
every worker does once: "worker setup"), and `compute_metrics` on synthetic records
replicated from the sample to the full probe count. Projected one-job total = load +
2 x assembly (replay builds them for its tasks and again for the canonical order) +
histories x mean per-history time + metrics.

Growth exponents are least-squares slopes of log(time) against log(size).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import multiprocessing as mp
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent import embeddings  # noqa: E402  (sets the offline switches first)
from agent.factory import build_agent  # noqa: E402
from agent.settings import Settings  # noqa: E402
from scenarios.histories import History, Session, build_histories, build_probes  # noqa: E402
from scenarios.loader import Corpus, load_corpus  # noqa: E402
from scenarios.metrics import compute_metrics  # noqa: E402
from scenarios.pool import HistoryTask  # noqa: E402
from scenarios.replay import ingest, replay, replay_history, run_probe  # noqa: E402

BLOCK_GAP_DAYS = 6  # between the last session of one added block and the next block
DEFAULT_TARGET = "maya-v0"
DEFAULT_PROBES = 8
SAMPLE_PERSONAS = 3  # the 48-scenario corpus: every third persona of the real one
COPY_SHIFT_DAYS = 7  # a whole week, so weekdays in the corpus texts stay true


# --- small measurements -------------------------------------------------------------


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def current_rss_mb() -> float:
    """Resident set now (Linux /proc; 0 elsewhere): what a load adds, unlike the peak."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default)."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def growth_exponent(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of log(y) on log(x): time ~ size ** slope."""
    pts = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len({x for x, _ in pts}) < 2:
        return None
    mx = statistics.fmean(x for x, _ in pts)
    my = statistics.fmean(y for _, y in pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx


class EmbedTimer:
    """Seconds and texts spent in MiniLM inference (`MiniLMEmbedder.encode`), cache misses only."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.texts = 0
        real = embeddings.MiniLMEmbedder.encode

        def encode(embedder: Any, texts: list[str]) -> Any:
            started = time.perf_counter()
            try:
                return real(embedder, texts)
            finally:
                self.seconds += time.perf_counter() - started
                self.texts += len(texts)

        embeddings.MiniLMEmbedder.encode = encode  # type: ignore[method-assign,assignment]


def counted(
    fn: Callable[..., Any], tally: dict[str, float], key: str, timer: EmbedTimer | None = None
) -> Callable[..., Any]:
    """`fn`, adding its calls, seconds and (with `timer`) embedding seconds to `tally`:
    `tally[key]`, `tally[key + '_s']`, `tally[key + '_embed_s']`."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        embedded = timer.seconds if timer else 0.0
        try:
            return fn(*args, **kwargs)
        finally:
            tally[key] = tally.get(key, 0) + 1
            tally[key + "_s"] = tally.get(key + "_s", 0.0) + time.perf_counter() - started
            if timer:
                spent = timer.seconds - embedded
                tally[key + "_embed_s"] = tally.get(key + "_embed_s", 0.0) + spent

    return wrapper


def warm_up() -> EmbedTimer:
    """Load the ONNX session outside the timings, then start counting with an empty cache."""
    embeddings.MiniLMEmbedder().embed(["warm up the embedding session"])
    embeddings.cache_clear()
    return EmbedTimer()


@contextmanager
def child_pool() -> Iterator[ProcessPoolExecutor]:
    with ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool:
        yield pool


def in_child(fn: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """Run one measurement in a fresh spawned process (its own RSS, caches, Chroma clients)."""
    with child_pool() as pool:
        return pool.submit(fn, *args).result()


# --- (a) history length -------------------------------------------------------------


def lengthen(target: History, histories: list[History], length: int) -> History:
    """`target` preceded by other personas' sessions: `length` sessions, dates increasing."""
    others = sorted(
        (h for h in histories if h.persona != target.persona), key=lambda h: (h.version, h.persona)
    )
    needed = length - len(target.sessions)
    if needed < 0:
        raise ValueError(f"{target.id} already has {len(target.sessions)} sessions")
    blocks: list[list[Session]] = []
    for other in others:
        if needed <= 0:
            break
        take = list(other.sessions)[-needed:]  # a partial block keeps its last sessions
        blocks.append(take)
        needed -= len(take)
    if needed > 0:
        raise ValueError(f"the corpus has too few other sessions for {length}")
    earlier: list[Session] = []
    cursor = target.sessions[0].date - timedelta(days=BLOCK_GAP_DAYS)
    for number, sessions_of in reversed(list(enumerate(blocks, start=1))):
        shift = cursor - sessions_of[-1].date
        moved = [
            s.model_copy(update={"id": f"{s.id}-b{number:02d}", "date": s.date + shift})
            for s in sessions_of
        ]
        earlier = moved + earlier
        cursor = moved[0].date - timedelta(days=BLOCK_GAP_DAYS)
    sessions = [
        s.model_copy(update={"index": i}) for i, s in enumerate([*earlier, *target.sessions], 1)
    ]
    dates = [s.date for s in sessions]
    assert all(a < b for a, b in itertools.pairwise(dates)), "dates must increase"
    assert len({s.id for s in sessions}) == len(sessions), "session ids must be unique"
    return target.model_copy(update={"sessions": tuple(sessions)})


def spread(items: list[Any], count: int | None) -> list[Any]:
    """`count` items evenly spread over `items` (all of them when count is None)."""
    if count is None or count >= len(items):
        return list(items)
    return [items[i * len(items) // count] for i in range(count)]


def length_run(
    corpus_dir: str, target_id: str, length: int, probes: int | None, chroma_url: str | None
) -> dict[str, Any]:
    """One lengthened history: ingest it into a fresh profile, run its probes (in a child)."""
    timer = warm_up()
    rss_start = peak_rss_mb()
    corpus = load_corpus(corpus_dir)
    histories = build_histories(corpus)
    target = next(h for h in histories if h.id == target_id)
    history = lengthen(target, histories, length)
    specs = spread(build_probes(corpus)[target.id], probes)
    tally: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        agent = build_agent(
            Settings(chroma_url=chroma_url),
            Path(tmp),
            namespace=f"scale-{length}-{target.id}",
            profile_text=corpus.personas[target.persona].name,
        )
        try:
            memory: Any = agent.memory  # instrumented in place: Agent.remember calls both
            writer: Any = agent.writer
            memory.add_session = counted(memory.add_session, tally, "memory", timer)
            writer.process_session = counted(writer.process_session, tally, "writer", timer)
            classifier: Any = agent.writer.classifier
            classifier.classify_reply = counted(classifier.classify_reply, tally, "classify")
            started, cpu = time.perf_counter(), time.process_time()
            ingest(agent, history)
            ingest_s = time.perf_counter() - started
            ingest_cpu = time.process_time() - cpu
            embedded = timer.texts
            chunks = agent.memory.count()
            entries = len(agent.ledger())
            decide = agent.policy.decide

            def sized_decide(inp: Any) -> Any:
                # What an LLM policy would be sent (less the constant tool schemas).
                size = len(json.dumps(inp.to_messages()))
                tally["prompt_chars"] = tally.get("prompt_chars", 0) + size
                return decide(inp)

            agent.policy.decide = counted(sized_decide, tally, "decide")
            times: list[float] = []
            cpus: list[float] = []
            correct = 0
            for spec in specs:
                started, cpu = time.perf_counter(), time.process_time()
                record = run_probe(agent, corpus, spec)
                times.append(time.perf_counter() - started)
                cpus.append(time.process_time() - cpu)
                correct += bool(record["correct"])
        finally:
            agent.store.close()
            agent.memory.drop()
    memory_s = tally.get("memory_s", 0.0)
    embed_s = tally.get("memory_embed_s", 0.0)
    return {
        "target": target.id,
        "sessions": len(history.sessions),
        "turns": sum(len(s.turns) for s in history.sessions),
        "ingest_s": ingest_s,
        "ingest_cpu_s": ingest_cpu,
        "embed_s": embed_s,
        "store_s": max(memory_s - embed_s, 0.0),
        "writer_s": tally.get("writer_s", 0.0),
        "writer_embed_s": tally.get("writer_embed_s", 0.0),
        "texts_embedded": embedded,
        "chunks": chunks,
        "ledger_entries": entries,
        "classify_calls": int(tally.get("classify", 0)),
        "probes": len(times),
        "probe_median_s": statistics.median(times),
        "probe_p95_s": percentile(times, 0.95),
        "probe_cpu_median_s": statistics.median(cpus),
        "first_probe_s": times[0],
        "decide_per_probe": tally.get("decide", 0) / max(len(times), 1),
        "prompt_chars_per_decide": tally.get("prompt_chars", 0) / max(tally.get("decide", 0), 1),
        "correct": correct,
        "rss_start_mb": rss_start,
        "rss_peak_mb": peak_rss_mb(),
    }


# --- (b) corpus size ----------------------------------------------------------------


def _rewrite(text: str, key: str, value: str) -> str:
    """Replace a top-level `key: ...` line; the loader checks the result."""
    new, count = re.subn(rf"(?m)^{key}:.*$", f"{key}: {value}", text, count=1)
    if count != 1:
        raise ValueError(f"no top-level {key!r} line")
    return new


def make_corpus(real: Path, size: int, dest: Path) -> Path:
    """A format-v1 corpus of `size` scenarios from the real one (see the module docstring)."""
    corpus = load_corpus(real)
    counts = {pid: len(corpus.scenarios.get(pid, [])) for pid in sorted(corpus.personas)}
    total = sum(counts.values())
    if size == total:
        return real
    personas = sorted(counts)
    if size < total:
        chosen = personas[::SAMPLE_PERSONAS]
        while sum(counts[p] for p in chosen) > size:
            chosen.pop()
        copies = [(p, 0) for p in chosen]
    else:
        rounds = math.ceil(size / total)
        copies = [(p, c) for c in range(rounds) for p in personas]
    picked: list[tuple[str, int]] = []
    for pid, copy in copies:
        if sum(counts[p] for p, _ in picked) >= size:
            break
        picked.append((pid, copy))
    if sum(counts[p] for p, _ in picked) != size:
        raise SystemExit(f"--sizes: {size} is not a sum of whole personas of {real}")
    (dest / "personas").mkdir(parents=True)
    for pid, copy in picked:
        new_id = f"{pid}-c{copy}" if copy else pid
        text = (real / "personas" / f"{pid}.yaml").read_text(encoding="utf-8")
        start = corpus.personas[pid].start - timedelta(days=COPY_SHIFT_DAYS * copy)
        text = _rewrite(_rewrite(text, "id", new_id), "start", start.isoformat())
        (dest / "personas" / f"{new_id}.yaml").write_text(text, encoding="utf-8")
        (dest / new_id).mkdir()
        for scenario in corpus.scenarios[pid]:
            sid = f"{scenario.id}-c{copy}" if copy else scenario.id
            text = (real / pid / f"{scenario.id}.yaml").read_text(encoding="utf-8")
            text = _rewrite(_rewrite(text, "id", sid), "persona", new_id)
            (dest / new_id / f"{sid}.yaml").write_text(text, encoding="utf-8")
    return dest


def sample_ids(corpora: list[Path], count: int) -> list[str]:
    """`count` history ids present at every size, spread over personas and versions."""
    common = None
    for path in corpora:
        ids = [h.id for h in build_histories(load_corpus(path))]
        common = ids if common is None else [i for i in common if i in set(ids)]
    if not common:
        raise SystemExit("--sizes: the corpora share no history to sample")
    personas = sorted({i.rsplit("-v", 1)[0] for i in common})
    picked = [f"{personas[i % len(personas)]}-v{i % 5}" for i in range(count)]
    return [i for i in picked if i in common] or common[:count]


def synthetic_records(
    sample: list[list[dict[str, Any]]], histories: list[History]
) -> list[dict[str, Any]]:
    """The sample's records relabelled onto every history of the corpus (for timing only)."""
    records = []
    for i, history in enumerate(histories):
        for record in sample[i % len(sample)]:
            scenario = f"{history.persona}:{record['scenario_id']}"
            records.append(
                {
                    **record,
                    "history_id": history.id,
                    "persona": history.persona,
                    "version": history.version,
                    "scenario_id": scenario,
                    "probe_id": f"{history.id}/{scenario}/{record['probe_kind']}",
                }
            )
    return records


def size_run(corpus_dir: str, history_ids: list[str], chroma_url: str | None) -> dict[str, Any]:
    """One corpus size: load, assemble, sampled histories, metrics (in a child)."""
    warm_up()
    rss_before = current_rss_mb()
    started, cpu = time.perf_counter(), time.process_time()
    corpus: Corpus = load_corpus(corpus_dir)
    digest = corpus.digest()
    load_s, load_cpu = time.perf_counter() - started, time.process_time() - cpu
    started, cpu = time.perf_counter(), time.process_time()
    histories = build_histories(corpus)
    probes = build_probes(corpus)
    assemble_s, assemble_cpu = time.perf_counter() - started, time.process_time() - cpu
    rss_corpus = current_rss_mb() - rss_before  # the corpus, its histories and probes in memory
    settings = Settings(chroma_url=chroma_url)
    walls: list[float] = []
    cpus: list[float] = []
    work: list[float] = []
    probe_times: list[float] = []
    sample: list[list[dict[str, Any]]] = []
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        for hid in history_ids:
            records: list[dict[str, Any]] = []
            task = HistoryTask(
                corpus_dir=Path(corpus_dir),
                corpus_digest=digest,
                history_id=hid,
                probe_ids=tuple(p.id for p in probes[hid]),
                settings=settings,
                home=Path(tmp) / hid,
                cache_path=None,
            )
            embeddings.cache_clear()
            started, cpu = time.perf_counter(), time.process_time()
            stats = replay_history(task, records.append)
            walls.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
            work.append(stats.ingest_s + stats.probe_s)
            probe_times += [float(r["seconds"]) for r in records]
            sample.append(records)
        # What replay_history spends around ingest and probes: a fresh profile and its
        # cleanup. Timed on its own so the first call's extra (the corpus load every
        # worker does once) can be told apart.
        started = time.perf_counter()
        agent = build_agent(settings, Path(tmp) / "overhead", namespace="h-overhead")
        agent.store.close()
        agent.memory.drop()
        agent_overhead = time.perf_counter() - started
    records = synthetic_records(sample, histories)
    started = time.perf_counter()
    compute_metrics(records)
    metrics_s = time.perf_counter() - started
    per_history = statistics.fmean(work) + agent_overhead
    # The first call's CPU includes the worker's own corpus load and assembly.
    first_extra_cpu = load_cpu + assemble_cpu
    per_history_cpu = statistics.fmean([max(cpus[0] - first_extra_cpu, 0.0), *cpus[1:]])
    n_hist = len(histories)
    return {
        "scenarios": sum(len(v) for v in corpus.scenarios.values()),
        "personas": len(corpus.personas),
        "histories": n_hist,
        "probes": sum(len(v) for v in probes.values()),
        "load_s": load_s,
        "assemble_s": assemble_s,
        "worker_setup_s": max(walls[0] - work[0] - agent_overhead, 0.0),
        "agent_overhead_s": agent_overhead,
        "sampled": history_ids,
        "per_history_s": per_history,
        "per_history_cpu_s": per_history_cpu,
        "per_probe_median_s": statistics.median(probe_times),
        "per_probe_p95_s": percentile(probe_times, 0.95),
        "metrics_s": metrics_s,
        "metrics_records": len(records),
        "record_bytes": statistics.fmean(
            len(json.dumps(r, sort_keys=True)) + 1 for rs in sample for r in rs
        ),
        "rss_corpus_mb": rss_corpus,
        "projected_total_s": load_s + 2 * assemble_s + n_hist * per_history + metrics_s,
        "projected_total_cpu_s": load_cpu + 2 * assemble_cpu + n_hist * per_history_cpu + metrics_s,
        "rss_peak_mb": peak_rss_mb(),
    }


def replay_check(corpus_dir: Path, sized: dict[str, Any]) -> list[dict[str, Any]]:
    """`--full`: a real end-to-end `replay` of the corpus (1 and 2 jobs) against the projection."""
    checks = []
    for jobs in (1, 2):
        with tempfile.TemporaryDirectory(prefix="bench-scale-replay-") as tmp:
            started = time.perf_counter()
            _, stats = replay(corpus_dir, Path(tmp) / "run", Settings(), jobs=jobs)
            seconds = time.perf_counter() - started
        checks.append(
            {
                "scenarios": sized["scenarios"],
                "jobs": jobs,
                "seconds": seconds,
                "projected_1_job_s": sized["projected_total_s"],
                "ingest_s": stats.ingest_s,
                "probe_s": stats.probe_s,
                "probes": stats.probes,
            }
        )
        print(
            f"  replay check, {sized['scenarios']} scenarios, --jobs {jobs}: {seconds:.0f} s"
            f" measured (ingest {stats.ingest_s:.0f} s + probes {stats.probe_s:.0f} s summed"
            f" over workers) vs {sized['projected_total_s']:.0f} s projected for one job",
            flush=True,
        )
    return checks


# --- reporting ----------------------------------------------------------------------


def machine() -> dict[str, Any]:
    try:
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        commit += " (working tree with uncommitted changes)" if dirty else ""
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "commit": commit,
        "date": date.today().isoformat(),
        "load_before": list(os.getloadavg()),
    }


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def exponent_text(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def report_lengths(runs: list[dict[str, Any]]) -> tuple[str, dict[str, float | None]]:
    rows = [
        [
            r["target"],
            str(r["sessions"]),
            str(r["turns"]),
            f"{r['ingest_s']:.1f} ({r['ingest_cpu_s']:.1f})",
            f"{r['embed_s']:.1f} / {r['store_s']:.1f} / {r['writer_s']:.1f}",
            f"{r['texts_embedded']} / {r['chunks']}",
            str(r["ledger_entries"]),
            str(r["classify_calls"]),
            f"{r['probes']} ({r['correct']} ok)",
            f"{1000 * r['probe_median_s']:.0f} / {1000 * r['probe_p95_s']:.0f}"
            f" ({1000 * r['probe_cpu_median_s']:.0f})",
            f"{1000 * r['first_probe_s']:.0f}",
            f"{r['decide_per_probe']:.1f} ({r['prompt_chars_per_decide'] / 1000:.1f}k chars)",
            f"{r['rss_start_mb']:.0f} / {r['rss_peak_mb']:.0f}",
        ]
        for r in runs
    ]
    header = [
        "history",
        "sessions",
        "turns",
        "ingest s (CPU s)",
        "memory embed / Chroma store / ledger writer s",
        "texts embedded / chunks",
        "ledger entries",
        "classifier calls",
        "probes",
        "probe median / p95 ms (CPU median)",
        "first probe ms",
        "decide calls / probe (prompt size)",
        "RSS start / peak MB",
    ]
    exps = {
        "ingest": growth_exponent([(r["sessions"], r["ingest_s"]) for r in runs]),
        "probe_median": growth_exponent([(r["sessions"], r["probe_median_s"]) for r in runs]),
        "ingest_cpu": growth_exponent([(r["sessions"], r["ingest_cpu_s"]) for r in runs]),
        "probe_cpu_median": growth_exponent(
            [(r["sessions"], r["probe_cpu_median_s"]) for r in runs]
        ),
        "embed": growth_exponent([(r["sessions"], r["embed_s"]) for r in runs]),
        "store": growth_exponent([(r["sessions"], r["store_s"]) for r in runs]),
        "ledger": growth_exponent([(r["sessions"], r["writer_s"]) for r in runs]),
    }
    return table(header, rows), exps


def report_sizes(runs: list[dict[str, Any]]) -> tuple[str, dict[str, float | None]]:
    rows = [
        [
            str(r["scenarios"]),
            f"{r['personas']} / {r['histories']} / {r['probes']}",
            f"{r['load_s']:.2f}",
            f"{r['assemble_s']:.2f}",
            f"{r['worker_setup_s']:.1f}",
            f"{r['per_history_s']:.1f} ({r['per_history_cpu_s']:.1f})",
            f"{1000 * r['per_probe_median_s']:.0f} / {1000 * r['per_probe_p95_s']:.0f}",
            f"{r['metrics_s']:.2f}",
            f"{r['projected_total_s']:.0f} ({r['projected_total_cpu_s']:.0f})",
            f"{r['rss_corpus_mb']:.0f} / {r['rss_peak_mb']:.0f}",
        ]
        for r in runs
    ]
    header = [
        "scenarios",
        "personas / histories / probes",
        "load s",
        "assemble s",
        "worker setup s",
        "per history s (CPU s)",
        "per probe median / p95 ms",
        "metrics s",
        "projected 1-job total s (CPU s)",
        "RSS corpus / peak MB",
    ]
    exps = {
        "total": growth_exponent([(r["scenarios"], r["projected_total_s"]) for r in runs]),
        "total_cpu": growth_exponent([(r["scenarios"], r["projected_total_cpu_s"]) for r in runs]),
        "load": growth_exponent([(r["scenarios"], r["load_s"]) for r in runs]),
        "assemble": growth_exponent([(r["scenarios"], r["assemble_s"]) for r in runs]),
        "metrics": growth_exponent([(r["scenarios"], r["metrics_s"]) for r in runs]),
        "per_history": growth_exponent([(r["scenarios"], r["per_history_s"]) for r in runs]),
        "per_history_cpu": growth_exponent(
            [(r["scenarios"], r["per_history_cpu_s"]) for r in runs]
        ),
    }
    return table(header, rows), exps


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--full", action="store_true", help="every probe, more histories")
    parser.add_argument("--corpus", type=Path, default=ROOT / "scenarios" / "corpus")
    parser.add_argument("--lengths", default="18,72,288", help="sessions per history")
    parser.add_argument("--sizes", default="48,160,640", help="scenarios per corpus")
    parser.add_argument("--skip-lengths", action="store_true")
    parser.add_argument("--skip-sizes", action="store_true")
    parser.add_argument("--chroma-url", help="memory on a Chroma server instead of embedded")
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    args = parser.parse_args(argv)
    corpus_dir = args.corpus.resolve()
    info = machine()
    started = time.perf_counter()
    print(
        f"bench_scale: {'--full' if args.full else 'default'} run, {info['cpus']} CPUs, "
        f"load average {' '.join(f'{x:.2f}' for x in info['load_before'])}, "
        f"commit {info['commit']}, corpus {corpus_dir}"
    )
    result: dict[str, Any] = {"machine": info, "full": args.full}

    if not args.skip_lengths:
        histories = build_histories(load_corpus(corpus_dir))
        ids = [h.id for h in histories]
        targets = [DEFAULT_TARGET if DEFAULT_TARGET in ids else ids[0]]
        if args.full:
            targets += [h for h in spread(ids, 3) if h not in targets][:2]
        probes = None if args.full else DEFAULT_PROBES
        runs = []
        for target in targets:
            for length in (int(x) for x in args.lengths.split(",")):
                run = in_child(length_run, str(corpus_dir), target, length, probes, args.chroma_url)
                runs.append(run)
                print(
                    f"  (a) {target} x {run['sessions']} sessions: ingest {run['ingest_s']:.1f} s,"
                    f" probe median {1000 * run['probe_median_s']:.0f} ms",
                    flush=True,
                )
        text, exps = report_lengths(runs)
        print("\n(a) history length\n" + text)
        print(
            "growth exponents vs sessions: "
            + ", ".join(f"{k} {exponent_text(v)}" for k, v in exps.items())
        )
        result["lengths"] = {"runs": runs, "exponents": exps}

    if not args.skip_sizes:
        runs = []
        with tempfile.TemporaryDirectory(prefix="bench-scale-corpus-") as tmp:
            sizes = [int(x) for x in args.sizes.split(",")]
            built = [make_corpus(corpus_dir, n, Path(tmp) / f"corpus-{n}") for n in sizes]
            history_ids = sample_ids(built, 5 if args.full else 1)
            for path in built:
                run = in_child(size_run, str(path), history_ids, args.chroma_url)
                runs.append(run)
                print(
                    f"  (b) {run['scenarios']} scenarios: load {run['load_s']:.2f} s,"
                    f" per history {run['per_history_s']:.1f} s",
                    flush=True,
                )
                if args.full and path == built[0]:
                    result["replay_check"] = replay_check(path, run)
                if path != corpus_dir:
                    shutil.rmtree(path, ignore_errors=True)
        text, exps = report_sizes(runs)
        print("\n(b) corpus size (sampled histories: " + ", ".join(history_ids) + ")\n" + text)
        print(f"trajectory record: {runs[-1]['record_bytes']:.0f} bytes of JSON on average")
        print(
            "growth exponents vs scenarios: "
            + ", ".join(f"{k} {exponent_text(v)}" for k, v in exps.items())
        )
        result["sizes"] = {"runs": runs, "exponents": exps, "sampled": history_ids}

    info["load_after"] = list(os.getloadavg())
    info["seconds"] = time.perf_counter() - started
    print(
        f"\ntotal {info['seconds']:.0f} s; load average at the end "
        f"{' '.join(f'{x:.2f}' for x in info['load_after'])}"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
