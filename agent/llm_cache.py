"""An application-level cache of model responses in SQLite.

litellm's own caches are no use here (no disk cache in 1.110, and a cache hit
on a plain install needs fastapi): see RECIPES.md. Keys are the sha256 of the
canonical JSON of everything that decides the answer; values are the response
as a JSON object. WAL and a busy timeout make one file safe for several
processes (`grounding replay --jobs N`).

The cache only saves time: when its file is locked by another process for longer
than the busy timeout, damaged or on a full disk, it logs one warning and turns
itself off for the rest of the run instead of failing a turn.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["ResponseCache"]

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""


class ResponseCache:
    """Model responses keyed by a hash of (model, messages, tools, params)."""

    def __init__(self, path: Path, busy_timeout: float = 5.0) -> None:
        self.path = Path(path)
        self.disabled: str | None = None  # why the cache turned itself off, if it did
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                str(self.path), timeout=busy_timeout, check_same_thread=False, isolation_level=None
            )
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute(_SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            self._disable(exc)

    def _disable(self, exc: Exception) -> None:
        """Turn the cache off for this run, with one warning that names the file."""
        self.disabled = f"{type(exc).__name__}: {exc}"
        log.warning("LLM cache %s is unavailable (%s); continuing without caching", self.path, exc)
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None

    @staticmethod
    def key_for(
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        params: dict[str, Any] | None = None,
    ) -> str:
        """The sha256 of the canonical JSON of everything that decides the answer."""
        payload = {"model": model, "messages": messages, "tools": tools, "params": params or {}}
        canonical = json.dumps(
            payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response, or None (also for an unreadable entry or cache)."""
        with self._lock:
            if self._conn is None:
                return None
            try:
                row = self._conn.execute(
                    "SELECT response FROM responses WHERE key = ?", (key,)
                ).fetchone()
            except sqlite3.Error as exc:
                self._disable(exc)
                return None
        if row is None:
            return None
        try:
            value = json.loads(row[0])
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, response: dict[str, Any], model: str = "") -> None:
        """Store (or replace) a response; a no-op once the cache is off."""
        text = json.dumps(response, ensure_ascii=False, default=str)
        with self._lock:
            if self._conn is None:
                return
            try:
                self._conn.execute(
                    "INSERT OR REPLACE INTO responses (key, model, response, created) "
                    "VALUES (?, ?, ?, ?)",
                    (key, model, text, time.time()),
                )
            except sqlite3.Error as exc:
                self._disable(exc)

    def __len__(self) -> int:
        with self._lock:
            if self._conn is None:
                return 0
            row = self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(row[0])

    def clear(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.execute("DELETE FROM responses")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
