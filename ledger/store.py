"""The ledger's SQLite store: an append-only event log and a current view built from it.

One file per profile, in WAL mode with ``synchronous=FULL``. Every call to
:meth:`LedgerStore.apply` is one ``BEGIN IMMEDIATE ... COMMIT`` transaction, so a
crash leaves either the whole batch or none of it. The ``current`` table is kept by
a trigger on ``events``: it cannot drift from the log, and "what had we agreed as
of session N" is a SQL query over the log (:meth:`LedgerStore.as_of`).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from types import TracebackType
from typing import Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter

from ledger.model import Arrangement, Evidence, Status

__all__ = ["SCHEMA_VERSION", "Change", "LedgerEvent", "LedgerStore", "LedgerStoreError"]

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
# Written into the SQLite header so another program's database is never mistaken for ours.
APPLICATION_ID = 0x4C444752  # "LDGR"

Op = Literal["create", "update"]

_EVIDENCE = TypeAdapter(list[Evidence])

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id       TEXT NOT NULL,
    op             TEXT NOT NULL CHECK (op IN ('create', 'update')),
    json           TEXT NOT NULL,
    status         TEXT NOT NULL,
    action_type    TEXT NOT NULL,
    reason         TEXT NOT NULL,
    writer         TEXT NOT NULL,
    session_id     TEXT,
    session_date   TEXT,
    effective_date TEXT NOT NULL,
    evidence       TEXT NOT NULL,
    recorded_at    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_entry ON events (entry_id, seq);
CREATE INDEX IF NOT EXISTS events_date ON events (effective_date, seq);
CREATE INDEX IF NOT EXISTS events_session ON events (session_id, seq);
CREATE TABLE IF NOT EXISTS current (
    entry_id    TEXT PRIMARY KEY,
    json        TEXT NOT NULL,
    status      TEXT NOT NULL,
    action_type TEXT NOT NULL,
    created_seq INTEGER NOT NULL REFERENCES events (seq),
    updated_seq INTEGER NOT NULL REFERENCES events (seq)
);
CREATE INDEX IF NOT EXISTS current_status ON current (status, created_seq);
CREATE TABLE IF NOT EXISTS sessions (
    session_id   TEXT PRIMARY KEY,
    session_date TEXT,
    last_seq     INTEGER NOT NULL
);
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'ledger events are append-only: UPDATE is not allowed');
END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN
    SELECT RAISE(ABORT, 'ledger events are append-only: DELETE is not allowed');
END;
CREATE TRIGGER IF NOT EXISTS events_to_current AFTER INSERT ON events
BEGIN
    INSERT INTO current (entry_id, json, status, action_type, created_seq, updated_seq)
    VALUES (NEW.entry_id, NEW.json, NEW.status, NEW.action_type, NEW.seq, NEW.seq)
    ON CONFLICT (entry_id) DO UPDATE SET
        json = excluded.json,
        status = excluded.status,
        action_type = excluded.action_type,
        updated_seq = excluded.updated_seq;
END;
"""

_EVENT_COLUMNS = (
    "seq, entry_id, op, json, reason, writer, session_id, session_date, evidence, recorded_at"
)


class LedgerStoreError(Exception):
    """The store cannot be opened or written; the message names the file and what to do."""


class LedgerEvent(BaseModel):
    """One committed change to one arrangement: what, why, on what evidence, by which writer."""

    model_config = ConfigDict(frozen=True)

    seq: int
    entry_id: str
    op: Op
    arrangement: Arrangement  # the full state after the change
    reason: str
    writer: str  # "rules", "llm", "user", "tui", ...
    session_id: str | None
    session_date: date | None
    evidence: list[Evidence]
    recorded_at: str  # wall-clock ISO timestamp, informational only


@dataclass
class Change:
    """A new full state for one arrangement, with the reason and evidence for the change."""

    arrangement: Arrangement
    reason: str
    evidence: list[Evidence] = field(default_factory=list)


def _dump_arrangement(arrangement: Arrangement) -> str:
    return json.dumps(arrangement.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))


def _dump_evidence(evidence: list[Evidence]) -> str:
    return json.dumps(
        [e.model_dump(mode="json") for e in evidence], sort_keys=True, separators=(",", ":")
    )


def _error(exc: sqlite3.Error, path: Path, timeout: float) -> LedgerStoreError:
    """Turn a sqlite3 error into a message that names the file and the way out."""
    code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
    text = str(exc)
    if code == sqlite3.SQLITE_NOTADB or "not a database" in text:
        return LedgerStoreError(
            f"{path} is not a SQLite database ({text}). Move the file aside to start an "
            "empty ledger, or restore it from a backup."
        )
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or "locked" in text:
        return LedgerStoreError(
            f"{path} is locked by another writer (waited {timeout:g} s). Close other "
            "grounding sessions that use this profile, then retry."
        )
    if code == sqlite3.SQLITE_CORRUPT:
        return LedgerStoreError(
            f"{path} is damaged ({text}). Restore it from a backup, or move it aside to "
            "start an empty ledger."
        )
    if code in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR):
        # A transaction that fails to write is rolled back: nothing of it lands.
        cause = "the disk is full" if code == sqlite3.SQLITE_FULL else "is the disk full?"
        return LedgerStoreError(
            f"cannot write the ledger at {path} ({text}: {cause}); no partial change is "
            "recorded and everything recorded before is intact. Free some space, then retry."
        )
    if code in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM):
        return LedgerStoreError(
            f"cannot write the ledger at {path} ({text}). Check that the directory exists "
            "and is writable, or choose another profile."
        )
    return LedgerStoreError(f"ledger store {path}: {text}")


class LedgerStore:
    """The ledger of one profile: append-only events plus the current view derived from them.

    Thread-safe: one connection, shared by threads under a lock. Several processes may
    open the same file; SQLite serializes their writes (waiting up to ``timeout``).
    """

    def __init__(self, path: Path, *, timeout: float = 5.0) -> None:
        """Open the store at ``path``, creating the file and its schema if needed."""
        self.path = Path(path)
        self.timeout = timeout
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LedgerStoreError(
                f"cannot create the directory for the ledger at {self.path} ({exc}). "
                "Check the data directory setting and its permissions."
            ) from exc
        conn: sqlite3.Connection | None = None
        try:
            # isolation_level=None: we issue BEGIN IMMEDIATE / COMMIT ourselves.
            conn = sqlite3.connect(
                str(self.path), timeout=timeout, isolation_level=None, check_same_thread=False
            )
            conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                log.warning("ledger store %s: journal_mode is %s, not WAL", self.path, mode)
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            self._init_schema(conn)
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            raise _error(exc, self.path, timeout) from exc
        except LedgerStoreError:
            if conn is not None:
                conn.close()
            raise
        self._conn = conn

    # -- schema ---------------------------------------------------------------------

    def _check_ours(self, conn: sqlite3.Connection) -> bool:
        """True if the schema is present; raise if the file belongs to something else."""
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if app_id not in (0, APPLICATION_ID) or (tables and "meta" not in tables):
            raise LedgerStoreError(
                f"{self.path} is a SQLite database but not a ledger store. Point the "
                "profile at another file, or move this one aside."
            )
        if "meta" not in tables:
            return False
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            return False
        if int(row[0]) != SCHEMA_VERSION:
            raise LedgerStoreError(
                f"{self.path} has ledger schema version {row[0]}, this program reads "
                f"version {SCHEMA_VERSION}. Use the matching version of grounding, or export "
                "the ledger with it and start a new profile."
            )
        return True

    def _init_schema(self, conn: sqlite3.Connection) -> None:
        if self._check_ours(conn):
            return  # read-only check: opening never waits for another writer's lock
        conn.execute("BEGIN IMMEDIATE")
        try:
            if not self._check_ours(conn):  # another process may have won the race
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                for statement in _split_sql(_SCHEMA):
                    conn.execute(statement)
                conn.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
                conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('id_counter', '0')")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    # -- plumbing -------------------------------------------------------------------

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """The connection, under the lock, with sqlite3 errors turned into LedgerStoreError."""
        with self._lock:
            if self._conn is None:
                raise LedgerStoreError(f"ledger store {self.path} is closed; open it again.")
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise _error(exc, self.path, self.timeout) from exc

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: BEGIN IMMEDIATE, COMMIT, or ROLLBACK on any exception."""
        with self._connection() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    # -- writing --------------------------------------------------------------------

    def new_id(self) -> str:
        """Allocate a short stable id ("a1", "a2", ...) that no entry uses yet."""
        with self._transaction() as conn:
            n = int(conn.execute("SELECT value FROM meta WHERE key = 'id_counter'").fetchone()[0])
            while True:
                n += 1
                candidate = f"a{n}"
                used = conn.execute(
                    "SELECT 1 FROM events WHERE entry_id = ? LIMIT 1", (candidate,)
                ).fetchone()
                if used is None:
                    break
            conn.execute("UPDATE meta SET value = ? WHERE key = 'id_counter'", (str(n),))
        return candidate

    def apply(
        self,
        changes: list[Change],
        writer: str,
        session_id: str | None = None,
        session_date: date | None = None,
    ) -> list[LedgerEvent]:
        """Record ``changes`` in one transaction and return the events written.

        Each change carries the full new state of one arrangement; the op is "create"
        when its id is new and "update" otherwise. If anything fails, nothing lands.
        A ``session_id`` is remembered even for an empty batch, so ``as_of(session_id=...)``
        works for sessions that changed nothing.
        """
        if not writer:
            raise ValueError("apply() needs a writer name (e.g. 'rules', 'llm', 'user', 'tui')")
        for change in changes:
            if not isinstance(change.arrangement, Arrangement):
                raise TypeError(f"Change.arrangement must be an Arrangement, not {change!r}")
            if not change.arrangement.id:
                raise ValueError("every arrangement needs an id; use LedgerStore.new_id()")
        if not changes and session_id is None:
            return []
        recorded_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        day = session_date.isoformat() if session_date is not None else None
        events: list[LedgerEvent] = []
        with self._transaction() as conn:
            for change in changes:
                arrangement = change.arrangement
                known = conn.execute(
                    "SELECT 1 FROM current WHERE entry_id = ?", (arrangement.id,)
                ).fetchone()
                op: Op = "update" if known else "create"
                cursor = conn.execute(
                    "INSERT INTO events (entry_id, op, json, status, action_type, reason, writer,"
                    " session_id, session_date, effective_date, evidence, recorded_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        arrangement.id,
                        op,
                        _dump_arrangement(arrangement),
                        arrangement.status.value,
                        arrangement.action_type.value,
                        change.reason,
                        writer,
                        session_id,
                        day,
                        # Changes outside a session (a TUI confirm) date by the entry itself.
                        day or arrangement.updated_at.isoformat(),
                        _dump_evidence(change.evidence),
                        recorded_at,
                    ),
                )
                assert cursor.lastrowid is not None
                events.append(
                    LedgerEvent(
                        seq=cursor.lastrowid,
                        entry_id=arrangement.id,
                        op=op,
                        arrangement=arrangement,
                        reason=change.reason,
                        writer=writer,
                        session_id=session_id,
                        session_date=session_date,
                        evidence=list(change.evidence),
                        recorded_at=recorded_at,
                    )
                )
            if session_id is not None:
                conn.execute(
                    "INSERT INTO sessions (session_id, session_date, last_seq)"
                    " VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) FROM events))"
                    " ON CONFLICT (session_id) DO UPDATE SET"
                    " session_date = COALESCE(excluded.session_date, session_date),"
                    " last_seq = MAX(last_seq, excluded.last_seq)",
                    (session_id, day),
                )
        return events

    # -- reading --------------------------------------------------------------------

    def get(self, entry_id: str) -> Arrangement | None:
        """The current state of one arrangement, or None if there is no such entry."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT json FROM current WHERE entry_id = ?", (entry_id,)
            ).fetchone()
        return Arrangement.model_validate_json(row[0]) if row else None

    def all(self, status: Status | None = None) -> list[Arrangement]:
        """Every arrangement in its current state (optionally one status), in creation order."""
        with self._connection() as conn:
            if status is None:
                rows = conn.execute("SELECT json FROM current ORDER BY created_seq").fetchall()
            else:
                rows = conn.execute(
                    "SELECT json FROM current WHERE status = ? ORDER BY created_seq",
                    (Status(status).value,),
                ).fetchall()
        return [Arrangement.model_validate_json(r[0]) for r in rows]

    def events(
        self, entry_id: str | None = None, *, session_id: str | None = None
    ) -> list[LedgerEvent]:
        """The event log in commit order, optionally for one entry and/or one session."""
        where: list[str] = []
        params: list[str] = []
        if entry_id is not None:
            where.append("entry_id = ?")
            params.append(entry_id)
        if session_id is not None:
            where.append("session_id = ?")
            params.append(session_id)
        sql = f"SELECT {_EVENT_COLUMNS} FROM events"
        if where:
            sql += " WHERE " + " AND ".join(where)
        with self._connection() as conn:
            rows = conn.execute(sql + " ORDER BY seq", params).fetchall()
        return [_event(row) for row in rows]

    @property
    def last_seq(self) -> int:
        """The sequence number of the newest event (0 for an empty ledger)."""
        with self._connection() as conn:
            return int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0])

    def as_of(
        self,
        session_date: date | None = None,
        seq: int | None = None,
        session_id: str | None = None,
    ) -> list[Arrangement]:
        """The ledger as it stood at a point in its history, in creation order.

        Give one of: ``session_date`` (every event dated on or before that day; an event
        without a session is dated by its arrangement's ``updated_at``), ``seq`` (every
        event up to that sequence number), or ``session_id`` (everything up to the end of
        that session). With none, the current state. Each entry shows the state written by
        its latest qualifying event; entries created later are absent.
        """
        given = [x for x in (session_date, seq, session_id) if x is not None]
        if len(given) > 1:
            raise ValueError("as_of() takes one of session_date, seq or session_id")
        with self._connection() as conn:
            if session_id is not None:
                row = conn.execute(
                    "SELECT last_seq FROM sessions WHERE session_id = ?", (session_id,)
                ).fetchone()
                if row is None:
                    raise KeyError(f"no session {session_id!r} recorded in {self.path}")
                seq = int(row[0])
            condition = ""
            params: list[str | int] = []
            if session_date is not None:
                condition, params = "WHERE effective_date <= ?", [session_date.isoformat()]
            elif seq is not None:
                condition, params = "WHERE seq <= ?", [int(seq)]
            rows = conn.execute(
                "SELECT e.json FROM events AS e JOIN ("
                "  SELECT entry_id, MAX(seq) AS last, MIN(seq) AS first FROM events"
                f"  {condition} GROUP BY entry_id"
                ") AS latest ON e.seq = latest.last ORDER BY latest.first",
                params,
            ).fetchall()
        return [Arrangement.model_validate_json(r[0]) for r in rows]

    def chain(self, entry_id: str) -> list[Arrangement]:
        """The revision chain through ``entry_id``, oldest first (via previous/superseded_by)."""
        start = self.get(entry_id)
        if start is None:
            return []
        seen = {start.id}
        older: list[Arrangement] = []
        node = start
        while node.previous and node.previous not in seen:
            prev = self.get(node.previous)
            if prev is None:
                break
            seen.add(prev.id)
            older.append(prev)
            node = prev
        newer: list[Arrangement] = []
        node = start
        while True:
            next_id = node.superseded_by or self._successor(node.id)
            if next_id is None or next_id in seen:
                break
            nxt = self.get(next_id)
            if nxt is None:
                break
            seen.add(nxt.id)
            newer.append(nxt)
            node = nxt
        return [*reversed(older), start, *newer]

    def _successor(self, entry_id: str) -> str | None:
        """An entry whose ``previous`` names ``entry_id`` (when ``superseded_by`` was not set)."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT entry_id FROM current WHERE json_extract(json, '$.previous') = ?"
                " ORDER BY created_seq LIMIT 1",
                (entry_id,),
            ).fetchone()
        return str(row[0]) if row else None

    # -- snapshots ------------------------------------------------------------------

    def backup_to(self, path: Path) -> None:
        """Copy the whole store to ``path`` (a consistent snapshot) with SQLite's backup API."""
        target = Path(path)
        if target.resolve() == self.path.resolve():
            raise LedgerStoreError(f"cannot back up {self.path} onto itself; choose another path.")
        target.parent.mkdir(parents=True, exist_ok=True)
        with self._connection() as conn:
            try:
                dest = sqlite3.connect(str(target), timeout=self.timeout)
            except sqlite3.Error as exc:
                raise _error(exc, target, self.timeout) from exc
            try:
                conn.backup(dest)
            except sqlite3.Error as exc:
                raise _error(exc, target, self.timeout) from exc
            finally:
                dest.close()

    def restore_from(self, path: Path) -> None:
        """Replace this store's whole content with the snapshot at ``path`` (see backup_to)."""
        source_path = Path(path)
        if not source_path.is_file():
            raise LedgerStoreError(f"no ledger snapshot at {source_path}; check the path.")
        # Validates the snapshot (ours, right schema) before anything is overwritten.
        LedgerStore(source_path, timeout=self.timeout).close()
        with self._connection() as conn:
            source = sqlite3.connect(str(source_path), timeout=self.timeout)
            try:
                source.backup(conn)
            finally:
                source.close()

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` result ("ok" when the file is sound)."""
        with self._connection() as conn:
            return "\n".join(str(r[0]) for r in conn.execute("PRAGMA integrity_check"))

    # -- lifetime -------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> LedgerStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LedgerStore({str(self.path)!r})"


def _event(row: tuple[object, ...]) -> LedgerEvent:
    seq, entry_id, op, body, reason, writer, session_id, session_date, evidence, recorded = row
    return LedgerEvent(
        seq=int(str(seq)),
        entry_id=str(entry_id),
        op="create" if op == "create" else "update",
        arrangement=Arrangement.model_validate_json(str(body)),
        reason=str(reason),
        writer=str(writer),
        session_id=None if session_id is None else str(session_id),
        session_date=None if session_date is None else date.fromisoformat(str(session_date)),
        evidence=_EVIDENCE.validate_json(str(evidence)),
        recorded_at=str(recorded),
    )


def _split_sql(script: str) -> list[str]:
    """Split the schema into statements (triggers contain ';' inside BEGIN ... END)."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
