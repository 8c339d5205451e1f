"""Provenance check: a detail only an assistant turn ever said makes the gate ask."""

from __future__ import annotations

from datetime import date

from ledger.model import Arrangement, Proposer, Status
from ledger.provenance import check_provenance, distinguishing_details
from ledger.scope import CallFacts

DAY = date(2027, 1, 5)


def _facts(request: str) -> CallFacts:
    return CallFacts(
        tool="purchase",
        args={"product_id": "piranesi-pb"},
        request=request,
        entity_text="Piranesi (paperback) format paperback",
        competing=["Piranesi (hardcover) format hardcover", "Piranesi (audiobook) format audio"],
    )


def _entry(content: str, status: Status) -> Arrangement:
    return Arrangement(
        id="a1",
        proposer=Proposer.assistant,
        action_type="purchase",
        content=content,
        status=status,
        created_at=DAY,
        updated_at=DAY,
    )


def test_details_are_what_sets_the_item_apart_minus_the_request() -> None:
    assert distinguishing_details(_facts("Order me Piranesi")) == {"paperback"}
    assert distinguishing_details(_facts("Order me Piranesi in paperback")) == set()


def test_detail_only_the_assistant_said_fails() -> None:
    exchanges = [
        ("user", "Can you get me a copy of Piranesi?"),
        ("assistant", "Ordering the paperback. Want me to always get paperbacks?"),
        ("user", "How do I descale a kettle?"),
    ]
    result = check_provenance(_facts("Order me Piranesi"), exchanges, [])
    assert not result.ok
    assert result.unsupported == ["paperback"]
    assert "only I ever said" in result.reason


def test_detail_from_a_user_turn_or_a_confirmed_entry_passes() -> None:
    user_said = [("user", "I only read paperbacks these days."), ("assistant", "Noted.")]
    assert check_provenance(_facts("Order me Piranesi"), user_said, []).ok
    me_only = [("assistant", "Ordering the paperback.")]
    confirmed = [_entry("always buy the paperback edition", Status.confirmed)]
    assert check_provenance(_facts("Order me Piranesi"), me_only, confirmed).ok
    pending = [_entry("always buy the paperback edition", Status.pending)]
    assert not check_provenance(_facts("Order me Piranesi"), me_only, pending).ok


def test_a_detail_stated_in_the_request_needs_no_history() -> None:
    result = check_provenance(_facts("Order me the paperback of Piranesi"), [], [])
    assert result.ok and result.unsupported == []


def test_a_timestamp_in_the_item_is_not_a_detail() -> None:
    """The invitation's machine time ("...T12:00") is not something only I said."""
    facts = CallFacts(
        tool="rsvp",
        args={"invitation_id": "inv-1", "response": "maybe"},
        request="rhys's garden party sunday",
        entity_text="Rhys garden party 2026-07-26T12:00",
        competing=["Dev curry night 2026-07-17T19:30"],
    )
    assert distinguishing_details(facts) == set()


def test_a_clock_time_in_the_item_is_not_a_detail() -> None:
    """ "Judging, 10:00-16:00" in an invitation's title: "00" is no word anyone said."""
    facts = CallFacts(
        tool="rsvp",
        args={"invitation_id": "inv-1", "response": "yes"},
        request="rhys needs judges for the debating competition",
        entity_text="Judging request: debating competition, 10:00-16:00",
        competing=["Striders parkrun trip", "Rooftop barbecue"],
    )
    assert "00" not in distinguishing_details(facts)


def test_a_detail_the_user_said_before_an_arrangement_passes_whatever_its_status() -> None:
    """The user turn an arrangement was made after is the user's own word ("my book club
    reads paperbacks"), even when the exchange is not among the most similar ones."""
    me_only = [("assistant", "Ordering the paperback.")]
    pending = _entry("Want me to always get paperbacks?", Status.pending)
    with_context = pending.model_copy(update={"context": "My book club only reads paperbacks."})
    assert not check_provenance(_facts("Order me Piranesi"), me_only, [pending]).ok
    assert check_provenance(_facts("Order me Piranesi"), me_only, [with_context]).ok
