"""The agent's memory, in four modes over Chroma.

- ``none``: remembers nothing.
- ``history``: the raw transcript; recall returns the most recent turns that
  fit the token budget.
- ``chunks``: speaker-aware exchanges (an assistant turn with the user's
  reply), recalled by cosine similarity.
- ``facts``: distilled facts maintained by an injected writer (add, update,
  delete), recalled by cosine similarity.

Every text keeps who said what ("User: ...\\nAssistant: ..."), so that a
proposal the user never took up does not read as the user's own words.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, cast
from urllib.parse import urlsplit

import chromadb
import numpy as np
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.api.types import Embeddable, EmbeddingFunction, GetResult
from chromadb.config import Settings
from chromadb.errors import ChromaError

from agent.embeddings import MiniLMEmbedder, MiniLMEmbeddingFunction
from agent.settings import SettingsError
from agent.storage import MemoryIndexError, check_memory_files
from ledger.model import Turn

__all__ = [
    "ChromaUnreachable",
    "FactOp",
    "FactsWriter",
    "Memory",
    "MemoryItem",
    "MemoryMode",
    "MemoryModeUnavailable",
    "approx_tokens",
    "documents_to_embed",
    "exchanges",
    "fact_id",
    "in_process_memory",
    "open_memory",
    "render_turns",
    "sanitize_collection_name",
]

TOKENS_PER_WORD = 1.3
_RELATED_FACTS = 50
_SPEAKER_LABEL = {"user": "User", "assistant": "Assistant"}


class MemoryMode(StrEnum):
    """Which memory the agent keeps."""

    none = "none"
    history = "history"
    chunks = "chunks"
    facts = "facts"


class MemoryModeUnavailable(RuntimeError):
    """The memory mode cannot run with the current configuration."""


class ChromaUnreachable(SettingsError):
    """No Chroma server answers at the configured ``chroma_url``.

    A :class:`SettingsError`, so the command line prints its one line and exits 2.
    """


@dataclass
class MemoryItem:
    """One recalled unit: an exchange, a transcript turn or a fact."""

    text: str
    session_id: str
    session_date: date
    speakers: list[str]
    turns: list[Turn]
    score: float | None
    kind: Literal["exchange", "turn", "fact"]
    id: str = ""


@dataclass(frozen=True)
class FactOp:
    """One edit a facts writer asks for.

    ``add`` needs ``text`` (``id`` optional: derived from the text);
    ``update`` needs ``id`` and ``text``; ``delete`` needs ``id``; ``none``
    changes nothing. ``turn_indexes`` cite the turns of the session being
    written that support the fact (its evidence).
    """

    op: Literal["add", "update", "delete", "none"]
    text: str = ""
    id: str | None = None
    turn_indexes: tuple[int, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.op not in ("add", "update", "delete", "none"):
            raise ValueError(f"unknown fact op {self.op!r}")
        if self.op in ("add", "update") and not self.text.strip():
            raise ValueError(f"fact op {self.op!r} needs a text")
        if self.op in ("update", "delete") and not self.id:
            raise ValueError(f"fact op {self.op!r} needs the id of an existing fact")


#: Reads one session's turns and the related stored facts; returns the edits.
FactsWriter = Callable[[list[Turn], list[MemoryItem]], list[FactOp]]


# -- helpers -------------------------------------------------------------------


def approx_tokens(text: str) -> int:
    """Approximate token count: words times 1.3, rounded up."""
    return math.ceil(len(text.split()) * TOKENS_PER_WORD)


def render_turns(turns: Sequence[Turn]) -> str:
    """Turns as ``"User: ...\\nAssistant: ..."`` in the given order."""
    return "\n".join(f"{_SPEAKER_LABEL[t.speaker]}: {t.text}" for t in turns)


def exchanges(turns: Sequence[Turn]) -> list[list[Turn]]:
    """Split one session into exchange chunks, in turn order.

    Each assistant turn goes with the user turn that follows it (a proposal
    and its uptake); a user turn no assistant turn precedes (the session's
    opening request) goes with the assistant's reply. Every turn is in at
    least one chunk; chunk starts are distinct.
    """
    ordered = sorted(turns, key=lambda t: t.index)
    chunks: list[list[Turn]] = []
    for i, turn in enumerate(ordered):
        nxt = ordered[i + 1] if i + 1 < len(ordered) else None
        if turn.speaker == "assistant":
            chunk = [turn] + ([nxt] if nxt is not None and nxt.speaker == "user" else [])
            chunks.append(chunk)
        elif i == 0 or ordered[i - 1].speaker != "assistant":
            chunk = [turn] + ([nxt] if nxt is not None and nxt.speaker == "assistant" else [])
            chunks.append(chunk)
    return chunks


def documents_to_embed(mode: MemoryMode | str, turns: Sequence[Turn]) -> list[str]:
    """The texts `Memory.add_session` embeds for these turns in ``mode``, in order.

    Chunks: each session's exchanges. The transcript is never embedded and facts
    come from the writer, so other modes give none. Lets a caller embed a whole
    history ahead of time (one batch, or in the background) into the embedding cache.
    """
    if MemoryMode(mode) is not MemoryMode.chunks:
        return []
    return [render_turns(c) for session in _by_session(turns) for c in exchanges(session)]


def fact_id(text: str) -> str:
    """A deterministic id for a fact text (the same fact added twice is one fact)."""
    normalised = " ".join(text.lower().split())
    return "fact-" + hashlib.sha256(normalised.encode()).hexdigest()[:16]


_INVALID = re.compile(r"[^A-Za-z0-9._-]+")
_IPV4 = re.compile(r"^\d{1,3}(\.\d{1,3}){3}$")


def sanitize_collection_name(name: str) -> str:
    """A valid Chroma collection name close to ``name``.

    Chroma wants 3-512 characters of ``[A-Za-z0-9._-]``, starting and ending
    with an alphanumeric, no ``..`` and not an IPv4 address.
    """
    cleaned = _INVALID.sub("-", name)
    cleaned = re.sub(r"\.{2,}", ".", cleaned)
    cleaned = re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", cleaned)
    if not cleaned:
        cleaned = "memory"
    if _IPV4.match(cleaned):
        cleaned = "c-" + cleaned
    if len(cleaned) < 3:
        cleaned = f"{cleaned}-mem"
    if len(cleaned) > 512:
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        head = re.sub(r"[^A-Za-z0-9]+$", "", cleaned[:503])
        cleaned = f"{head}-{digest}"
    return cleaned


def _turns_from_metadata(meta: Mapping[str, Any]) -> list[Turn]:
    indexes = cast(list[int], meta.get("turn_indexes") or [])
    speakers = cast(list[str], meta.get("speakers") or [])
    texts = cast(list[str], meta.get("texts") or [])
    day = date.fromisoformat(str(meta["session_date"]))
    return [
        Turn(
            session_id=str(meta["session_id"]),
            session_date=day,
            index=int(i),
            speaker=cast(Literal["user", "assistant"], s),
            text=str(x),
        )
        for i, s, x in zip(indexes, speakers, texts, strict=True)
    ]


def _turns_metadata(turns: Sequence[Turn]) -> dict[str, Any]:
    # Chroma refuses empty lists as metadata values: leave the keys out.
    if not turns:
        return {}
    return {
        "turn_indexes": [t.index for t in turns],
        "speakers": [t.speaker for t in turns],
        "texts": [t.text for t in turns],
    }


def _by_session(turns: Sequence[Turn]) -> list[list[Turn]]:
    groups: dict[str, list[Turn]] = {}
    for turn in turns:
        groups.setdefault(turn.session_id, []).append(turn)
    return [sorted(group, key=lambda t: t.index) for group in groups.values()]


# -- the memory ----------------------------------------------------------------


class Memory:
    """One memory mode over one Chroma collection.

    Args:
        mode: The memory mode.
        client: A Chroma client (unused, and may be ``None``, in mode ``none``).
        collection_name: Sanitised into a valid Chroma name; one collection
            per mode.
        embedder: Shared embedder (default: a new :class:`MiniLMEmbedder`).
        facts_writer: Required to *write* in mode ``facts``.
        private: Nothing but this object writes the collection (an in-process
            Chroma): what it reads whole (every item, the count, session order)
            is kept until it writes.
    """

    def __init__(
        self,
        mode: MemoryMode | str,
        client: ClientAPI | None,
        collection_name: str,
        embedder: MiniLMEmbedder | None = None,
        *,
        facts_writer: FactsWriter | None = None,
        private: bool = False,
    ) -> None:
        self.mode = MemoryMode(mode)
        self.client = client
        self.collection_name = sanitize_collection_name(collection_name)
        self.embedder = embedder or MiniLMEmbedder()
        self.facts_writer = facts_writer
        self.private = private
        self._lock = threading.RLock()
        # Kept only when private, dropped on every write.
        self._items: tuple[MemoryItem, ...] | None = None
        self._count: int | None = None
        self._seqs: dict[str, int] | None = None  # history: session id -> session_seq
        self._collection: Collection | None = None
        if self.mode is not MemoryMode.none:
            if client is None:
                raise ValueError(f"memory mode {self.mode} needs a Chroma client")
            self._collection = self._open_collection()

    # -- collection --------------------------------------------------------

    def _open_collection(self) -> Collection:
        assert self.client is not None
        metadata = {"grounding_memory_mode": self.mode.value}
        if self.mode is MemoryMode.history:
            # The transcript is read by recency, never by similarity: store a
            # constant one-dimensional vector instead of embedding every turn.
            collection = self.client.get_or_create_collection(
                self.collection_name,
                embedding_function=None,
                configuration={"hnsw": {"space": "l2"}},
                metadata=metadata,
            )
        else:
            collection = self.client.get_or_create_collection(
                self.collection_name,
                # Chroma's parameter type is invariant in the input type.
                embedding_function=cast(
                    "EmbeddingFunction[Embeddable]", MiniLMEmbeddingFunction(self.embedder)
                ),
                configuration={"hnsw": {"space": "cosine"}},
                metadata=metadata,
            )
        stored = (collection.metadata or {}).get("grounding_memory_mode")
        if stored is not None and stored != self.mode.value:
            raise ValueError(
                f"collection {self.collection_name!r} holds {stored} memory, not {self.mode}"
            )
        return collection

    @property
    def collection(self) -> Collection:
        """The Chroma collection (not in mode ``none``)."""
        if self._collection is None:
            if self.mode is MemoryMode.none:
                raise MemoryModeUnavailable("memory mode none has no collection")
            raise MemoryModeUnavailable(f"collection {self.collection_name!r} was dropped")
        return self._collection

    # -- writing -----------------------------------------------------------

    def add_session(self, turns: list[Turn]) -> None:
        """Remember a session's turns (several sessions' turns are grouped).

        Re-adding the same turns changes nothing (records are upserted under
        deterministic ids).
        """
        if self.mode is MemoryMode.none or not turns:
            return
        if self.mode is MemoryMode.facts and self.facts_writer is None:
            raise MemoryModeUnavailable(
                "facts memory needs a real model: set --model to an LLM "
                "(or choose --memory chunks or history)"
            )
        with self._lock:
            for session in _by_session(turns):
                try:
                    if self.mode is MemoryMode.history:
                        self._add_history(session)
                    elif self.mode is MemoryMode.chunks:
                        self._add_chunks(session)
                    else:
                        self._add_facts(session)
                finally:
                    self._forget_reads()

    def _forget_reads(self) -> None:
        """Drop what was kept of earlier reads (after a write)."""
        self._items = None
        self._count = None

    def _session_seq(self, sid: str) -> int:
        """The session's place in the transcript: its own if stored, else after the last."""
        if self.private:
            if self._seqs is None:
                everything = self.collection.get(include=["metadatas"])
                self._seqs = {}
                for m in everything["metadatas"] or []:
                    self._seqs.setdefault(str(m["session_id"]), int(cast(int, m["session_seq"])))
            if sid in self._seqs:
                return self._seqs[sid]
            return max(self._seqs.values(), default=-1) + 1
        existing = self.collection.get(where={"session_id": sid}, limit=1, include=["metadatas"])
        if existing["metadatas"]:
            return int(cast(int, existing["metadatas"][0]["session_seq"]))
        everything = self.collection.get(include=["metadatas"])
        seqs = [int(cast(int, m["session_seq"])) for m in everything["metadatas"] or []]
        return max(seqs, default=-1) + 1

    def _add_history(self, session: list[Turn]) -> None:
        seq = self._session_seq(session[0].session_id)
        self.collection.upsert(
            ids=[f"{t.session_id}:{t.index}" for t in session],
            documents=[render_turns([t]) for t in session],
            embeddings=np.zeros((len(session), 1), dtype=np.float32),
            metadatas=[
                {
                    "kind": "turn",
                    "session_id": t.session_id,
                    "session_date": t.session_date.isoformat(),
                    "session_seq": seq,
                    "index": t.index,
                    **_turns_metadata([t]),
                }
                for t in session
            ],
        )
        if self._seqs is not None:
            self._seqs[session[0].session_id] = seq

    def _add_chunks(self, session: list[Turn]) -> None:
        chunks = exchanges(session)
        self.collection.upsert(
            ids=[f"{c[0].session_id}:{c[0].index}" for c in chunks],
            documents=[render_turns(c) for c in chunks],  # as documents_to_embed
            metadatas=[
                {
                    "kind": "exchange",
                    "session_id": c[0].session_id,
                    "session_date": c[0].session_date.isoformat(),
                    "first_index": c[0].index,
                    **_turns_metadata(c),
                }
                for c in chunks
            ],
        )

    def _add_facts(self, session: list[Turn]) -> None:
        assert self.facts_writer is not None
        related = self._related_facts(session)
        ops = self.facts_writer(list(session), related)
        by_index = {t.index: t for t in session}
        known = {item.id for item in related}
        for op in ops:
            if op.op == "none":
                continue
            if op.op == "delete":
                assert op.id is not None
                self.collection.delete(ids=[op.id])
                continue
            fid = op.id if op.id else fact_id(op.text)
            if op.op == "update" and fid not in known and not self._exists(fid):
                # A writer (an LLM) may cite an id that does not exist: keep the fact.
                fid = fact_id(op.text)
            evidence = [by_index[i] for i in op.turn_indexes if i in by_index]
            # Upsert merges metadata keys: drop the old record so that stale
            # evidence does not outlive the text it supported.
            self.collection.delete(ids=[fid])
            self.collection.add(
                ids=[fid],
                documents=[op.text.strip()],
                metadatas=[
                    {
                        "kind": "fact",
                        "session_id": session[0].session_id,
                        "session_date": session[0].session_date.isoformat(),
                        **_turns_metadata(evidence),
                    }
                ],
            )

    def _exists(self, item_id: str) -> bool:
        return bool(self.collection.get(ids=[item_id], include=[])["ids"])

    def _related_facts(self, session: list[Turn]) -> list[MemoryItem]:
        total = self.collection.count()
        if total == 0:
            return []
        if total <= _RELATED_FACTS:
            return self.all_items()
        return self._query(render_turns(session), _RELATED_FACTS)

    # -- reading -----------------------------------------------------------

    def recall(self, query: str, k: int = 5, token_budget: int = 1500) -> list[MemoryItem]:
        """What the memory offers for ``query``.

        history: the most recent turns that fit ``token_budget`` (``k`` is
        not used), in chronological order. chunks and facts: the top ``k`` by
        cosine similarity, best first, cut to ``token_budget`` (the best item
        is always kept).
        """
        if self.mode is MemoryMode.none:
            return []
        with self._lock:
            if self.mode is MemoryMode.history:
                recent: list[MemoryItem] = []
                used = 0
                for item in reversed(self.all_items()):
                    cost = approx_tokens(item.text)
                    if used + cost > token_budget:
                        break
                    recent.append(item)
                    used += cost
                return recent[::-1]
            if k < 1:
                return []
            ranked = self._query(query, k)
        kept: list[MemoryItem] = []
        used = 0
        for item in ranked:
            cost = approx_tokens(item.text)
            if kept and used + cost > token_budget:
                break
            kept.append(item)
            used += cost
        return kept

    def _query(self, text: str, k: int) -> list[MemoryItem]:
        total = self.count()
        if total == 0:
            return []
        result = self.collection.query(
            query_texts=[text],
            n_results=min(k, total),
            include=["documents", "metadatas", "distances"],
        )
        ids = result["ids"][0]
        documents = (result["documents"] or [[]])[0]
        metadatas = (result["metadatas"] or [[]])[0]
        distances = (result["distances"] or [[]])[0]
        return [
            self._item(i, doc, meta, 1.0 - float(dist))
            for i, doc, meta, dist in zip(ids, documents, metadatas, distances, strict=True)
        ]

    def _item(
        self, item_id: str, document: str | None, meta: Mapping[str, Any], score: float | None
    ) -> MemoryItem:
        turns = _turns_from_metadata(meta)
        kind = cast(Literal["exchange", "turn", "fact"], meta.get("kind", "exchange"))
        return MemoryItem(
            text=document or "",
            session_id=str(meta["session_id"]),
            session_date=date.fromisoformat(str(meta["session_date"])),
            speakers=[t.speaker for t in turns],
            turns=turns,
            score=score,
            kind=kind,
            id=item_id,
        )

    def all_items(self) -> list[MemoryItem]:
        """Everything stored, in chronological order (facts: by source session)."""
        if self.mode is MemoryMode.none:
            return []
        with self._lock:
            if self._items is not None:
                return list(self._items)
            result = self.collection.get(include=["documents", "metadatas"])
            items = self._in_order(result)
            if self.private:
                self._items = tuple(items)
        return items

    def _in_order(self, result: GetResult) -> list[MemoryItem]:
        documents = result["documents"] or []
        metadatas = result["metadatas"] or []
        rows = list(zip(result["ids"], documents, metadatas, strict=True))

        def order(row: tuple[str, str | None, Mapping[str, Any]]) -> tuple[Any, ...]:
            item_id, _, meta = row
            position = meta.get("index", meta.get("first_index", 0))
            return (
                str(meta["session_date"]),
                int(cast(int, meta.get("session_seq", 0))),
                str(meta["session_id"]),
                int(cast(int, position)),
                item_id,
            )

        rows.sort(key=order)
        return [self._item(i, doc, meta, None) for i, doc, meta in rows]

    def count(self) -> int:
        """Number of stored records (turns, exchanges or facts)."""
        if self.mode is MemoryMode.none:
            return 0
        with self._lock:
            if self._count is not None:
                return self._count
            total = self.collection.count()
            if self.private:
                self._count = total
            return total

    def clear(self) -> None:
        """Forget everything this memory holds."""
        if self.mode is MemoryMode.none:
            return
        assert self.client is not None
        with self._lock:
            self._forget_reads()
            self._seqs = None
            self.client.delete_collection(self.collection_name)
            self._collection = self._open_collection()

    def drop(self) -> None:
        """Delete the collection for good (a replay history's throwaway memory).

        A Chroma server keeps collections after the local work directory is
        gone; the memory cannot be used afterwards.
        """
        if self.mode is MemoryMode.none or self._collection is None:
            return
        assert self.client is not None
        with self._lock:
            self._forget_reads()
            self._seqs = None
            self.client.delete_collection(self.collection_name)
            self._collection = None


# -- factory -------------------------------------------------------------------


def _server_url(chroma_url: str) -> tuple[str, int, bool]:
    parts = urlsplit(chroma_url if "://" in chroma_url else f"http://{chroma_url}")
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
        raise SettingsError(f"chroma_url: must look like http://host:port, got {chroma_url!r}")
    ssl = parts.scheme == "https"
    return parts.hostname, port or (443 if ssl else 8000), ssl


_in_process_lock = threading.Lock()
_in_process_dirs: dict[Path, int] = {}  # data dir -> how many blocks marked it


@contextmanager
def in_process_memory(data_dir: Path) -> Iterator[None]:
    """Within the block, memory opened for ``data_dir`` lives in this process only.

    For throwaway profiles (a replay history's, deleted when it is done): an in-memory
    Chroma instead of index files under ``data_dir``, which the persistent client
    syncs to disk on every write (about 25 ms a session). The collection name carries
    the directory's :func:`memory_id`, so it never meets another directory's. Memory
    on a Chroma server (``chroma_url``) is unaffected.
    """
    key = Path(data_dir).resolve()
    with _in_process_lock:
        _in_process_dirs[key] = _in_process_dirs.get(key, 0) + 1
    try:
        yield
    finally:
        with _in_process_lock:
            _in_process_dirs[key] -= 1
            if not _in_process_dirs[key]:
                del _in_process_dirs[key]


def _in_process(data_dir: Path | None, chroma_url: str | None) -> bool:
    if chroma_url or data_dir is None:
        return False
    with _in_process_lock:
        return Path(data_dir).resolve() in _in_process_dirs


def _client(data_dir: Path | None, chroma_url: str | None) -> ClientAPI:
    settings = Settings(anonymized_telemetry=False)
    if _in_process(data_dir, chroma_url):
        return chromadb.EphemeralClient(settings=settings)
    if chroma_url:
        host, port, ssl = _server_url(chroma_url)
        try:
            # The client asks the server for its tenant on construction.
            return chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=settings)
        except Exception as exc:
            hint = f"start one with `chroma run --path DIR --port {port}`"
            reason = " ".join(str(exc).split())[:200]
            if "Could not connect" in reason:  # chromadb's wording for a refused connection
                message = f"chroma_url: cannot reach a Chroma server at {chroma_url}; {hint}"
            else:
                message = (
                    f"chroma_url: {chroma_url} did not answer as a Chroma server "
                    f"({type(exc).__name__}: {reason}); {hint}"
                )
            raise ChromaUnreachable(message) from exc
    if data_dir is None:
        raise ValueError("memory needs a data directory or a Chroma server URL")
    path = Path(data_dir) / "chroma"
    check_memory_files(path)
    path.mkdir(parents=True, exist_ok=True)
    try:
        return chromadb.PersistentClient(path=str(path), settings=settings)
    except ChromaError as exc:
        raise MemoryIndexError(path, str(exc)) from exc


MEMORY_ID_FILE = "memory-id"


def memory_id(data_dir: Path) -> str:
    """The random id of the memory kept for ``data_dir`` on a Chroma server.

    Created on first use and stored in the directory: collections of two
    profiles (or two replay runs) with the same name never meet on one
    server, and a profile moved to another path keeps its memory.
    """
    path = Path(data_dir) / MEMORY_ID_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        # Written aside and linked into place: a concurrent reader never sees
        # a half-written file, and the first of two writers wins.
        value = uuid.uuid4().hex[:12]
        tmp = path.with_name(f".{MEMORY_ID_FILE}.{os.getpid()}.{value}")
        tmp.write_text(value + "\n", encoding="utf-8")
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    value = path.read_text(encoding="utf-8").strip()
    if not re.fullmatch(r"[0-9a-f]{12}", value):
        raise ValueError(f"{path}: not a memory id (12 hex digits): {value[:40]!r}")
    return value


def collection_name(
    namespace: str, mode: MemoryMode | str, data_dir: Path | None, chroma_url: str | None
) -> str:
    """The Chroma collection of ``namespace`` in ``mode``.

    Embedded, the directory already separates profiles: ``{namespace}-{mode}``.
    On a server shared by every profile and run, and in the one in-memory Chroma a
    process shares (:func:`in_process_memory`), the data directory's :func:`memory_id`
    is appended.
    """
    name = f"{namespace}-{MemoryMode(mode).value}"
    if data_dir is not None and (chroma_url or _in_process(data_dir, chroma_url)):
        name = f"{name}-{memory_id(data_dir)}"
    return name


def open_memory(
    mode: MemoryMode | str,
    data_dir: Path | None,
    chroma_url: str | None,
    namespace: str,
    *,
    embedder: MiniLMEmbedder | None = None,
    facts_writer: FactsWriter | None = None,
) -> Memory:
    """Open the memory for ``mode`` in ``namespace`` (a profile or a history).

    Uses a Chroma server when ``chroma_url`` ("http://host:port") is given,
    otherwise a persistent client under ``data_dir / "chroma"`` (an in-memory one
    inside :func:`in_process_memory` for ``data_dir``). Mode
    ``none`` opens no client at all. Raises :class:`ChromaUnreachable` when
    no server answers at ``chroma_url``, :class:`~agent.storage.MemoryIndexError`
    when the local index cannot be read.
    """
    mode = MemoryMode(mode)
    if mode is MemoryMode.none:
        return Memory(mode, None, f"{namespace}-{mode.value}", embedder)
    client = _client(data_dir, chroma_url)
    name = collection_name(namespace, mode, data_dir, chroma_url)
    if _in_process(data_dir, chroma_url):
        # Nothing outside this object can reach an in-process collection: keep reads.
        return Memory(mode, client, name, embedder, facts_writer=facts_writer, private=True)
    if chroma_url or data_dir is None:
        return Memory(mode, client, name, embedder, facts_writer=facts_writer)
    try:
        memory = Memory(mode, client, name, embedder, facts_writer=facts_writer)
        memory.count()  # loads the index: damage shows now, not in the middle of a turn
    except ChromaError as exc:
        close = getattr(client, "close", None)
        if close is not None:
            close()  # drop Chroma's per-path cache, so a reopen after recovery starts clean
        raise MemoryIndexError(Path(data_dir) / "chroma", str(exc)) from exc
    return memory
