"""The ledger's SQLite store: event log, current view, as-of queries, atomicity, crash safety."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

import ledger.store as store_mod
from ledger.export import export_json, export_markdown
from ledger.model import ActionType, Arrangement, Evidence, Proposer, Scope, Status
from ledger.store import Change, LedgerStore, LedgerStoreError

ROOT = Path(__file__).resolve().parent.parent
DAY1 = date(2026, 3, 1)
DAY20 = date(2026, 3, 20)


def quote(text: str, session: str = "s1", day: date = DAY1, index: int = 1) -> Evidence:
    return Evidence(
        session_id=session, session_date=day, turn_index=index, speaker="user", text=text
    )


def arrangement(entry_id: str, status: Status = Status.pending, **kw: object) -> Arrangement:
    fields: dict[str, object] = {
        "id": entry_id,
        "proposer": Proposer.assistant,
        "action_type": ActionType.rsvp,
        "content": f"RSVP yes when the calendar is free ({entry_id})",
        "status": status,
        "created_at": DAY1,
        "updated_at": DAY1,
    }
    fields.update(kw)
    return Arrangement.model_validate(fields)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LedgerStore]:
    s = LedgerStore(tmp_path / "profile" / "ledger.db")
    yield s
    s.close()


def test_open_sets_wal_and_schema(store: LedgerStore) -> None:
    conn = sqlite3.connect(store.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"events", "current", "meta"} <= tables
    version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
    assert version == str(store_mod.SCHEMA_VERSION)
    conn.close()


def test_create_update_get_all(store: LedgerStore) -> None:
    a1, a2 = store.new_id(), store.new_id()
    assert (a1, a2) == ("a1", "a2")
    created = store.apply(
        [
            Change(arrangement(a1), "assistant proposed", [quote("Shall I always RSVP?")]),
            Change(arrangement(a2, action_type=ActionType.purchase), "user asked"),
        ],
        writer="rules",
        session_id="s1",
        session_date=DAY1,
    )
    assert [e.op for e in created] == ["create", "create"]
    assert created[0].seq < created[1].seq
    assert created[0].evidence[0].text == "Shall I always RSVP?"

    confirmed = arrangement(a1, Status.confirmed, updated_at=DAY20)
    (updated,) = store.apply(
        [Change(confirmed, "user accepted")], writer="user", session_id="s20", session_date=DAY20
    )
    assert updated.op == "update"
    assert updated.writer == "user"

    assert store.get(a1) == confirmed
    assert store.get("nope") is None
    assert [a.id for a in store.all()] == [a1, a2]  # creation order, not update order
    assert [a.id for a in store.all(Status.confirmed)] == [a1]
    assert [a.id for a in store.all(Status.pending)] == [a2]

    log = store.events(a1)
    assert [(e.op, e.arrangement.status, e.reason) for e in log] == [
        ("create", Status.pending, "assistant proposed"),
        ("update", Status.confirmed, "user accepted"),
    ]
    assert [e.seq for e in store.events()] == [1, 2, 3]
    assert [e.entry_id for e in store.events(session_id="s20")] == [a1]
    assert store.last_seq == 3


def test_new_id_skips_ids_already_used(store: LedgerStore) -> None:
    store.apply([Change(arrangement("a1"), "hand-made id")], writer="tui")
    assert store.new_id() == "a2"


def test_events_are_append_only(store: LedgerStore) -> None:
    store.apply([Change(arrangement("a1"), "proposed")], writer="rules")
    conn = sqlite3.connect(store.path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE events SET reason = 'rewritten history'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM events")
    conn.close()
    assert store.events()[0].reason == "proposed"


def test_apply_is_atomic(store: LedgerStore, monkeypatch: pytest.MonkeyPatch) -> None:
    store.apply([Change(arrangement("a1"), "before")], writer="rules")
    real_dump = store_mod._dump_arrangement
    calls = {"n": 0}

    def flaky_dump(a: Arrangement) -> str:
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("serialization failed on the 3rd change")
        return real_dump(a)

    monkeypatch.setattr(store_mod, "_dump_arrangement", flaky_dump)
    batch = [
        Change(arrangement("a1", Status.confirmed), "update in batch"),
        Change(arrangement("a2"), "create in batch"),
        Change(arrangement("a3"), "the bad one"),
    ]
    with pytest.raises(RuntimeError, match="3rd change"):
        store.apply(batch, writer="llm", session_id="s2", session_date=DAY20)
    monkeypatch.undo()

    assert [e.reason for e in store.events()] == ["before"]
    assert [(a.id, a.status) for a in store.all()] == [("a1", Status.pending)]
    with pytest.raises(KeyError):
        store.as_of(session_id="s2")  # the session marker rolled back too
    # The store is still usable after the rollback.
    store.apply(batch, writer="llm")
    assert [a.id for a in store.all()] == ["a1", "a2", "a3"]


def test_as_of_by_date_seq_and_session(store: LedgerStore) -> None:
    store.apply(
        [Change(arrangement("a1"), "proposed"), Change(arrangement("a2"), "proposed")],
        writer="rules",
        session_id="s1",
        session_date=DAY1,
    )
    store.apply([], writer="rules", session_id="s5", session_date=date(2026, 3, 5))
    store.apply(
        [Change(arrangement("a1", Status.confirmed, updated_at=DAY20), "accepted")],
        writer="rules",
        session_id="s20",
        session_date=DAY20,
    )
    store.apply(
        [Change(arrangement("a3", created_at=DAY20, updated_at=DAY20), "proposed")],
        writer="rules",
        session_id="s21",
        session_date=date(2026, 3, 21),
    )

    def statuses(items: list[Arrangement]) -> dict[str, Status]:
        return {a.id: a.status for a in items}

    day1 = {"a1": Status.pending, "a2": Status.pending}
    assert statuses(store.as_of(session_date=DAY1)) == day1
    assert statuses(store.as_of(session_date=date(2026, 3, 19))) == day1
    assert statuses(store.as_of(session_date=DAY20)) == {**day1, "a1": Status.confirmed}
    assert store.as_of(session_date=date(2026, 2, 1)) == []
    assert statuses(store.as_of(seq=2)) == day1
    assert statuses(store.as_of(seq=3)) == {**day1, "a1": Status.confirmed}
    assert statuses(store.as_of(session_id="s1")) == day1
    assert statuses(store.as_of(session_id="s5")) == day1  # a session that changed nothing
    assert statuses(store.as_of(session_id="s20"))["a1"] == Status.confirmed
    assert [a.id for a in store.as_of()] == [a.id for a in store.all()] == ["a1", "a2", "a3"]
    with pytest.raises(KeyError):
        store.as_of(session_id="never")
    with pytest.raises(ValueError):
        store.as_of(session_date=DAY1, seq=1)


def test_as_of_dates_sessionless_changes_by_the_entry(store: LedgerStore) -> None:
    store.apply([Change(arrangement("a1"), "proposed")], writer="rules", session_date=DAY1)
    store.apply(
        [Change(arrangement("a1", Status.rejected, updated_at=DAY20), "revoked in the TUI")],
        writer="tui",
    )
    assert store.as_of(session_date=DAY1)[0].status == Status.pending
    assert store.as_of(session_date=DAY20)[0].status == Status.rejected


def test_chain_of_a_revision(store: LedgerStore) -> None:
    store.apply([Change(arrangement("a1", Status.confirmed), "accepted")], writer="rules")
    store.apply([Change(arrangement("a9"), "unrelated")], writer="rules")
    store.apply(
        [
            Change(arrangement("a1", Status.revised, superseded_by="a2"), "user revised"),
            Change(arrangement("a2", Status.confirmed, previous="a1"), "the revision"),
        ],
        writer="rules",
    )
    # A second revision that only sets `previous` (the old entry is found by query).
    store.apply(
        [Change(arrangement("a3", Status.confirmed, previous="a2"), "revised again")],
        writer="rules",
    )
    expected = ["a1", "a2", "a3"]
    for entry in expected:
        assert [a.id for a in store.chain(entry)] == expected
    assert [a.id for a in store.chain("a9")] == ["a9"]
    assert store.chain("missing") == []


def test_chain_survives_a_cycle(store: LedgerStore) -> None:
    store.apply(
        [
            Change(arrangement("a1", previous="a2", superseded_by="a2"), "odd"),
            Change(arrangement("a2", previous="a1", superseded_by="a1"), "odd"),
        ],
        writer="llm",
    )
    assert sorted(a.id for a in store.chain("a1")) == ["a1", "a2"]


def test_reopen_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    with LedgerStore(path) as s:
        ids = [s.new_id() for _ in range(3)]
        s.apply([Change(arrangement(i), "proposed", [quote(i)]) for i in ids], writer="rules")
        before_events = s.events()
        before_all = s.all()
    with pytest.raises(LedgerStoreError, match="closed"):
        s.all()
    with LedgerStore(path) as s:
        assert s.events() == before_events
        assert s.all() == before_all
        assert s.new_id() == "a4"  # the id counter survives too


def test_backup_to_produces_an_identical_store(store: LedgerStore, tmp_path: Path) -> None:
    store.new_id()
    store.apply(
        [Change(arrangement("a1"), "proposed", [quote("hi")])],
        writer="rules",
        session_id="s1",
        session_date=DAY1,
    )
    store.apply([Change(arrangement("a1", Status.confirmed), "accepted")], writer="user")
    frozen = tmp_path / "frozen" / "ledger.db"
    store.backup_to(frozen)

    def dump(path: Path) -> list[str]:
        conn = sqlite3.connect(path)
        lines = list(conn.iterdump())
        lines.append(str(conn.execute("PRAGMA application_id").fetchone()[0]))
        conn.close()
        return lines

    assert dump(frozen) == dump(store.path)
    with LedgerStore(frozen) as copy:
        assert copy.events() == store.events()
        assert copy.all() == store.all()
        assert copy.as_of(session_id="s1") == store.as_of(session_id="s1")
        assert copy.new_id() == store.new_id() == "a2"

    # Restore: later changes disappear, the frozen state comes back.
    store.apply([Change(arrangement("a7"), "after the freeze")], writer="rules")
    store.restore_from(frozen)
    assert [a.id for a in store.all()] == ["a1"]
    assert len(store.events()) == 2
    with pytest.raises(LedgerStoreError):
        store.backup_to(store.path)


def test_threads_share_one_store(store: LedgerStore) -> None:
    def work() -> None:
        for _ in range(10):
            store.apply([Change(arrangement(store.new_id()), "threaded")], writer="rules")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({a.id for a in store.all()}) == 40
    assert len(store.events()) == 40


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    path.write_bytes(b"this is a text file, not a database " * 200)
    with pytest.raises(LedgerStoreError, match="not a SQLite database") as info:
        LedgerStore(path)
    assert str(path) in str(info.value)
    assert "Move the file aside" in str(info.value)


def test_someone_elses_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE checkpoints (id INTEGER)")
    conn.commit()
    conn.close()
    with pytest.raises(LedgerStoreError, match="not a ledger store"):
        LedgerStore(path)


def test_locked_beyond_timeout_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    with LedgerStore(path, timeout=0.2) as s:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another writer holds the lock
        try:
            with pytest.raises(LedgerStoreError, match="locked") as info:
                s.apply([Change(arrangement("a1"), "proposed")], writer="rules")
            assert str(path) in str(info.value)
            assert s.all() == []  # reads still work under WAL
        finally:
            other.execute("ROLLBACK")
            other.close()
        s.apply([Change(arrangement("a1"), "proposed")], writer="rules")
        assert s.get("a1") is not None


CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from datetime import date
    import ledger.store as store_mod
    from ledger.model import Arrangement
    from ledger.store import Change, LedgerStore

    path, committed, doomed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

    def make(i):
        return Arrangement(
            id=f"a{i}", proposer="assistant", action_type="send", content=f"rule {i}",
            status="pending", created_at=date(2026, 3, 1), updated_at=date(2026, 3, 1),
        )

    store = LedgerStore(path)
    for i in range(1, committed + 1):
        store.apply([Change(make(i), "committed")], writer="rules", session_id=f"s{i}")
    print("committed", flush=True)

    real_dump = store_mod._dump_arrangement
    written = [0]

    def dump_then_die(a):
        # Called inside apply()'s open transaction: die after half the batch is inserted.
        written[0] += 1
        if written[0] > doomed // 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return real_dump(a)

    store_mod._dump_arrangement = dump_then_die
    batch = [Change(make(i), "never committed") for i in range(1000, 1000 + doomed)]
    store.apply(batch, writer="rules", session_id="doomed")
    print("unreachable", flush=True)
    """
)


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_writer_killed_mid_transaction_loses_nothing_committed(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    committed, doomed = 25, 400
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(committed), str(doomed)],
        capture_output=True,
        text=True,
        timeout=60,
        env=_child_env(),
        cwd=ROOT,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert proc.stdout.split() == ["committed"]
    assert path.with_name(path.name + "-wal").exists()  # killed before any checkpoint

    with LedgerStore(path) as s:
        assert s.integrity_check() == "ok"
        ids = [a.id for a in s.all()]
        assert ids == [f"a{i}" for i in range(1, committed + 1)]
        assert all(e.reason == "committed" for e in s.events())
        assert len(s.events()) == committed
        with pytest.raises(KeyError):
            s.as_of(session_id="doomed")
        # The store takes new writes after the crash.
        s.apply([Change(arrangement(s.new_id()), "after the crash")], writer="rules")
        assert len(s.all()) == committed + 1


KILLED_FROM_OUTSIDE = textwrap.dedent(
    """
    import sys
    from datetime import date
    from ledger.model import Arrangement
    from ledger.store import Change, LedgerStore

    store = LedgerStore(sys.argv[1])
    i = 0
    while True:
        i += 1
        batch = [
            Change(Arrangement(
                id=f"a{i}-{k}", proposer="user", action_type="purchase", content="x" * 2000,
                status="confirmed", created_at=date(2026, 3, 1), updated_at=date(2026, 3, 1),
            ), "loop")
            for k in range(5)
        ]
        store.apply(batch, writer="rules")
        print(i, flush=True)
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_writer_killed_from_outside_leaves_whole_batches(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_FROM_OUTSIDE, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        env=_child_env(),
        cwd=ROOT,
    )
    assert proc.stdout is not None
    acknowledged = 0
    for line in proc.stdout:
        acknowledged = int(line)
        if acknowledged >= 30:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()

    with LedgerStore(path) as s:
        assert s.integrity_check() == "ok"
        ids = {a.id for a in s.all()}
        batches = {entry.split("-")[0] for entry in ids}
        # Every acknowledged batch is there, and every batch present is whole.
        assert {f"a{i}" for i in range(1, acknowledged + 1)} <= batches
        assert len(ids) == 5 * len(batches)
        assert len(s.events()) == len(ids)


def test_exports_contain_ids_statuses_and_quotes(store: LedgerStore) -> None:
    store.apply(
        [
            Change(
                arrangement(
                    "a1",
                    Status.scoped,
                    scope=Scope(text="only for the climbing club", groups=["climbing"]),
                    evidence=[quote("Yes, but only for the climbing club", "s3", date(2026, 3, 4))],
                ),
                "scoped",
            ),
            Change(arrangement("a2", Status.rejected, content="Buy | reorder milk"), "no"),
        ],
        writer="rules",
    )
    doc = json.loads(export_json(store.all(), store.events()))
    assert [(a["id"], a["status"]) for a in doc["arrangements"]] == [
        ("a1", "scoped"),
        ("a2", "rejected"),
    ]
    assert doc["arrangements"][0]["created_at"] == "2026-03-01"
    assert [e["op"] for e in doc["events"]] == ["create", "create"]
    assert export_json(store.all()) == export_json(store.all())  # stable
    assert "events" not in json.loads(export_json(store.all()))

    md = export_markdown(store.all())
    assert "| id | status | proposer | action | rule | scope |" in md
    assert "| a1 | scoped | assistant | rsvp |" in md
    assert "only for the climbing club |" in md
    assert "Buy \\| reorder milk" in md
    assert "> [2026-03-04 · session s3 · user] Yes, but only for the climbing club" in md
    assert "_No arrangements._" in export_markdown([])
