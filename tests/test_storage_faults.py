"""Storage faults: a locked, full or damaged profile file.

Every fault is real: a second process holds SQLite's write lock, a child process
writes under a file-size limit (or on a tiny tmpfs), bytes of a file are garbled or
cut off. The user sees one line that names the file and the way out; what was
committed before the fault is still there; the next start works.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import pytest

from agent.llm import LLMPolicy
from agent.llm_cache import ResponseCache
from agent.locations import profile_dir
from agent.memory import open_memory
from agent.session import ChatSession
from agent.settings import Settings
from agent.storage import LEDGER_BACKUP, MemoryIndexError, StorageError, recover
from ledger.model import Arrangement, Turn
from ledger.store import Change, LedgerStore, LedgerStoreError
from tests import fakellm
from tests.conftest import cli_env
from tests.fakellm import FakeLLM

fake_llm = fakellm.fake_llm  # the fixture, used by name

ROOT = Path(__file__).resolve().parent.parent
GROUNDING = str(Path(sys.executable).parent / "grounding")
DAY = date(2026, 5, 4)
INVITE = "Marta invited me to her studio open house. Please RSVP yes."


def arrangement(entry_id: str, content: str = "rule") -> Arrangement:
    return Arrangement(
        id=entry_id,
        proposer="user",
        action_type="send",
        content=content,
        status="confirmed",
        created_at=DAY,
        updated_at=DAY,
    )


def chat() -> ChatSession:
    """A session on the default profile that waits at most 0.5 s for a locked file."""
    return ChatSession(Settings(memory="none"), today=DAY, busy_timeout=0.5)


def first_session(memory: str = "none") -> Path:
    """One chat session that leaves a pending proposal (a1) in the ledger; the profile dir."""
    session = ChatSession(Settings(memory=memory), today=DAY)
    session.send(INVITE)
    events = session.close()
    assert [e.entry_id for e in events] == ["a1"]
    return profile_dir("default")


def run_cli(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [GROUNDING, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=cli_env(home),
        timeout=120,
    )


def one_clean_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The CLI failed with one line on stderr, no traceback."""
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("grounding: ")
    return lines[0]


HOLDER = textwrap.dedent(
    """
    import sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    print("held", flush=True)
    sys.stdin.readline()
    conn.execute("ROLLBACK")
    conn.close()
    """
)


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Another process holds the write lock of the SQLite file at ``path``."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdin is not None
    try:
        assert proc.stdout.readline().strip() == "held"
        yield
    finally:
        proc.stdin.write("\n")
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        proc.stdout.close()


def ids(path: Path) -> list[str]:
    with LedgerStore(path) as store:
        return [a.id for a in store.all()]


# -- a file another process holds --------------------------------------------------------


def test_locked_ledger_stops_the_cli_with_one_line_and_the_next_start_works(
    grounding_home: Path,
) -> None:
    ledger = profile_dir("default") / "ledger.sqlite"
    with LedgerStore(ledger) as store:
        store.apply([Change(arrangement(f"a{i}"), "kept") for i in (1, 2, 3)], writer="user")
    with locked(ledger):
        started = time.monotonic()
        proc = run_cli(grounding_home, "chat", "--plain", stdin=INVITE + "\n")
        waited = time.monotonic() - started
    line = one_clean_line(proc)
    assert f"the ledger database {ledger} is locked by another process (waited 5 s)" in line
    assert "close the other grounding instance using profile 'default' and retry" in line
    assert proc.stdout == ""  # it stopped before the prompt: nothing was sent to the agent
    assert waited < 60  # the busy timeout bounds the wait

    assert ids(ledger) == ["a1", "a2", "a3"]  # nothing committed is lost
    session = chat()
    session.send(INVITE)
    events = session.close()
    assert [e.entry_id for e in events] == ["a4"]
    assert ids(ledger) == ["a1", "a2", "a3", "a4"]


def test_ledger_locked_when_a_session_ends_keeps_its_turns_for_the_next_start(
    grounding_home: Path,
) -> None:
    ledger = profile_dir("default") / "ledger.sqlite"
    session = chat()
    session.send(INVITE)
    with locked(ledger), pytest.raises(LedgerStoreError, match="locked") as info:
        session.close()
    assert str(ledger) in str(info.value)
    assert ids(ledger) == []

    again = chat()
    turns = again.turns()
    assert again.session_no == 1 and [t.text for t in turns][:1] == [INVITE]
    assert [e.entry_id for e in again.close()] == ["a1"]
    with LedgerStore(ledger) as store:
        assert [(e.entry_id, e.op) for e in store.events()] == [("a1", "create")]


def test_locked_chat_checkpoint_stops_the_start_and_a_turn(grounding_home: Path) -> None:
    first_session()
    checkpoint = profile_dir("default") / "chat.sqlite"
    with locked(checkpoint), pytest.raises(StorageError) as info:
        chat()
    assert str(info.value) == (
        f"the chat session database {checkpoint} is locked by another process (waited 0.5 s); "
        "close the other grounding instance using profile 'default' and retry"
    )

    session = chat()
    with locked(checkpoint), pytest.raises(StorageError, match="is locked by another process"):
        session.send("Any invitations?")
    assert session.turns() == []  # the unsaved turn is not half-kept
    session.send("Any invitations?")
    assert len(session.turns()) == 2
    session.close()
    assert ids(profile_dir("default") / "ledger.sqlite") == ["a1"]


def test_locked_llm_cache_is_skipped_with_a_warning(
    fake_llm: FakeLLM, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "llm-cache.sqlite"
    with ResponseCache(path) as warm:
        warm.put("k0", {"choices": []}, model="m")
    messages = [{"role": "user", "content": "Any invitations?"}]
    cache = ResponseCache(path, busy_timeout=0.3)
    policy = LLMPolicy(
        "openai/fake", api_base=fake_llm.url, api_key="sk-local", cache=cache, num_retries=0
    )
    fake_llm.enqueue_text("You have two invitations.")
    fake_llm.enqueue_text("Still two.")
    with caplog.at_level(logging.WARNING, logger="agent.llm_cache"), locked(path):
        first = policy.decide(messages)
        second = policy.decide(messages)  # the cache is off now: no second wait, no warning
    assert first.reply == "You have two invitations." and first.ok
    assert second.reply == "Still two." and not second.cached
    assert cache.disabled is not None and "locked" in cache.disabled
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert str(path) in warnings[0] and "continuing without caching" in warnings[0]
    with ResponseCache(path) as after:  # released: the file is whole and usable again
        assert after.get("k0") == {"choices": []} and len(after) == 1


def test_damaged_llm_cache_is_skipped_with_a_warning(
    fake_llm: FakeLLM, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "llm-cache.sqlite"
    path.write_bytes(b"not a database at all " * 400)
    with caplog.at_level(logging.WARNING, logger="agent.llm_cache"):
        cache = ResponseCache(path)
    assert cache.disabled is not None and "not a database" in cache.disabled
    assert any(str(path) in r.getMessage() for r in caplog.records)
    fake_llm.enqueue_text("Hello.")
    policy = LLMPolicy(
        "openai/fake", api_base=fake_llm.url, api_key="sk-local", cache=cache, num_retries=0
    )
    assert policy.decide([{"role": "user", "content": "hi"}]).reply == "Hello."
    assert path.read_bytes().startswith(b"not a database")  # left as it was


# -- a full disk -------------------------------------------------------------------------

FULL_DISK = textwrap.dedent(
    """
    import json, os, resource, signal, sys
    from datetime import date
    from pathlib import Path
    from ledger.model import Arrangement
    from ledger.store import Change, LedgerStore, LedgerStoreError

    path, how = Path(sys.argv[1]), sys.argv[2]

    def make(i, tag):
        return Arrangement(
            id=f"{tag}{i}", proposer="user", action_type="purchase", content="x" * 3000,
            status="confirmed", created_at=date(2026, 3, 1), updated_at=date(2026, 3, 1),
        )

    store = LedgerStore(path)
    store.apply([Change(make(i, "c"), "committed") for i in range(5)], writer="rules",
                session_id="s1")
    if how == "rlimit":
        # No file may grow past a little more than it is now: the next big write fails.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        limit = max(p.stat().st_size for p in path.parent.iterdir()) + 32 * 1024
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    else:
        # Fill the (tiny) file system.
        try:
            with open(path.parent / "filler", "wb") as f:
                while True:
                    f.write(bytes(4096))
                    f.flush()
        except OSError:
            pass
    result = {}
    try:
        store.apply([Change(make(i, "d"), "doomed") for i in range(200)], writer="rules",
                    session_id="doomed")
    except LedgerStoreError as exc:
        result["error"] = str(exc)
    store.close()
    if how == "enospc":
        (path.parent / "filler").unlink()
        with LedgerStore(path) as again:  # the next start, once there is space
            result["check"] = again.integrity_check()
            result["reasons"] = [e.reason for e in again.events()]
            again.apply([Change(make(1, "n"), "after")], writer="rules")
            result["after"] = len(again.events())
    print(json.dumps(result))
    """
)


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="needs POSIX resource limits")
def test_full_disk_is_a_clear_error_and_loses_nothing_committed(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    proc = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(path), "rlimit"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_child_env(),
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error.startswith(f"cannot write the ledger at {path} (")
    assert "no partial change is recorded and everything recorded before is intact" in error
    assert "\n" not in error

    with LedgerStore(path) as store:  # the next start
        assert store.integrity_check() == "ok"
        assert [e.reason for e in store.events()] == ["committed"] * 5
        assert sorted(a.id for a in store.all()) == [f"c{i}" for i in range(5)]
        with pytest.raises(KeyError):
            store.as_of(session_id="doomed")  # no half-written batch
        store.apply([Change(arrangement("n1"), "after the fault")], writer="user")
        assert len(store.events()) == 6


def _can_mount_tmpfs() -> bool:
    if shutil.which("unshare") is None or not sys.platform.startswith("linux"):
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
        capture_output=True,
        timeout=30,
    )
    return probe.returncode == 0


@pytest.mark.skipif(not _can_mount_tmpfs(), reason="needs unprivileged user+mount namespaces")
def test_really_full_tmpfs_says_the_disk_is_full(tmp_path: Path) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    script = (
        f"mount -t tmpfs -o size=1m tmpfs {mount} && "
        f'exec "{sys.executable}" -c "$0" {mount / "ledger.sqlite"} enospc'
    )
    proc = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, FULL_DISK],
        capture_output=True,
        text=True,
        timeout=60,
        env=_child_env(),
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["error"] == (
        f"cannot write the ledger at {mount / 'ledger.sqlite'} (database or disk is full: the "
        "disk is full); no partial change is recorded and everything recorded before is "
        "intact. Free some space, then retry."
    )
    assert result["check"] == "ok"
    assert result["reasons"] == ["committed"] * 5
    assert result["after"] == 6


# -- a damaged memory index --------------------------------------------------------------


def test_damaged_memory_index_stops_the_cli_and_recover_memory_gets_it_going(
    grounding_home: Path,
) -> None:
    home = first_session(memory="chunks")
    index = home / "chroma" / "chroma.sqlite3"
    data = bytearray(index.read_bytes())
    data[:100] = bytes(100)  # the SQLite header
    index.write_bytes(bytes(data))

    line = one_clean_line(run_cli(grounding_home, "chat", "--plain"))
    assert line == (
        f"grounding: the memory index at {home / 'chroma'} is damaged (error returned from "
        "database: (code: 26) file is not a database); the ledger "
        f"{home / 'ledger.sqlite'} is intact (1 event). Run `grounding recover memory "
        "--profile default` to move the index aside and start an empty memory: past "
        "conversations are no longer recalled, every arrangement in the ledger still applies"
    )

    proc = run_cli(grounding_home, "recover", "memory")
    assert proc.returncode == 0, proc.stderr
    kept = [p for p in home.iterdir() if p.name.startswith("chroma.damaged-")]
    assert len(kept) == 1 and (kept[0] / "chroma.sqlite3").read_bytes() == bytes(data)
    assert proc.stdout.strip().startswith(f"moved the memory index to {kept[0]};")

    session = ChatSession(Settings(memory="chunks"))
    assert [a.id for a in session.ledger()] == ["a1"]  # the ledger was never touched
    assert session.agent.memory.count() == 0
    session.send("Any invitations?")
    session.close()


def _garble_segment(chroma: Path) -> None:
    segment = next(p for p in chroma.iterdir() if p.is_dir())
    (segment / "header.bin").write_bytes(b"\xff" * 100)


@pytest.mark.parametrize(
    ("damage", "detail"),
    [
        (lambda c: (c / "chroma.sqlite3").write_bytes(b"junk" * 1000), "file is not a database"),
        (
            lambda c: (c / "chroma.sqlite3").write_bytes(
                (c / "chroma.sqlite3").read_bytes()[:81920]
            ),
            "malformed",
        ),
        (lambda c: (c / "chroma.sqlite3").unlink(), "chroma.sqlite3 is missing but 1 index"),
        (_garble_segment, "Error loading hnsw index"),
    ],
    ids=["garbled", "truncated", "deleted", "segment"],
)
def test_damaged_memory_index_is_named_not_silently_emptied(
    tmp_path: Path, damage: Callable[[Path], object], detail: str
) -> None:
    memory = open_memory("history", tmp_path, None, "p")
    turns = [
        Turn(
            session_id="s1",
            session_date=DAY,
            index=i,
            speaker="user" if i % 2 == 0 else "assistant",
            text=f"turn {i}",
        )
        for i in range(1100)  # past Chroma's sync threshold: the index is on disk
    ]
    memory.add_session(turns)
    memory.client.close()  # type: ignore[union-attr]
    damage(tmp_path / "chroma")
    with pytest.raises(MemoryIndexError) as info:
        open_memory("history", tmp_path, None, "p")
    assert info.value.path == tmp_path / "chroma"
    assert detail in str(info.value)
    assert str(info.value).startswith(f"the memory index at {tmp_path / 'chroma'} is damaged (")


# -- a damaged ledger --------------------------------------------------------------------


def _garble(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[:16] = b"not a database!!"
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (_garble, "is damaged (file is not a database)"),
        (lambda p: p.write_bytes(p.read_bytes()[:8192]), "is damaged ("),
        (lambda p: p.write_bytes(b""), "is empty but the copy saved"),
        (lambda p: p.unlink(), "is missing but the copy saved"),
    ],
    ids=["garbled", "truncated", "emptied", "deleted"],
)
def test_damaged_ledger_stops_the_start_and_recover_restores_the_copy(
    grounding_home: Path, damage: Callable[[Path], object], says: str
) -> None:
    home = first_session()
    ledger = home / "ledger.sqlite"
    assert (home / LEDGER_BACKUP).exists()  # saved when the session ended
    assert not ledger.with_name("ledger.sqlite-wal").exists()
    damage(ledger)
    before = ledger.read_bytes() if ledger.exists() else None

    with pytest.raises(StorageError) as info:
        chat()
    message = str(info.value)
    assert message.startswith(f"the ledger database {ledger} {says}")
    assert "run `grounding recover ledger --profile default` to restore" in message
    assert "\n" not in message
    # No silent loss: the start neither repaired nor replaced the file.
    assert (ledger.read_bytes() if ledger.exists() else None) == before

    said = recover(home, "ledger", "default")
    assert said.startswith(f"restored the ledger {ledger} from the copy saved ")
    if before is not None:
        kept = [p for p in home.iterdir() if p.name.startswith("ledger.damaged-")]
        assert [p.read_bytes() for p in kept] == [before]
    session = chat()
    assert [a.id for a in session.ledger()] == ["a1"]
    assert session.ledger()[0].status == "pending"
    session.close()


def test_recover_ledger_from_the_cli_and_without_a_copy(grounding_home: Path) -> None:
    home = first_session()
    _garble(home / "ledger.sqlite")
    proc = run_cli(grounding_home, "recover", "ledger")
    assert proc.returncode == 0, proc.stderr
    assert "(1 event); the previous file is kept as" in proc.stdout
    assert ids(home / "ledger.sqlite") == ["a1"]

    (home / LEDGER_BACKUP).unlink()
    _garble(home / "ledger.sqlite")
    line = one_clean_line(run_cli(grounding_home, "recover", "ledger"))
    assert line.startswith("grounding: there is no usable saved copy of the ledger")
    assert (home / "ledger.sqlite").read_bytes()[:16] == b"not a database!!"  # untouched
    with pytest.raises(StorageError, match=r"no saved copy exists: move ledger\.sqlite"):
        chat()
