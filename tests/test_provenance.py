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


def _invitation(request: str) -> CallFacts:
    return CallFacts(
        tool="rsvp",
        args={"invitation_id": "inv-quiz", "response": "yes"},
        request=request,
        entity_text="Rowing Club autumn quiz night at the boathouse, Harbour Road 2027-10-02",
        competing=[
            "Rowing Club annual dinner at the Grand Hotel 2027-11-20",
            "Rowing Club committee meeting 2027-10-12",
        ],
    )


def test_an_invitation_the_request_picks_out_rests_on_the_request() -> None:
    """The request names the quiz night; that the boathouse is on Harbour Road, which only
    I ever mentioned, describes the event and is not what the call rests on."""
    exchanges = [("assistant", "The boathouse is the one on Harbour Road, by the slipway.")]
    picked = _invitation("The Rowing Club's autumn quiz night is on the 2nd, I'm free.")
    assert distinguishing_details(picked) == set()
    assert check_provenance(picked, exchanges, []).ok
    # A request that fits every invitation equally picks none of them out: the details
    # that do, said only by me, still make the gate ask.
    vague = _invitation("Something from the Rowing Club came in.")
    assert "harbour" in distinguishing_details(vague)
    assert not check_provenance(vague, exchanges, []).ok


def test_an_item_the_request_picks_out_still_needs_its_variant_grounded() -> None:
    """A purchase is not an invitation: the request may name the book while the edition,
    said only by me, is what the call rests on."""
    facts = CallFacts(
        tool="purchase",
        args={"product_id": "circe-2e-kindle"},
        request="Order me the second edition of Circe",
        entity_text="Circe, second edition (Kindle)",
        competing=["Circe (paperback)", "Circe (hardcover)"],
    )
    assert distinguishing_details(facts) == {"kindle"}
    assert not check_provenance(facts, [("assistant", "Getting the Kindle edition.")], []).ok


def test_a_hyphenated_word_the_user_said_grounds_its_parts() -> None:
    facts = CallFacts(
        tool="send",
        args={"document_id": "full"},
        request="Devon wants to see the heron piece.",
        entity_text="Heron, full resolution",
        choices=[("Heron, full resolution", ["Heron, watermarked preview"])],
    )
    assert distinguishing_details(facts) == {"full", "resolution"}
    me_only = [("assistant", "I'll send the full resolution heron.")]
    assert not check_provenance(facts, me_only, []).ok
    user_said = [*me_only, ("user", "From now on, send the full-resolution file.")]
    assert check_provenance(facts, user_said, []).ok
