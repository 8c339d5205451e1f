"""Memory on the embedded Chroma client and on a Chroma server (`chroma run`): ingest time
and recall latency for one benchmark history.

Usage: .venv/bin/python bench/bench_chroma_server.py [--persona maya] [--corpus DIR]
       [--repeats 3]

The persona's scenarios are copied into a temporary corpus and its first history
(version 0) is used. A server is started on a free loopback port (as the tests do)
and stopped at the end. Every text is embedded once before timing, so the figures
are Chroma's own cost (storage, index, and for the server the HTTP round trips);
the cold embedding cost is printed once for scale. Ingest: the history's sessions
through `Memory.add_session` into a fresh collection, best of `--repeats`. Recall:
`Memory.recall(request, k=5)` for every probe request of the history, repeated
`--repeats` times; median and 95th percentile per call.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent import embeddings  # noqa: E402, F401  (sets the offline switches first)
from agent.embeddings import MiniLMEmbedder  # noqa: E402
from agent.memory import Memory, open_memory, render_turns  # noqa: E402
from ledger.model import Turn  # noqa: E402
from scenarios.histories import build_histories, build_probes  # noqa: E402
from scenarios.loader import load_corpus  # noqa: E402
from scenarios.replay import history_turns  # noqa: E402
from tests.chroma_server import running_chroma_server  # noqa: E402

MODES = ("chunks", "history")


def one_history(
    corpus_dir: Path, persona: str, work: Path
) -> tuple[str, list[list[Turn]], list[str]]:
    """(history id, its sessions as turns, its probe requests) from a one-persona copy."""
    corpus = work / "corpus"
    shutil.copytree(corpus_dir / persona, corpus / persona)
    (corpus / "personas").mkdir()
    shutil.copy(corpus_dir / "personas" / f"{persona}.yaml", corpus / "personas")
    loaded = load_corpus(corpus)
    history = build_histories(loaded)[0]
    requests = [p.request for p in build_probes(loaded)[history.id]]
    return history.id, history_turns(history), requests


def ingest(memory: Memory, sessions: list[list[Turn]]) -> float:
    started = time.perf_counter()
    for turns in sessions:
        memory.add_session(turns)
    return time.perf_counter() - started


def recall_times(memory: Memory, requests: list[str], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        for request in requests:
            started = time.perf_counter()
            memory.recall(request, k=5)
            times.append(time.perf_counter() - started)
    return times


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) > 1 else values[0]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--persona", default="maya")
    parser.add_argument("--corpus", type=Path, default=ROOT / "scenarios" / "corpus")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-chroma-") as tmp:
        work = Path(tmp)
        history_id, sessions, requests = one_history(args.corpus, args.persona, work)
        turns = sum(len(s) for s in sessions)
        print(
            f"history {history_id}: {len(sessions)} sessions, {turns} turns; "
            f"{len(requests)} probe requests"
        )
        embedder = MiniLMEmbedder()
        texts = [render_turns([t]) for s in sessions for t in s] + requests
        started = time.perf_counter()
        embedder.embed(texts)  # warms the process-wide cache; chunks texts are embedded below
        cold = time.perf_counter() - started
        warm = open_memory("chunks", work / "warm", None, "warm", embedder=embedder)
        started = time.perf_counter()
        ingest(warm, sessions)
        cold += time.perf_counter() - started
        recall_times(warm, requests, 1)
        print(f"embedding everything once (cold cache): {cold:.2f} s")

        started = time.perf_counter()
        with running_chroma_server(work / "server-db") as server:
            print(f"server ready (chroma run to heartbeat): {time.perf_counter() - started:.2f} s")
            backends = {"embedded": None, "server": server.url}
            for mode in MODES:
                for name, url in backends.items():
                    best = float("inf")
                    memory = None
                    for i in range(args.repeats):
                        home = work / f"{name}-{mode}-{i}"
                        memory = open_memory(mode, home, url, "bench", embedder=embedder)
                        best = min(best, ingest(memory, sessions))
                    assert memory is not None
                    times = recall_times(memory, requests, args.repeats)
                    print(
                        f"{mode:>8} {name:>9}: ingest {best * 1000:7.0f} ms "
                        f"({memory.count()} records), recall median "
                        f"{statistics.median(times) * 1000:6.1f} ms, "
                        f"p95 {p95(times) * 1000:6.1f} ms ({len(times)} calls)"
                    )


if __name__ == "__main__":
    main(sys.argv[1:])
