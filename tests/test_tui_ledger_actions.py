"""Confirm, revoke, make standing and export from the TUI: user-authored ledger events."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from agent.ledger_actions import (
    LedgerActionError,
    confirm_entry,
    export_ledger,
    make_standing,
    revoke_entry,
)
from ledger.gate import Gate
from ledger.model import (
    ActionType,
    Arrangement,
    Decision,
    Evidence,
    GateResult,
    Proposer,
    Status,
)
from ledger.scope import CallFacts
from ledger.store import Change, LedgerStore

DAY1 = date(2026, 5, 4)
DAY2 = date(2026, 5, 18)


def pending(entry_id: str = "a1") -> Arrangement:
    quote = Evidence(
        session_id="s1",
        session_date=DAY1,
        turn_index=1,
        speaker="assistant",
        text="Want me to RSVP yes to invitations like this whenever you're free from now on?",
    )
    return Arrangement(
        id=entry_id,
        proposer=Proposer.assistant,
        action_type=ActionType.rsvp,
        content="RSVP yes to invitations like this whenever you're free from now on",
        status=Status.pending,
        evidence=[quote],
        created_at=DAY1,
        updated_at=DAY1,
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LedgerStore]:
    s = LedgerStore(tmp_path / "ledger.sqlite")
    s.apply([Change(pending(), "proposed", [])], writer="rules", session_id="s1", session_date=DAY1)
    yield s
    s.close()


def test_confirm_writes_a_user_authored_event(store: LedgerStore) -> None:
    event = confirm_entry(store, "a1", DAY2)
    assert event.writer == "tui" and event.op == "update"
    entry = store.get("a1")
    assert entry is not None and entry.status == Status.confirmed
    assert entry.updated_at == DAY2
    quote = entry.evidence[-1]
    assert quote.speaker == "user" and quote.text == "[TUI] confirmed a1"
    assert quote.session_date == DAY2
    assert len(entry.evidence) == 2  # the original quote is kept
    assert [e.writer for e in store.events("a1")] == ["rules", "tui"]
    assert store.events("a1")[-1].evidence == [quote]


def test_revoke_marks_rejected(store: LedgerStore) -> None:
    event = revoke_entry(store, "a1", DAY2)
    assert event.arrangement.status == Status.rejected
    assert event.arrangement.evidence[-1].text == "[TUI] revoked a1"
    assert event.reason == "the user revoked it in the TUI"


def test_unknown_or_unchanged_entries_are_errors(store: LedgerStore) -> None:
    with pytest.raises(LedgerActionError, match="no ledger entry 'a9'"):
        confirm_entry(store, "a9", DAY2)
    confirm_entry(store, "a1", DAY2)
    with pytest.raises(LedgerActionError, match="already confirmed"):
        confirm_entry(store, "a1", DAY2)
    assert len(store.events("a1")) == 2


def _blocked(entry_id: str | None) -> GateResult:
    return GateResult(
        decision=Decision.confirm,
        reason="I proposed this but you never accepted it",
        tool="rsvp",
        args={"invitation_id": "inv-sam-games", "response": "yes"},
        entry_id=entry_id,
    )


def test_make_standing_confirms_the_cited_entry(store: LedgerStore) -> None:
    event = make_standing(store, _blocked("a1"), DAY2)
    assert event.entry_id == "a1" and event.arrangement.status == Status.confirmed


def test_make_standing_without_entry_creates_a_user_rule_the_gate_honours(
    store: LedgerStore,
) -> None:
    event = make_standing(store, _blocked(None), DAY2, request="Sam invited me to games night")
    entry = event.arrangement
    assert event.op == "create" and event.writer == "tui"
    assert entry.id == "a2" and entry.proposer == Proposer.user
    assert entry.status == Status.confirmed and entry.action_type == ActionType.rsvp
    assert entry.context == "Sam invited me to games night"
    assert "approved rsvp(invitation_id=inv-sam-games, response=yes)" in entry.evidence[0].text
    revoke_entry(store, "a1", DAY2)  # leave the user rule as the only live one
    facts = CallFacts(
        tool="rsvp",
        args={"invitation_id": "inv-ana-games", "response": "yes"},
        request="Ana invited me to her games night",
        entity_text="games night",
        today=DAY2,
    )
    decision = Gate(store.all).check(facts, DAY2)
    assert decision.decision == Decision.allow, decision
    assert decision.entry_id == "a2"


def test_export_writes_json_and_markdown(store: LedgerStore, tmp_path: Path) -> None:
    json_path, md_path = export_ledger(store, tmp_path / "out")
    doc = json.loads(json_path.read_text(encoding="utf-8"))
    assert [a["id"] for a in doc["arrangements"]] == ["a1"]
    assert len(doc["events"]) == 1
    assert "| a1 | pending |" in md_path.read_text(encoding="utf-8")
