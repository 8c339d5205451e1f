"""Offline replay timings: one full replay, the whole memory x GL matrix, and probes on
histories four times longer.

Usage: .venv/bin/python bench/bench_replay.py [CORPUS] [--skip-matrix] [--skip-long]

All figures come from one process with a cold embedding cache at the start, in this
order: (1) `replay` of the corpus with chunks memory and the Grounding Layer on,
split into ingest and probes, with probes per second; (2) the six offline cells of
`grounding bench` (the turns are embedded once, so the matrix costs less than six
cold replays); (3) the same probes after ingesting every history four times, the
copies shifted back in time by the history's span, so memory and ledger hold four
times the dialogue; per-probe time is compared with (1). Peak RSS is the process's
maximum resident set (`resource.getrusage`), so it covers everything before it.
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent import embeddings  # noqa: E402, F401  (sets the offline switches first)
from agent.factory import Agent, build_agent  # noqa: E402
from agent.settings import load_settings  # noqa: E402
from ledger.model import Turn  # noqa: E402
from scenarios.bench import bench  # noqa: E402
from scenarios.histories import History, build_histories, build_probes  # noqa: E402
from scenarios.loader import load_corpus  # noqa: E402
from scenarios.replay import history_turns, replay, run_probe  # noqa: E402

COPIES = 4


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def shifted_sessions(history: History, copies: int) -> list[list[Turn]]:
    """The history's sessions `copies` times, older copies shifted back by its span."""
    sessions = history_turns(history)
    span = (sessions[-1][0].session_date - sessions[0][0].session_date).days + 7
    out: list[list[Turn]] = []
    for copy in reversed(range(copies)):  # oldest copy first, the original last
        shift = timedelta(days=span * copy)
        for turns in sessions:
            out.append(
                [
                    t.model_copy(
                        update={
                            "session_id": f"{t.session_id}-c{copy}" if copy else t.session_id,
                            "session_date": t.session_date - shift,
                        }
                    )
                    for t in turns
                ]
            )
    return out


def long_histories(corpus_dir: Path, work: Path) -> tuple[float, float, int]:
    """Ingest each history COPIES times, run its probes; (ingest s, probe s, probes)."""
    corpus = load_corpus(corpus_dir)
    settings = load_settings({"memory": "chunks", "gl": True})
    probes = build_probes(corpus)
    ingest_s = probe_s = 0.0
    count = 0
    for history in build_histories(corpus):
        agent: Agent = build_agent(settings, work / history.id, namespace=f"long-{history.id}")
        started = time.perf_counter()
        for turns in shifted_sessions(history, COPIES):
            agent.remember(turns)
        ingest_s += time.perf_counter() - started
        started = time.perf_counter()
        for probe in probes[history.id]:
            run_probe(agent, corpus, probe)
            count += 1
        probe_s += time.perf_counter() - started
        agent.store.close()
    return ingest_s, probe_s, count


def main(argv: list[str]) -> None:
    flags = {a for a in argv if a.startswith("--")}
    args = [a for a in argv if not a.startswith("--")]
    corpus_dir = Path(args[0]) if args else ROOT / "scenarios" / "corpus"
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        work = Path(tmp)
        settings = load_settings({"memory": "chunks", "gl": True})
        started = time.perf_counter()
        _, stats = replay(corpus_dir, work / "replay", settings)
        total = time.perf_counter() - started
        per_probe = stats.probe_s / max(stats.probes, 1)
        print(f"corpus: {corpus_dir}")
        print(
            f"replay (chunks, GL on, cold cache): {total:.1f} s = ingest {stats.ingest_s:.1f} s"
            f" ({stats.histories} histories) + probes {stats.probe_s:.1f} s"
            f" ({stats.probes} probes, {stats.probes / max(stats.probe_s, 1e-9):.1f} probes/s,"
            f" {1000 * per_probe:.0f} ms/probe)"
        )
        print(f"peak RSS after one replay: {peak_rss_mb():.0f} MB")
        if "--skip-matrix" not in flags:
            result = bench(corpus_dir, work / "matrix")
            cells = ", ".join(f"{c.config.name} {c.seconds:.1f}" for c in result.cells)
            print(f"matrix (6 offline cells, one process): {result.seconds:.1f} s [{cells}]")
            print(f"peak RSS after the matrix: {peak_rss_mb():.0f} MB")
        if "--skip-long" not in flags:
            ingest_s, probe_s, count = long_histories(corpus_dir, work / "long")
            long_per_probe = probe_s / max(count, 1)
            print(
                f"histories x{COPIES} (chunks, GL on): ingest {ingest_s:.1f} s, probes"
                f" {probe_s:.1f} s, {1000 * long_per_probe:.0f} ms/probe"
                f" ({long_per_probe / max(per_probe, 1e-9):.2f}x the 1x figure)"
            )
            print(f"peak RSS at the end: {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main(sys.argv[1:])
