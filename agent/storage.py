"""A profile's files: checked before use, the ledger copied aside, and the way back.

A profile directory holds the ledger (``ledger.sqlite``), a copy of it saved at the
start and at the end of every chat (``ledger.backup.sqlite``), the chat session
checkpoints (``chat.sqlite``) and the memory index (``chroma/``). A chat checks the
ledger and the checkpoints before it loads anything else, so a file that another
process holds, or that is damaged, stops the start with one line that names the file
and the way out (:class:`StorageError`) instead of failing later, in the middle of a
turn. :func:`recover` is that way out for a damaged file: it moves the file aside
(never deletes it) and, for the ledger, puts the saved copy in its place.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from ledger.store import LedgerStore, LedgerStoreError

__all__ = [
    "CHAT",
    "LEDGER",
    "LEDGER_BACKUP",
    "MEMORY",
    "BackupInfo",
    "LedgerCheck",
    "MemoryIndexError",
    "StorageError",
    "backup_ledger",
    "chat_error",
    "check_chat",
    "check_ledger",
    "check_memory_files",
    "check_profile",
    "describe_sqlite_error",
    "memory_damaged",
    "recover",
]

log = logging.getLogger(__name__)

LEDGER = "ledger.sqlite"
LEDGER_BACKUP = "ledger.backup.sqlite"
CHAT = "chat.sqlite"
MEMORY = "chroma"
_SIDE_FILES = ("-wal", "-shm", "-journal")
_SEGMENT_DIR = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")

Target = Literal["ledger", "memory", "chat"]


class StorageError(Exception):
    """A profile file is locked, damaged or cannot be written.

    The message is one line for the user: the file, what is wrong, what to do.
    """


class MemoryIndexError(StorageError):
    """The local memory index (a Chroma directory) cannot be read."""

    def __init__(self, path: Path, detail: str) -> None:
        self.path = path
        self.detail = " ".join(detail.split())[:200]
        super().__init__(
            f"the memory index at {path} is damaged ({self.detail}); the ledger is a separate "
            "file. Move the directory aside to start an empty memory"
        )


@dataclass(frozen=True)
class BackupInfo:
    """The saved copy of the ledger: where, how many events, when it was saved."""

    path: Path
    events: int
    saved: str


@dataclass(frozen=True)
class LedgerCheck:
    """What the start-up check found: the ledger's newest event and the saved copy."""

    path: Path
    events: int
    backup: BackupInfo | None


def _code(exc: sqlite3.Error) -> int:
    return (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF


def describe_sqlite_error(exc: sqlite3.Error) -> Literal["locked", "damaged", "full", "other"]:
    """Sort a sqlite3 error into what the user can do about it."""
    code, text = _code(exc), str(exc)
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or "locked" in text:
        return "locked"
    if code in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT) or (
        "not a database" in text or "malformed" in text
    ):
        return "damaged"
    if code in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR) or "disk" in text:
        return "full"
    return "other"


def _locked(what: str, path: Path, profile: str, timeout: float) -> StorageError:
    return StorageError(
        f"the {what} {path} is locked by another process (waited {timeout:g} s); close the "
        f"other grounding instance using profile '{profile}' and retry"
    )


def _backup_info(path: Path) -> BackupInfo | None:
    """The saved copy, or None when there is none or it cannot be read."""
    if not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            if conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                return None
            events = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    saved = datetime.fromtimestamp(path.stat().st_mtime).strftime("%Y-%m-%d %H:%M")
    return BackupInfo(path=path, events=events, saved=saved)


def _events(n: int) -> str:
    return f"{n} event" if n == 1 else f"{n} events"


def _restore_hint(backup: BackupInfo | None, path: Path, profile: str) -> str:
    if backup is None:
        return (
            f"no saved copy exists: move {path.name} and its -wal/-shm files aside to start "
            "an empty ledger, or copy back a backup of your own"
        )
    return (
        f"run `grounding recover ledger --profile {profile}` to restore the copy saved "
        f"{backup.saved} ({_events(backup.events)}; the current file is kept beside it)"
    )


def _restore_or_drop(backup: BackupInfo, profile: str, keep: str) -> str:
    return (
        f"run `grounding recover ledger --profile {profile}` to restore that copy (the "
        f"current file is kept beside it), or delete {backup.path} to {keep}"
    )


def _is_empty(path: Path) -> bool:
    wal = path.with_name(path.name + "-wal")
    if not path.exists():
        return True
    return path.stat().st_size == 0 and (not wal.exists() or wal.stat().st_size == 0)


def check_ledger(home: Path, profile: str, timeout: float = 5.0) -> LedgerCheck:
    """Check the ledger before use: readable, sound, not behind its copy, writable.

    Raises :class:`StorageError` when another process holds its write lock for longer
    than ``timeout``, when it is damaged, and when it holds fewer events than the copy
    saved earlier (events are never deleted, so a shorter ledger lost some).
    """
    path = home / LEDGER
    backup = _backup_info(home / LEDGER_BACKUP)
    if _is_empty(path):
        if backup is not None and backup.events > 0:
            state = "missing" if not path.exists() else "empty"
            raise StorageError(
                f"the ledger database {path} is {state} but the copy saved {backup.saved} "
                f"holds {_events(backup.events)}; "
                f"{_restore_or_drop(backup, profile, 'start an empty ledger')}"
            )
        return LedgerCheck(path=path, events=0, backup=backup)
    conn = sqlite3.connect(str(path), timeout=timeout, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        problems = [str(r[0]) for r in conn.execute("PRAGMA quick_check").fetchall()]
        if problems != ["ok"]:
            raise StorageError(
                f"the ledger database {path} is damaged ({'; '.join(problems[:2])}); "
                f"{_restore_hint(backup, path, profile)}"
            )
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        events = 0
        if "events" in tables:
            events = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0])
        if backup is not None and events < backup.events:
            raise StorageError(
                f"the ledger database {path} holds {_events(events)} but the copy saved "
                f"{backup.saved} holds {_events(backup.events)}: it was truncated or "
                f"replaced; {_restore_or_drop(backup, profile, 'keep the file as it is')}"
            )
        conn.execute("BEGIN IMMEDIATE")  # waits up to `timeout` for another writer
        conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        kind = describe_sqlite_error(exc)
        if kind == "locked":
            raise _locked("ledger database", path, profile, timeout) from exc
        if kind == "damaged":
            raise StorageError(
                f"the ledger database {path} is damaged ({exc}); "
                f"{_restore_hint(backup, path, profile)}"
            ) from exc
        raise StorageError(f"cannot use the ledger database {path} ({exc})") from exc
    finally:
        conn.close()
    return LedgerCheck(path=path, events=events, backup=backup)


def check_chat(home: Path, profile: str, timeout: float = 5.0) -> None:
    """Check the chat session checkpoints before use: sound and writable."""
    path = home / CHAT
    if _is_empty(path):
        return
    conn = sqlite3.connect(str(path), timeout=timeout, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        problems = [str(r[0]) for r in conn.execute("PRAGMA quick_check").fetchall()]
        if problems != ["ok"]:
            raise _chat_damaged(path, "; ".join(problems[:2]), profile)
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        raise chat_error(exc, path, profile, timeout) from exc
    finally:
        conn.close()


def chat_error(exc: sqlite3.Error, path: Path, profile: str, timeout: float) -> StorageError:
    """The one-line message for a failure of the chat session database."""
    kind = describe_sqlite_error(exc)
    if kind == "locked":
        return _locked("chat session database", path, profile, timeout)
    if kind == "damaged":
        return _chat_damaged(path, str(exc), profile)
    return StorageError(f"cannot write the chat session database {path} ({exc})")


def _chat_damaged(path: Path, detail: str, profile: str) -> StorageError:
    return StorageError(
        f"the chat session database {path} is damaged ({detail}); the ledger and memory "
        f"are separate files. Run `grounding recover chat --profile {profile}` to move it "
        "aside and start a new session (the unfinished session's turns are lost)"
    )


def check_memory_files(path: Path) -> None:
    """A local Chroma directory whose database is gone but whose index segments remain.

    Chroma would silently start an empty memory over it; say so instead.
    """
    if not path.is_dir():
        return
    db = path / "chroma.sqlite3"
    segments = [p for p in path.iterdir() if p.is_dir() and _SEGMENT_DIR.match(p.name)]
    if segments and (not db.exists() or db.stat().st_size == 0):
        state = "missing" if not db.exists() else "empty"
        raise MemoryIndexError(
            path, f"{db.name} is {state} but {len(segments)} index segment(s) remain"
        )


def memory_damaged(exc: MemoryIndexError, checked: LedgerCheck, profile: str) -> StorageError:
    """The chat's message for a damaged memory index: the ledger is fine, here is the way out."""
    return StorageError(
        f"the memory index at {exc.path} is damaged ({exc.detail}); the ledger "
        f"{checked.path} is intact ({_events(checked.events)}). Run `grounding recover memory "
        f"--profile {profile}` to move the index aside and start an empty memory: past "
        "conversations are no longer recalled, every arrangement in the ledger still applies"
    )


def check_profile(home: Path, profile: str, timeout: float = 5.0) -> LedgerCheck:
    """Every check a chat runs before it opens the profile (cheap: no Chroma, no models)."""
    checked = check_ledger(home, profile, timeout)
    check_chat(home, profile, timeout)
    try:
        check_memory_files(home / MEMORY)
    except MemoryIndexError as exc:
        raise memory_damaged(exc, checked, profile) from exc
    return checked


def backup_ledger(store: LedgerStore, home: Path) -> Path | None:
    """Save a copy of a sound ledger as ``ledger.backup.sqlite``; warn (never raise) on failure.

    The copy is written to a temporary file and renamed over the old one, so a crash
    or a full disk mid-copy leaves the previous copy in place.
    """
    target = home / LEDGER_BACKUP
    tmp: str | None = None
    try:
        check = store.integrity_check()
        if check != "ok":
            log.warning(
                "ledger %s failed its integrity check; its copy is not replaced", store.path
            )
            return None
        fd, tmp = tempfile.mkstemp(prefix=LEDGER_BACKUP + ".", suffix=".tmp", dir=home)
        os.close(fd)
        store.backup_to(Path(tmp))
        conn = sqlite3.connect(tmp)
        try:
            # A standalone file: readable without -wal/-shm companions.
            conn.execute("PRAGMA journal_mode = DELETE")
        finally:
            conn.close()
        os.replace(tmp, target)
        tmp = None
        return target
    except (LedgerStoreError, sqlite3.Error, OSError) as exc:
        log.warning("could not save a copy of the ledger to %s: %s", target, exc)
        return None
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _move_aside(path: Path, stamp: str) -> Path:
    """Rename ``path`` (and its SQLite side files) to ``NAME.damaged-STAMP[.SUFFIX]``."""
    new = path.with_name(f"{path.stem}.damaged-{stamp}{path.suffix}")
    path.rename(new)
    for side in _SIDE_FILES:
        companion = path.with_name(path.name + side)
        if companion.exists():
            companion.rename(new.with_name(new.name + side))
    return new


def _ensure_not_locked(path: Path, what: str, profile: str, timeout: float) -> None:
    """Refuse to move a file that another process is writing; damage is expected here."""
    try:
        conn = sqlite3.connect(str(path), timeout=timeout, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("ROLLBACK")
        finally:
            conn.close()
    except sqlite3.Error as exc:
        if describe_sqlite_error(exc) == "locked":
            raise _locked(what, path, profile, timeout) from exc


def recover(home: Path, target: Target, profile: str, timeout: float = 5.0) -> str:
    """Move a damaged profile file aside; for the ledger, restore its saved copy.

    Nothing is deleted: the old file keeps its name with ``.damaged-STAMP``. Returns a
    sentence saying what was done.
    """
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    if target == "memory":
        path = home / MEMORY
        if not path.exists():
            return f"no memory index at {path}; nothing to do"
        moved = path.with_name(f"{MEMORY}.damaged-{stamp}")
        path.rename(moved)
        return (
            f"moved the memory index to {moved}; the next start begins an empty memory "
            "(the ledger is unchanged)"
        )
    if target == "chat":
        path = home / CHAT
        if not path.exists():
            return f"no chat session database at {path}; nothing to do"
        _ensure_not_locked(path, "chat session database", profile, timeout)
        moved = _move_aside(path, stamp)
        return f"moved the chat session database to {moved}; the next start begins a new session"
    path = home / LEDGER
    backup = _backup_info(home / LEDGER_BACKUP)
    if backup is None:
        raise StorageError(
            f"there is no usable saved copy of the ledger at {home / LEDGER_BACKUP}; nothing "
            f"was changed. Move {path.name} and its -wal/-shm files aside to start an empty "
            "ledger"
        )
    kept = ""
    if path.exists():
        _ensure_not_locked(path, "ledger database", profile, timeout)
        kept = f"; the previous file is kept as {_move_aside(path, stamp)}"
    fd, tmp = tempfile.mkstemp(prefix=LEDGER + ".", suffix=".tmp", dir=home)
    os.close(fd)
    try:
        shutil.copyfile(backup.path, tmp)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return (
        f"restored the ledger {path} from the copy saved {backup.saved} "
        f"({_events(backup.events)}){kept}"
    )
