"""Embedding throughput by batch size, and Chroma add/query timings for 1,000 chunks.

Usage: .venv/bin/python bench/bench_embeddings.py [SENTENCES]
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent import embeddings  # noqa: E402  (sets the offline switches first)
from agent.embeddings import MiniLMEmbedder, MiniLMEmbeddingFunction  # noqa: E402

SUBJECTS = ["I", "My sister", "The team", "Our landlord", "Dr. Patel", "You", "The assistant"]
VERBS = ["booked", "cancelled", "asked about", "paid for", "forgot", "rescheduled", "confirmed"]
OBJECTS = [
    "the dinner on Friday",
    "two tickets to the jazz concert",
    "a kilo of coffee beans",
    "the dentist appointment",
    "the quarterly tax return",
    "the flight to Lisbon next month",
    "a birthday present for Sam",
    "the team offsite in the mountains",
]
TAILS = [
    "",
    " because the calendar was free",
    " but only if it stays under 30 euros",
    " and sent a note to everyone on the list",
    ", although nobody had agreed to it yet, so we should probably double-check first",
    " after a long discussion about budgets, travel times, who would drive, and whether "
    "the restaurant could seat twelve people on a weekday evening",
]


def sentences(n: int, seed: int = 7) -> list[str]:
    """``n`` distinct, varied sentences (5 to 45 words)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        text = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}"
        out.append(f"{text}{rng.choice(TAILS)} (note {i}).")
    return out


def throughput(texts: list[str], batch_size: int, repeats: int = 2) -> float:
    """Best-of sentences per second, without the cache."""
    embedder = MiniLMEmbedder(batch_size=batch_size, use_cache=False)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        embedder.encode(texts)
        best = min(best, time.perf_counter() - started)
    return len(texts) / best


def chroma_timings(texts: list[str]) -> None:
    import chromadb
    from chromadb.config import Settings

    queries = sentences(100, seed=99)
    with tempfile.TemporaryDirectory() as tmp:
        client = chromadb.PersistentClient(path=tmp, settings=Settings(anonymized_telemetry=False))
        embeddings.cache_clear()
        for label in ("cold cache", "warm cache"):
            col = client.create_collection(
                f"bench-{label.split()[0]}",
                embedding_function=MiniLMEmbeddingFunction(),  # type: ignore[arg-type]
                configuration={"hnsw": {"space": "cosine"}},
            )
            started = time.perf_counter()
            col.add(ids=[f"c{i}" for i in range(len(texts))], documents=texts)
            print(
                f"chroma add {len(texts)} chunks ({label}): {time.perf_counter() - started:.2f} s"
            )
        times = []
        for q in queries:
            started = time.perf_counter()
            col.query(query_texts=[q], n_results=5)
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        print(
            f"chroma query top-5 over {len(texts)} (embedding included, {len(queries)} queries): "
            f"median {statistics.median(times):.1f} ms, p95 {times[int(0.95 * len(times))]:.1f} ms"
        )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    texts = sentences(n)
    words = [len(t.split()) for t in texts]
    print(f"{n} sentences, {min(words)}-{max(words)} words (mean {statistics.mean(words):.1f})")

    started = time.perf_counter()
    MiniLMEmbedder().load()
    print(f"verify + load model: {time.perf_counter() - started:.2f} s")

    for batch_size in (1, 16, 64):
        print(f"batch {batch_size:>2}: {throughput(texts, batch_size):7.0f} sentences/s")

    embedder = MiniLMEmbedder()
    embedder.embed(texts)
    started = time.perf_counter()
    embedder.embed(texts)
    print(f"cached:   {n / (time.perf_counter() - started):7.0f} sentences/s")

    chroma_timings(texts)
    print(f"cache: {embeddings.cache_info()}")


if __name__ == "__main__":
    main()
