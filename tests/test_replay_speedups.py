"""What makes an offline replay fast must not change what it computes: one-thread and
multi-thread inference give the same vectors, a prefetch fills the cache with the vectors a
later call would have made, replay's in-process memory holds what the persistent one holds,
and a replay gives the same records with and without these."""

from __future__ import annotations

import json
import shutil
import threading
from contextlib import nullcontext
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agent import embeddings as emb
from agent.embeddings import MiniLMEmbedder
from agent.memory import documents_to_embed, in_process_memory, open_memory
from agent.settings import load_settings
from ledger.model import Turn
from scenarios import replay as replay_mod
from scenarios.replay import replay

CORPUS = Path(__file__).parent / "data" / "corpus_min"


def _texts(prefix: str, n: int) -> list[str]:
    return [f"{prefix} {i}: {'reorder the ink cartridges ' * (1 + i % 9)}please." for i in range(n)]


# -- embeddings ---------------------------------------------------------------------------


def test_one_thread_and_parallel_runs_give_the_same_vectors() -> None:
    texts = _texts("parallel check", 80)
    embedder = MiniLMEmbedder(use_cache=False)
    parallel = embedder.encode(texts)  # 64-text runs of long inputs: the parallel session
    single = embedder._encode(texts, parallel=False)
    one_by_one = np.stack([embedder._encode([t], parallel=False)[0] for t in texts[:10]])
    assert np.array_equal(parallel, single)
    assert np.array_equal(single[:10], one_by_one)


def test_prefetch_fills_the_cache_with_the_same_vectors() -> None:
    texts = _texts("prefetch fills", 12)
    expected = MiniLMEmbedder(use_cache=False).encode(texts)
    embedder = MiniLMEmbedder()
    embedder.prefetch(texts).result(timeout=60)
    before = emb.cache_info()
    got = embedder.embed_arrays(texts)
    assert emb.cache_info().hits == before.hits + len(texts)
    assert emb.cache_info().misses == before.misses
    assert all(np.array_equal(a, b) for a, b in zip(got, expected, strict=True))


def test_a_text_in_flight_is_awaited_not_embedded_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _texts("in flight", 6)
    started, go_on = threading.Event(), threading.Event()
    encoded: list[list[str]] = []
    real = MiniLMEmbedder._encode

    def slow(self: MiniLMEmbedder, batch: list[str], *, parallel: bool) -> Any:
        encoded.append(list(batch))
        if not parallel:  # the prefetch: hold it until the caller is waiting
            started.set()
            assert go_on.wait(30)
        return real(self, batch, parallel=parallel)

    monkeypatch.setattr(MiniLMEmbedder, "_encode", slow)
    embedder = MiniLMEmbedder()
    future = embedder.prefetch(texts)
    assert started.wait(30)
    threading.Timer(0.3, go_on.set).start()
    got = embedder.embed_arrays([texts[0], "a text nobody prefetched, embedded here"])
    future.result(timeout=60)
    assert encoded == [texts, ["a text nobody prefetched, embedded here"]]
    expected = MiniLMEmbedder(use_cache=False).encode([texts[0]])[0]
    assert np.array_equal(got[0], expected)


def test_a_failed_prefetch_leaves_the_work_to_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _texts("failed prefetch", 3)
    real = MiniLMEmbedder._encode

    def broken(self: MiniLMEmbedder, batch: list[str], *, parallel: bool) -> Any:
        if not parallel:
            raise RuntimeError("the background run broke")
        return real(self, batch, parallel=parallel)

    monkeypatch.setattr(MiniLMEmbedder, "_encode", broken)
    embedder = MiniLMEmbedder()
    with pytest.raises(RuntimeError, match="broke"):
        embedder.prefetch(texts).result(timeout=60)
    got = embedder.embed_arrays(texts)
    assert all(
        np.array_equal(a, b)
        for a, b in zip(got, MiniLMEmbedder(use_cache=False).encode(texts), strict=True)
    )


def test_prefetch_without_the_cache_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("nothing should be embedded")

    monkeypatch.setattr(MiniLMEmbedder, "_encode", never)
    assert MiniLMEmbedder(use_cache=False).prefetch(["x"]).result(timeout=5) is None
    assert MiniLMEmbedder().prefetch([]).result(timeout=5) is None


# -- memory ---------------------------------------------------------------------------------


def _session(sid: str, day: date) -> list[Turn]:
    # Texts differ from session to session: Chroma breaks exact ties in no fixed order.
    said = [
        ("user", f"We're almost out of printer ink ({sid})."),
        ("assistant", f"I ordered the usual cartridges for {sid}. Should I always reorder those?"),
        ("user", f"Yes, always the same ones, {sid} included."),
        ("assistant", f"Done with {sid}."),
    ]
    return [
        Turn(session_id=sid, session_date=day, index=i, speaker=speaker, text=text)  # type: ignore[arg-type]
        for i, (speaker, text) in enumerate(said)
    ]


def test_documents_to_embed_are_the_documents_chunks_memory_stores(tmp_path: Path) -> None:
    turns = _session("s1", date(2026, 3, 2)) + _session("s2", date(2026, 3, 9))
    memory = open_memory("chunks", tmp_path, None, "docs")
    memory.add_session(turns)
    stored = [item.text for item in memory.all_items()]
    assert documents_to_embed("chunks", turns) == stored
    assert documents_to_embed("history", turns) == []
    assert documents_to_embed("none", turns) == []


def test_in_process_memory_keeps_nothing_on_disk_and_stays_apart(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    with in_process_memory(a), in_process_memory(b):
        first = open_memory("chunks", a, None, "h-same")
        second = open_memory("chunks", b, None, "h-same")
    session = _session("s1", date(2026, 3, 2))
    first.add_session(session)
    # One name, two directories: apart.
    assert first.count() == len(documents_to_embed("chunks", session)) and second.count() == 0
    hit = first.recall("printer ink", k=1)[0]
    assert "cartridges" in hit.text
    assert not (a / "chroma").exists() and not (b / "chroma").exists()
    first.drop()
    second.drop()
    persistent = open_memory("chunks", tmp_path / "c", None, "h-same")  # outside the block
    assert (tmp_path / "c" / "chroma").is_dir() and persistent.count() == 0


@pytest.mark.parametrize("mode", ["history", "chunks"])
def test_private_memory_reads_what_a_shared_one_reads(tmp_path: Path, mode: str) -> None:
    shared = open_memory(mode, tmp_path / "shared", None, "same")
    with in_process_memory(tmp_path / "private"):
        private = open_memory(mode, tmp_path / "private", None, "same")
    assert private.private and not shared.private

    def seen(memory: Any) -> tuple[Any, ...]:
        items = [(i.id, i.text, i.session_id) for i in memory.all_items()]
        recalled = [(i.id, i.text) for i in memory.recall("printer ink cartridges", k=3)]
        return memory.count(), items, recalled

    steps = [
        _session("s1", date(2026, 3, 2)),
        _session("s2", date(2026, 3, 2)),  # same day: the order of arrival decides
        _session("s1", date(2026, 3, 2))[:2],  # a session again: it keeps its place
        _session("s0", date(2026, 2, 1)),
    ]
    for turns in steps:
        shared.add_session(turns)
        private.add_session(turns)
        assert seen(private) == seen(shared)
        assert seen(private) == seen(shared)  # read again: from what was kept
    private.clear()
    assert private.count() == 0 and private.all_items() == []
    private.drop()
    shared.drop()


# -- replay ---------------------------------------------------------------------------------


def _records(run: Path) -> list[dict[str, Any]]:
    out = []
    for line in (run / "trajectories.jsonl").read_text().splitlines():
        record = json.loads(line)
        record.pop("seconds")
        out.append(record)
    return out


def test_replay_records_are_the_same_without_the_speedups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings({"memory": "chunks", "gl": True})
    emb.cache_clear()
    replay(CORPUS, tmp_path / "fast", settings)
    fast = (tmp_path / "fast" / "metrics.json").read_text()

    emb.cache_clear()
    monkeypatch.setattr(replay_mod, "in_process_memory", lambda home: nullcontext())
    monkeypatch.setattr(replay_mod, "texts_to_embed", lambda *args: ([], []))
    monkeypatch.setattr(replay_mod, "documents_to_embed", lambda *args: [])
    monkeypatch.setattr(emb, "INTRA_OP_THREADS", 1)
    replay(CORPUS, tmp_path / "plain", settings)

    assert _records(tmp_path / "fast") == _records(tmp_path / "plain")
    assert fast == (tmp_path / "plain" / "metrics.json").read_text()
    assert list((tmp_path / "plain").glob("work-*")) == []


def test_replay_takes_the_corpus_already_loaded_only_from_its_own_path(tmp_path: Path) -> None:
    from scenarios.loader import load_corpus

    copy = tmp_path / "corpus"
    shutil.copytree(CORPUS, copy)
    settings = load_settings({"memory": "none", "gl": False})
    with pytest.raises(ValueError, match="loaded from"):
        replay(CORPUS, tmp_path / "run", settings, corpus=load_corpus(copy), limit=1)
    replay(copy, tmp_path / "run", settings, corpus=load_corpus(copy), limit=1)
    assert (tmp_path / "run" / "metrics.json").is_file()
