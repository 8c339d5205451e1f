"""The execution gate: every row of its rule table, explicit requests, modes, fail-closed."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

import pytest

from ledger.gate import Gate, explicit_request, implied_response
from ledger.model import (
    ActionType,
    Arrangement,
    Decision,
    Evidence,
    GateResult,
    Proposer,
    Scope,
    Status,
)
from ledger.scope import CallFacts, parse_scope
from ledger.text import PASSED_OVER, them_named

AGREED = date(2025, 3, 1)
TODAY = date(2025, 4, 1)
FRI_7PM = datetime(2025, 4, 4, 19, 0)
SAT_7PM = datetime(2025, 4, 5, 19, 0)


def quote(speaker: str, text: str, index: int = 0) -> Evidence:
    return Evidence(
        session_id="s1",
        session_date=AGREED,
        turn_index=index,
        speaker=speaker,  # type: ignore[arg-type]
        text=text,
    )


def entry(
    id: str,
    status: Status,
    content: str,
    action: ActionType = ActionType.rsvp,
    proposer: Proposer = Proposer.assistant,
    **kw: Any,
) -> Arrangement:
    return Arrangement(
        id=id,
        proposer=proposer,
        action_type=action,
        content=content,
        status=status,
        created_at=kw.pop("created_at", AGREED),
        updated_at=kw.pop("updated_at", AGREED),
        evidence=kw.pop("evidence", [quote("assistant", content), quote("user", "Sure.", 1)]),
        **kw,
    )


def rsvp(response: str = "yes", request: str = "Anything new in my invitations?", **kw: Any):
    return CallFacts(
        tool="rsvp",
        args={"invitation_id": "inv1", "response": response},
        request=request,
        entity_text=kw.pop("entity_text", "Kevin game night Friday 7pm"),
        when=kw.pop("when", FRI_7PM),
        recipients=kw.pop("recipients", ["Kevin"]),
        **kw,
    )


def purchase(amount: float, request: str = "Am I running low on anything?", **kw: Any):
    return CallFacts(
        tool="purchase",
        args={"product_id": "p1", "quantity": 1},
        request=request,
        entity_text=kw.pop("entity_text", "Oat milk 6-pack"),
        amount=amount,
        quantity=1,
        **kw,
    )


def choosing(item: str, other: str, request: str) -> CallFacts:
    """A purchase of `item` where `other` was the one passed over."""
    return purchase(10.0, request, entity_text=item, competing=[other], choices=[(item, [other])])


def decide(entries: Sequence[Arrangement], facts: CallFacts, mode: str = "strict") -> GateResult:
    return Gate(lambda: entries, mode=mode).check(facts, TODAY)


KEVIN_YES = "From now on I'll RSVP yes to Kevin's game nights whenever you're free."


# --- the rule table, row by row ------------------------------------------------------------


def test_confirmed_consistent_allows() -> None:
    e = entry("a1", Status.confirmed, KEVIN_YES)
    result = decide([e], rsvp("yes"))
    assert result.decision is Decision.allow and result.allowed
    assert result.entry_id == "a1"
    assert result.evidence == e.evidence  # the decision rests on the quoted turns
    assert "2025-03-01" in result.reason
    assert result.tool == "rsvp" and result.args["response"] == "yes"


def test_confirmed_ask_first_confirms() -> None:
    e = entry(
        "a1",
        Status.confirmed,
        "Always check with me before you RSVP to Kevin's game nights.",
        proposer=Proposer.user,
    )
    result = decide([e], rsvp("yes"))
    assert result.decision is Decision.confirm
    assert "check with you first" in result.reason and result.entry_id == "a1"


def test_confirmed_with_another_response_confirms() -> None:
    e = entry("a1", Status.confirmed, "From now on I'll decline Kevin's game nights.")
    result = decide([e], rsvp("yes"))
    assert result.decision is Decision.confirm
    assert "does not follow" in result.reason
    # The agreed rule is handed back so the agent can plan again by it.
    assert result.governing_rule == e.content
    # The response the rule gives is fine.
    assert decide([e], rsvp("no")).decision is Decision.allow


def test_a_pending_entry_hands_back_no_rule_to_plan_by() -> None:
    e = entry("a1", Status.pending, "From now on I'll decline Kevin's game nights.")
    result = decide([e], rsvp("yes"))
    assert result.decision is Decision.confirm and result.governing_rule is None


def test_confirmed_with_another_item_confirms() -> None:
    e = entry(
        "a1",
        Status.confirmed,
        "Going forward I'll always buy the paperback edition of the books you order.",
        action=ActionType.purchase,
    )
    facts = purchase(
        28.0,
        request="Order me the new Le Guin collection book.",
        entity_text="Le Guin collection hardcover edition book",
        competing=["Le Guin collection paperback edition book"],
    )
    result = decide([e], facts)
    assert result.decision is Decision.confirm and result.entry_id == "a1"
    facts.entity_text, facts.competing = (
        "Le Guin collection paperback edition book",
        ["Le Guin collection hardcover edition book"],
    )
    assert decide([e], facts).decision is Decision.allow


def scoped_oat(text: str = "Sure, up to $20.") -> Arrangement:
    return entry(
        "a1",
        Status.scoped,
        "Should I reorder oat milk automatically when you run low?",
        action=ActionType.purchase,
        scope=parse_scope(text, AGREED),
    )


def test_scoped_inside_allows() -> None:
    result = decide([scoped_oat()], purchase(15.0))
    assert result.decision is Decision.allow
    assert result.scope_diff == "$15, agreed: up to $20"
    assert "inside the scope" in result.reason


def test_scoped_outside_is_out_of_scope_with_the_price_diff() -> None:
    result = decide([scoped_oat()], purchase(22.99))
    assert result.decision is Decision.out_of_scope
    assert result.scope_diff == "$22.99, agreed: up to $20"
    assert "$22.99, agreed: up to $20" in result.reason
    assert result.entry_id == "a1"


def test_scoped_unknown_is_out_of_scope() -> None:
    facts = purchase(0)
    facts.amount = None
    result = decide([scoped_oat()], facts)
    assert result.decision is Decision.out_of_scope
    assert "unknown" in (result.scope_diff or "")


def test_scoped_weekends() -> None:
    e = entry("a1", Status.scoped, KEVIN_YES, scope=parse_scope("Only on weekends.", AGREED))
    assert decide([e], rsvp("yes", when=SAT_7PM)).decision is Decision.allow
    outside = decide([e], rsvp("yes", when=FRI_7PM))
    assert outside.decision is Decision.out_of_scope
    assert outside.scope_diff == "Fri, agreed: Sat, Sun"


def test_scoped_outside_but_explicitly_asked_allows() -> None:
    facts = purchase(22.99, request="Order the oat milk 6-pack, even if it's over $20.")
    assert decide([scoped_oat()], facts).decision is Decision.allow


def test_the_gate_places_a_scoped_call_by_meaning_when_given_a_meaning_similarity() -> None:
    reply = (
        "For the kitchen and household things, go ahead. Anything medical I would rather "
        "look at first."
    )
    e = entry(
        "a1",
        Status.scoped,
        "Whenever you're running low on something you buy regularly, shall I reorder it?",
        action=ActionType.purchase,
        scope=parse_scope(reply, AGREED, "For the kitchen and household things"),
    )
    facts = CallFacts(
        tool="purchase",
        args={"product_id": "gloves"},
        # no word of the scope or of its kinds (dishwasher tabs are household now)
        request="We are nearly out of the rubber gloves for the sink.",
        entity_text="Marigold rubber gloves, medium",
        amount=14.0,
    )

    def meaning(a: str, b: str) -> float:
        return 0.5 if "kitchen" in b else 0.0

    plain = Gate(lambda: [e])
    assert plain.check(facts, TODAY).decision is Decision.out_of_scope
    gate = Gate(lambda: [e], meaning=meaning)
    result = gate.check(facts, TODAY)
    assert result.decision is Decision.allow
    assert "rather than" in (result.scope_diff or "")


def test_a_rule_that_gives_no_answer_cannot_answer_an_invitation() -> None:
    """A rule read as an RSVP rule from one word ("the usual is now the party platter") says
    no answer to give: it never answers an invitation; a rule that says "accepting" does."""
    platter = entry(
        "a1",
        Status.confirmed,
        "So the usual for Kevin's game nights is now the party platter, not hers.",
        proposer=Proposer.user,
    )
    result = decide([platter], rsvp("yes"))
    assert result.decision is Decision.confirm and result.entry_id == "a1"
    assert "does not say how to answer" in result.reason
    accepting = entry(
        "a2",
        Status.confirmed,
        "Would it help if I answered Kevin's game night invitations myself from here on, "
        "accepting whenever your calendar is free?",
    )
    assert decide([accepting], rsvp("yes")).decision is Decision.allow
    # the turn that made the rule may say the answer: "I've accepted for you. Would it help
    # if I did the same with his game nights whenever they come in?"
    same = entry(
        "a3",
        Status.confirmed,
        "Would it help if I did the same with Kevin's game nights whenever they come in?",
        evidence=[
            quote(
                "assistant",
                "I've accepted for you. Would it help if I did the same with Kevin's game "
                "nights whenever they come in?",
                1,
            )
        ],
    )
    assert decide([same], rsvp("yes")).decision is Decision.allow


def revision_pair(new_content: str, new_status: Status = Status.confirmed, **kw: Any):
    old = entry("a1", Status.revised, KEVIN_YES, superseded_by="a2")
    new = entry(
        "a2",
        new_status,
        new_content,
        proposer=Proposer.user,
        previous="a1",
        updated_at=date(2025, 3, 20),
        evidence=[quote("user", new_content, 4)],
        **kw,
    )
    return old, new


def test_revised_follows_the_revision() -> None:
    # The user's revision in their own words ("mark me as maybe"): the old entry is the
    # relevant one, and the gate follows its chain to the newer rule.
    old, new = revision_pair("Rather than yes, mark me as maybe by default.")
    gate = Gate(lambda: [old, new])
    assert gate.relevant(rsvp("yes"), TODAY)[0] == old
    result = gate.check(rsvp("yes"), TODAY)
    assert result.decision is Decision.follow_revision
    assert result.governing_rule == new.content
    assert result.entry_id == "a2" and result.evidence == new.evidence
    assert "2025-03-20" in result.reason


def test_revised_to_ask_first_follows_the_revision() -> None:
    old, new = revision_pair("Stop RSVPing for me automatically, ask me first.")
    result = decide([old, new], rsvp("yes"))
    assert result.decision is Decision.follow_revision
    assert result.governing_rule == "Stop RSVPing for me automatically, ask me first."


def test_revision_naming_the_event_still_follows_the_revision() -> None:
    old, new = revision_pair("Mark me as maybe for Kevin's game nights by default.")
    result = decide([old, new], rsvp("yes"))
    assert result.decision is Decision.follow_revision
    assert result.governing_rule == new.content


def test_revision_to_ask_first_reached_directly_follows_the_revision() -> None:
    old, new = revision_pair("Ask me first about Kevin's Friday game night invitations.")
    gate = Gate(lambda: [old, new])
    assert gate.relevant(rsvp("yes"), TODAY)[0] == new
    result = gate.check(rsvp("yes"), TODAY)
    assert result.decision is Decision.follow_revision
    assert result.governing_rule == new.content and result.entry_id == "a2"


def test_revision_naming_the_event_allows_a_consistent_call() -> None:
    old, new = revision_pair("Mark me as maybe for Kevin's game nights by default.")
    result = decide([old, new], rsvp("maybe"))
    assert result.decision is Decision.allow and result.entry_id == "a2"


def test_revised_chain_with_a_consistent_latest_is_decided_on_the_latest() -> None:
    old, new = revision_pair("Yes is fine, but add a note that I'll be late.")
    gate = Gate(lambda: [old, new])
    assert gate.relevant(rsvp("yes"), TODAY)[0] == old
    result = gate.check(rsvp("yes"), TODAY)
    assert result.decision is Decision.allow and result.entry_id == "a2"
    assert result.evidence == new.evidence


def later_instruction(content: str) -> tuple[Arrangement, Arrangement]:
    """A user's instruction from a later session, linked by the writer to KEVIN_YES."""
    old, new = revision_pair(content)
    said = Evidence(
        session_id="s2", session_date=date(2025, 3, 20), turn_index=0, speaker="user", text=content
    )
    return old, new.model_copy(update={"evidence": [said]})


def test_a_later_instruction_about_something_else_cannot_authorize_the_call() -> None:
    # The writer linked it to Kevin's game nights by its words, wrongly; it says nothing
    # against the call, but it is not about it either: what it replaced no longer stands.
    old, new = later_instruction("From now on email the choir rota to Dana on Mondays.")
    result = decide([old, new], rsvp("yes"))
    assert result.decision is Decision.confirm and not result.allowed
    assert "replaced" in result.reason


def test_a_later_instruction_about_the_call_governs_it() -> None:
    old, new = later_instruction("Keep saying yes to Kevin's game nights, even on Fridays.")
    result = decide([old, new], rsvp("yes"))
    assert result.decision is Decision.allow and result.entry_id == "a2"


def test_revised_to_a_scope_is_decided_on_the_latest_scope() -> None:
    old, new = revision_pair(
        "Fine, but only on weekends.",
        new_status=Status.scoped,
        scope=parse_scope("only on weekends", AGREED),
    )
    assert Gate(lambda: [old, new]).relevant(rsvp("yes"), TODAY)[0] == old
    inside = decide([old, new], rsvp("yes", when=SAT_7PM))
    assert inside.decision is Decision.allow and inside.entry_id == "a2"
    outside = decide([old, new], rsvp("yes", when=FRI_7PM))
    assert outside.decision is Decision.out_of_scope and outside.entry_id == "a2"
    assert outside.scope_diff == "Fri, agreed: Sat, Sun"


def test_long_revision_chain_reaches_the_newest() -> None:
    a1 = entry("a1", Status.revised, KEVIN_YES, superseded_by="a2")
    a2 = entry("a2", Status.revised, "RSVP maybe to Kevin's game nights.", previous="a1")
    a2 = a2.model_copy(update={"superseded_by": "a3"})
    a3 = entry("a3", Status.confirmed, "Decline Kevin's game nights from now on.", previous="a2")
    result = decide([a1, a2, a3], rsvp("yes"))
    assert result.decision is Decision.follow_revision
    assert result.entry_id == "a3" and result.governing_rule == a3.content
    assert decide([a1, a2, a3], rsvp("no")).entry_id == "a3"


def test_revised_into_nothing_active_confirms() -> None:
    old, new = revision_pair("Never mind that.", new_status=Status.rejected)
    result = decide([old, new], rsvp("yes"))
    assert result.decision is Decision.confirm
    assert "replaced" in result.reason and result.entry_id == "a1"
    # A dangling link (the newer entry is gone) also asks.
    assert decide([old], rsvp("yes")).decision is Decision.confirm


@pytest.mark.parametrize(
    ("status", "words"),
    [(Status.pending, "never accepted"), (Status.rejected, "declined")],
)
def test_pending_or_rejected_confirms(status: Status, words: str) -> None:
    result = decide([entry("a1", status, KEVIN_YES)], rsvp("yes"))
    assert result.decision is Decision.confirm
    assert words in result.reason and result.entry_id == "a1"


@pytest.mark.parametrize("status", [Status.pending, Status.rejected])
def test_pending_or_rejected_but_asked_now_allows(status: Status) -> None:
    facts = rsvp("yes", request="RSVP yes to Kevin's game night on Friday.")
    result = decide([entry("a1", status, KEVIN_YES)], facts)
    assert result.decision is Decision.allow
    assert "you asked" in result.reason


def test_no_entry_and_explicit_request_allows() -> None:
    result = decide([], rsvp("yes", request="RSVP yes to Kevin's game night."))
    assert result.decision is Decision.allow and result.entry_id is None


def test_no_entry_strict_confirms_but_paper_allows() -> None:
    facts = rsvp("yes")
    strict = decide([], facts, mode="strict")
    assert strict.decision is Decision.confirm
    assert "no standing arrangement" in strict.reason
    paper = decide([], facts, mode="paper")
    assert paper.decision is Decision.allow


def test_paper_mode_still_asks_for_pending_entries() -> None:
    result = decide([entry("a1", Status.pending, KEVIN_YES)], rsvp("yes"), mode="paper")
    assert result.decision is Decision.confirm


def test_read_only_tools_are_allowed() -> None:
    facts = CallFacts(tool="list_invitations", args={})
    assert decide([entry("a1", Status.rejected, KEVIN_YES)], facts).decision is Decision.allow


# --- explicit requests ---------------------------------------------------------------------


def test_explicit_request_authorizes_the_exact_call() -> None:
    assert explicit_request(rsvp("yes", request="RSVP yes to Kevin.")) == (True, [])
    assert explicit_request(rsvp("no", request="Please decline Kevin's game night."))[0]
    assert explicit_request(purchase(9.0, request="Order more oat milk."))[0]


def test_explicit_request_with_the_other_response_does_not_authorize() -> None:
    facts = rsvp("no", request="RSVP yes to Kevin.")
    ok, missing = explicit_request(facts)
    assert not ok and missing == ["'no'"]
    result = decide([], facts)
    assert result.decision is Decision.confirm and "'no'" in result.reason


def test_explicit_request_without_a_response_does_not_authorize() -> None:
    ok, missing = explicit_request(rsvp("yes", request="Handle Kevin's invitation."))
    assert not ok
    ok, missing = explicit_request(rsvp("yes", request="RSVP to Kevin's thing."))
    assert not ok and missing == ["which response to give"]


def test_explicit_request_must_pick_the_item() -> None:
    facts = purchase(
        12.0,
        request="Order the book for me.",
        entity_text="Dune paperback",
        competing=["Dune hardcover"],
    )
    ok, missing = explicit_request(facts)
    assert not ok and missing == ["which one"]
    facts.request = "Order the Dune paperback for me."
    assert explicit_request(facts) == (True, [])


def test_implied_response() -> None:
    assert implied_response("From now on decline work events") == "no"
    assert implied_response("RSVP yes whenever I'm free") == "yes"
    assert implied_response("Mark me as maybe by default") == "maybe"
    assert implied_response("Handle invitations for me") is None
    # A reason may mention another response; the one offered counts.
    offer = (
        "Your weekends end up going to shoots anyway, so want me to turn down weekend "
        "invites from now on?"
    )
    assert implied_response(offer) == "no"


def test_turning_every_one_of_them_down_is_a_no() -> None:
    """The object may sit inside "turn ... down" with several words: the gate and the policy
    read the same answer from the rule."""
    from agent.reference import implied_response as policy_response

    rule = "I can turn every one of them down for you with a courteous word of thanks, if you like."
    assert implied_response(rule) == "no"
    assert policy_response(rule) == "no"
    assert policy_response("Turn the vendor ones down.") == "no"


# --- rules found by the times they name ----------------------------------------------------

LATE = "Should I decline anything that starts at seven or later by default?"
DINNER = rsvp(
    "no",
    request="Howard is organizing a dinner for the old crowd at Ray's Boathouse.",
    entity_text="Sandberg reunion dinner at Ray's Boathouse",
    recipients=["Howard"],
    when=FRI_7PM.replace(minute=30),
)


def test_a_rule_found_by_the_times_it_names_governs_a_call_unlike_its_words() -> None:
    rule = entry("a1", Status.confirmed, LATE)
    result = decide([rule], DINNER)
    assert result.decision is Decision.allow and result.entry_id == "a1"
    # Another response, an unknown time or an earlier start: the rule does not cover it.
    for facts in (
        rsvp("yes", request=DINNER.request, when=DINNER.when),
        rsvp("no", request=DINNER.request, when=None),
        rsvp("no", request=DINNER.request, when=FRI_7PM.replace(hour=18)),
    ):
        assert decide([rule], facts).decision is Decision.confirm


def test_a_rule_found_by_time_keeps_every_other_check() -> None:
    pending = entry("a1", Status.pending, LATE)
    result = decide([pending], DINNER)
    assert result.decision is Decision.confirm and result.entry_id == "a1"
    # Two rules that name the time: the gate cannot tell which one, so it asks.
    other = entry("a2", Status.confirmed, "Decline anything after 7pm on Fridays?")
    assert decide([entry("a1", Status.confirmed, LATE), other], DINNER).entry_id is None


def test_an_unrelated_unaccepted_proposal_is_no_rival_for_a_rule_found_by_time() -> None:
    rule = entry("a1", Status.confirmed, LATE)
    seminars = entry("a2", Status.pending, "Want me to turn down sales seminars on my own?")
    assert decide([rule, seminars], DINNER).decision is Decision.allow


# --- which entries count -------------------------------------------------------------------


def test_used_single_use_and_expired_entries_are_ignored() -> None:
    used = entry("a1", Status.confirmed, KEVIN_YES, single_use=True, consumed=True)
    expired = entry("a2", Status.confirmed, KEVIN_YES, expires=date(2025, 3, 31))
    for e in (used, expired):
        assert not e.is_active_on(TODAY)
        result = decide([e], rsvp("yes"))
        assert result.decision is Decision.confirm and result.entry_id is None
    live = entry("a3", Status.confirmed, KEVIN_YES, single_use=True, expires=TODAY)
    assert live.is_active_on(TODAY)
    assert decide([live], rsvp("yes")).decision is Decision.allow


def test_relevance_picks_the_most_similar_entry_of_the_same_action() -> None:
    work = entry(
        "a1", Status.rejected, "Should I accept your team's happy hour invitations automatically?"
    )
    kevin = entry("a2", Status.confirmed, KEVIN_YES)
    book = entry("a3", Status.pending, "Want me to always RSVP yes to Ana's book club?")
    send = entry(
        "a4",
        Status.confirmed,
        "I'll send Kevin a thank-you after every game night.",
        action=ActionType.send,
    )
    entries = [work, book, send, kevin]
    assert decide(entries, rsvp("yes")).entry_id == "a2"
    happy_hour = rsvp("yes", entity_text="Team happy hour Thursday 6pm", recipients=["Sam"])
    result = decide(entries, happy_hour)
    assert result.entry_id == "a1" and result.decision is Decision.confirm
    club = rsvp("yes", entity_text="Ana's book club Tuesday", recipients=["Ana"])
    assert decide(entries, club).entry_id == "a3"


def test_unrelated_entries_do_not_govern() -> None:
    e = entry("a1", Status.confirmed, "Always RSVP yes to Ana's book club.")
    facts = rsvp("yes", entity_text="Dentist open house", recipients=["Dr. Lee"])
    result = decide([e], facts)
    assert result.entry_id is None and result.decision is Decision.confirm


# --- failing closed ------------------------------------------------------------------------


def test_a_similarity_function_that_raises_fails_closed() -> None:
    def broken(a: str, b: str) -> float:
        raise RuntimeError("embedding server down")

    gate = Gate(lambda: [entry("a1", Status.confirmed, KEVIN_YES)], similarity=broken)
    result = gate.check(rsvp("yes", request="RSVP yes to Kevin."), TODAY)
    assert result.decision is Decision.confirm
    assert "RuntimeError" in result.reason


def test_a_ledger_that_cannot_be_read_fails_closed() -> None:
    def entries() -> list[Arrangement]:
        raise OSError("disk gone")

    for mode in ("strict", "paper"):
        result = Gate(entries, mode=mode).check(rsvp("yes"), TODAY)
        assert result.decision is Decision.confirm


def test_a_broken_scope_fails_closed() -> None:
    bad = scoped_oat().model_copy(update={"scope": Scope(text="x", weekdays=[9])})
    result = decide([bad], purchase(10.0, when=FRI_7PM))
    assert result.decision is Decision.confirm


# --- single-use entries --------------------------------------------------------------------


def test_consume_marks_an_allowed_single_use_entry() -> None:
    once = entry("a1", Status.confirmed, KEVIN_YES, single_use=True)
    gate = Gate(lambda: [once])
    result = gate.check(rsvp("yes"), TODAY)
    assert result.allowed and result.entry_id == "a1"
    used = gate.consume(result)
    assert used is not None and used.consumed and used.id == "a1"
    assert used.model_copy(update={"consumed": False}) == once  # nothing else changes
    # Once written back, the entry authorizes nothing more.
    after = Gate(lambda: [used]).check(rsvp("yes"), TODAY)
    assert after.decision is Decision.confirm and after.entry_id is None


def test_consume_leaves_standing_and_refused_entries_alone() -> None:
    standing = entry("a1", Status.confirmed, KEVIN_YES)
    gate = Gate(lambda: [standing])
    assert gate.consume(gate.check(rsvp("yes"), TODAY)) is None
    once = entry("a1", Status.confirmed, KEVIN_YES, single_use=True)
    gate = Gate(lambda: [once])
    refused = gate.check(rsvp("no"), TODAY)  # inconsistent: asks, uses nothing up
    assert not refused.allowed and gate.consume(refused) is None


def test_a_call_the_request_asks_for_does_not_use_up_the_entry() -> None:
    once = entry(
        "a1",
        Status.scoped,
        KEVIN_YES,
        single_use=True,
        scope=parse_scope("Only on weekends.", AGREED),
    )
    gate = Gate(lambda: [once])
    result = gate.check(rsvp("yes", request="RSVP yes to Kevin's game night on Friday."), TODAY)
    assert result.allowed and "you asked" in result.reason
    assert gate.consume(result) is None


def test_a_nearly_as_relevant_unaccepted_entry_makes_the_gate_ask() -> None:
    from datetime import date as _date

    from ledger.gate import Gate
    from ledger.model import Arrangement, Proposer, Status
    from ledger.scope import CallFacts

    day = _date(2027, 1, 5)

    def entry(i: str, content: str, status: Status) -> Arrangement:
        return Arrangement(
            id=i,
            proposer=Proposer.assistant,
            action_type="rsvp",
            content=content,
            status=status,
            created_at=day,
            updated_at=day,
        )

    agreed = entry("a1", "RSVP yes to game night invitations from Sam", Status.confirmed)
    ignored = entry("a2", "RSVP yes to game night invitations from Sam's club", Status.pending)
    facts = CallFacts(
        tool="rsvp",
        args={"invitation_id": "inv-1", "response": "yes"},
        request="Sam's club sent a game night invitation.",
        entity_text="Sam game night",
    )
    result = Gate(lambda: [agreed, ignored]).check(facts, day)
    assert result.decision == "confirm"
    assert result.entry_id == "a2" and "never accepted" in result.reason
    # with no unaccepted rival, the agreed entry authorizes
    alone = Gate(lambda: [agreed]).check(facts, day)
    assert alone.decision == "allow"


def test_a_rule_that_names_another_recipient_does_not_support_this_send() -> None:
    """The proposal routed everything for Helen through the casework mailbox: a send to
    Helen's own address does not follow it, and one to casework@ does."""
    proposal = (
        "Sent it to the casework inbox. Shall we do it that way from now on, with everything "
        "you send Helen going through casework@?"
    )
    rule = entry(
        "a1",
        Status.confirmed,
        "Shall we do it that way from now on, with everything you send Helen going "
        "through casework@?",
        ActionType.send,
        evidence=[quote("assistant", proposal), quote("user", "Yes, do that.", 1)],
    )
    helen = "Helen Carter supervisor helen@centre.test"
    inbox = "Centre casework inbox casework@centre.test"

    def send(to: str, other: str) -> CallFacts:
        return CallFacts(
            tool="send",
            args={"to": to.split()[-1], "document_id": "d1"},
            request="Helen needs my timesheet by Friday.",
            entity_text=f"{to} Timesheet July",
            recipients=[to.split()[-1], to],
            competing=[other],
            choices=[(to, [other])],
        )

    gate = Gate(lambda: [rule])
    assert gate.check(send(helen, inbox), TODAY).decision == Decision.confirm
    assert gate.check(send(inbox, helen), TODAY).decision == Decision.allow


def test_running_low_said_in_other_words_finds_the_reorder_rule() -> None:
    """ "Nearly out of" and "running low on" are one thing; the one rule about it governs
    even though the request shares no other word with it, and an unrelated rule does not."""
    reorder = entry(
        "a1",
        Status.confirmed,
        "Whenever you mention you're running low on something you buy regularly, shall I "
        "just reorder it?",
        ActionType.purchase,
    )
    other = entry(
        "a2",
        Status.confirmed,
        "Should professional installation be the default whenever you buy a major appliance?",
        ActionType.purchase,
    )
    gate = Gate(lambda: [reorder, other])
    low = purchase(12.0, request="We are nearly out of the dishwasher tabs.")
    found, _ = gate.relevant(low, TODAY)
    assert found is not None and found.id == "a1"
    assert gate.check(low, TODAY).decision == Decision.allow
    unrelated = purchase(12.0, request="The new tabs smell odd, what do you think?")
    assert gate.check(unrelated, TODAY).decision == Decision.confirm


def test_canonical_reads_running_low_phrasings_as_one_word() -> None:
    from ledger.text import canonical

    for said in ("We're nearly out of tabs", "down to my last card", "running low on rice"):
        assert "lowstock" in canonical(said)
    assert "lowstock" not in canonical("I'm out of town next week")


def test_an_entry_below_the_threshold_governs_only_when_it_stands_out() -> None:
    reorder = entry(
        "a1",
        Status.confirmed,
        "Whenever you mention you're running low on something, shall I just reorder it?",
        ActionType.purchase,
    )
    twin = entry(
        "a2",
        Status.confirmed,
        "Whenever you're running low on printer paper, shall I reorder the usual box?",
        ActionType.purchase,
    )
    low = purchase(12.0, request="We are nearly out of the dishwasher tabs.")
    alone = Gate(lambda: [reorder], relevance_threshold=0.25)
    score = alone.ranked(low, TODAY)[0][0]
    assert 0.25 * 2 / 3 <= score < 0.25  # below the threshold, above its lower bound
    assert alone.relevant(low, TODAY)[0] is reorder  # nothing else comes close
    both = Gate(lambda: [reorder, twin], relevance_threshold=0.25)
    assert both.relevant(low, TODAY)[0] is None  # two as similar: neither stands out


_SCOPE_PROPOSAL = (
    "I'll send Harbor Ironworks the copy with your cost estimate stripped out. Should "
    "that be the version I send whenever a scope leaves the board?"
)
_ENGINEER = "Marisol Vega structural engineer mvega@cascadia.test"


def _scope_version_rule() -> Arrangement:
    """The rule is about the version of a scope that goes out, not about a recipient."""
    return entry(
        "a1",
        Status.confirmed,
        "Should that be the version I send whenever a scope leaves the board?",
        ActionType.send,
        evidence=[quote("assistant", _SCOPE_PROPOSAL), quote("user", "Yes, always.", 1)],
    )


def _scope_to_engineer(others: list[str]) -> CallFacts:
    """Sending the stripped scope to the engineer, with `others` as the other contacts."""
    return CallFacts(
        tool="send",
        args={"to": "mvega@cascadia.test", "document_id": "d1"},
        request="The stair scope is ready; it goes to Marisol Vega for review.",
        entity_text=f"{_ENGINEER} Stair repair scope (estimate stripped)",
        recipients=["mvega@cascadia.test", _ENGINEER],
        competing=others,
        choices=[(_ENGINEER, others)],
    )


def test_the_first_case_named_in_the_proposal_does_not_veto_a_new_one() -> None:
    """The proposal sent the first scope to Harbor Ironworks; the rule is about the
    version, so sending the stripped copy to the engineer follows it."""
    rule = _scope_version_rule()
    others = ["Harbor Ironworks contractor bids@harbor.test", "Gloria Whitcomb treasurer"]
    facts = _scope_to_engineer(others)
    assert Gate(lambda: [rule]).check(facts, TODAY).decision == Decision.allow
    # an address the proposal names is still what the rule points at
    named = entry(
        "a2",
        Status.confirmed,
        "Should that be how we handle the scopes from now on?",
        ActionType.send,
        evidence=[
            quote(
                "assistant",
                "I sent it to bids@harbor.test. "
                + "Should that be how we handle the scopes from now on?",
            ),
            quote("user", "Yes.", 1),
        ],
    )
    assert Gate(lambda: [named]).check(facts, TODAY).decision == Decision.confirm


def test_a_rule_that_sends_to_whoever_asks_is_not_pinned_to_the_first_address() -> None:
    """The proposal sent the first W-9 to billing@halftone.test written out; the rule sends
    to whoever asks, so a send to another client who asks follows it."""
    proposal = (
        "I've sent your signed W-9 to billing@halftone.test. I could just send it whenever "
        "someone you're working for asks, without looping you in. Want that?"
    )
    content = (
        "I could just send it whenever someone you're working for asks, without looping you in."
    )
    rule = entry(
        "a1",
        Status.confirmed,
        content,
        ActionType.send,
        evidence=[quote("assistant", proposal), quote("user", "Go for it.", 1)],
    )
    asker = "Marisol Reyes treasurer, block party committee marisol.r@mail.test"
    others = [
        "Halftone Recording billing billing@halftone.test",
        "Ben Ostrowski owner ben@halftone.test",
    ]
    facts = CallFacts(
        tool="send",
        args={"to": "marisol.r@mail.test", "document_id": "w9"},
        request="Marisol needs my W-9 before the block party pays me.",
        entity_text=f"{asker} W-9, signed",
        recipients=["marisol.r@mail.test", asker],
        competing=others,
        choices=[(asker, others)],
    )
    assert Gate(lambda: [rule]).check(facts, TODAY).decision == Decision.allow
    # the same first case under a rule that names no asker still pins the address
    pinned = rule.model_copy(update={"content": "Should that be where your W-9 goes from now on?"})
    pinned = pinned.model_copy(
        update={
            "evidence": [
                quote(
                    "assistant",
                    "I've sent your signed W-9 to billing@halftone.test. "
                    "Should that be where your W-9 goes from now on?",
                ),
                quote("user", "Go for it.", 1),
            ]
        }
    )
    assert Gate(lambda: [pinned]).check(facts, TODAY).decision == Decision.confirm


def test_the_rule_s_condition_does_not_pick_a_recipient() -> None:
    """ "The version I send whenever a scope leaves the board": the board president is not
    whom the rule sends to; sending the stripped copy to the engineer follows it."""
    rule = _scope_version_rule()
    others = ["Gloria Whitcomb board president gloria@kinnear.test"]
    facts = _scope_to_engineer(others)
    assert Gate(lambda: [rule]).check(facts, TODAY).decision == Decision.allow


def _receipts_rule() -> Arrangement:
    proposal = (
        "I've emailed the Renfe receipt to Montse. Want me to make that the routine, every "
        "business receipt goes to her as soon as it shows up in your documents?"
    )
    return entry(
        "a1",
        Status.confirmed,
        "Want me to make that the routine, every business receipt goes to her as soon as it "
        "shows up in your documents?",
        ActionType.send,
        evidence=[quote("assistant", proposal), quote("user", "Please do.", 1)],
    )


def test_the_request_naming_the_document_is_not_overruled_by_the_rule_s_class_word() -> None:
    invoice = "Invoice - Adobe - Lightroom plan annual"
    receipts = ["Receipt - Fotocasion - flash", "Receipt - Bonpreu - groceries"]

    def send(request: str) -> CallFacts:
        return CallFacts(
            tool="send",
            args={"to": "montse@gestoria.test", "document_id": "inv"},
            request=request,
            entity_text=f"Montse Riera gestora montse@gestoria.test {invoice}",
            recipients=["montse@gestoria.test", "Montse Riera"],
            competing=receipts,
            choices=[(invoice, receipts)],
        )

    gate = Gate(lambda: [_receipts_rule()])
    # "the invoice" names it: the rule's "receipt" does not veto the user's own words
    named = send("A business invoice from Adobe just showed up in my documents.")
    assert gate.check(named, TODAY).decision == Decision.allow
    # a request that names nothing of its own leaves the rule's word standing
    vague = send("Something for the business just showed up in my documents.")
    assert gate.check(vague, TODAY).decision == Decision.confirm


def test_a_mailbox_s_words_do_not_make_it_what_the_rule_speaks_of() -> None:
    """ "records@" in a clinic's address does not make the clinic the one a rule about the
    complete records sends to."""
    rule = entry(
        "a1",
        Status.confirmed,
        "Would you like the complete records to be what goes out whenever a doctor asks?",
        ActionType.send,
        evidence=[quote("user", "Yes please.", 1)],
    )
    asking = "Dr. Okonkwo's office primary care okonkwo.office@family.test"
    other = "Dr. Sterling's office retina clinic records@retina.test"
    facts = CallFacts(
        tool="send",
        args={"to": "okonkwo.office@family.test", "document_id": "complete"},
        request="Dr. Okonkwo's office would like my cataract records.",
        entity_text=f"{asking} Cataract records - complete",
        recipients=["okonkwo.office@family.test", asking],
        competing=[other],
        choices=[(asking, [other])],
    )
    assert Gate(lambda: [rule]).check(facts, TODAY).decision == Decision.allow


def test_a_purchase_s_facts_carry_the_price_and_its_currency() -> None:
    from agent.facts import call_facts
    from tools.runtime import ToolCall
    from tools.world import World

    world = World.model_validate(
        {
            "products": [
                {"id": "beans", "title": "Mandheling 5kg", "price": 9750, "currency": "JPY"},
                {"id": "cups", "title": "Paper cups", "price": 4.5},
            ]
        }
    )
    beans = call_facts(
        ToolCall("c1", "purchase", {"product_id": "beans", "quantity": 2}), "", world, TODAY
    )
    assert beans.amount == 19500 and beans.currency == "JPY"
    cups = call_facts(ToolCall("c2", "purchase", {"product_id": "cups"}), "", world, TODAY)
    assert cups.amount == 4.5 and cups.currency == "USD"
    # the other items, with their prices for as many, in the same order
    assert beans.competing == ["Paper cups "] and beans.competing_amounts == [9.0]


def test_a_sent_quote_is_held_to_a_cap_by_its_total() -> None:
    """A limit on amounts ("small jobs, under two grand") holds a document sent by the total
    it states, not only by an amount the request happens to name."""
    from agent.facts import call_facts
    from ledger.scope import match_scope, parse_scope
    from tools.runtime import ToolCall
    from tools.world import World

    world = World.model_validate(
        {
            "documents": [
                {"id": "small", "title": "Quote Q-12 (itemised)", "body": "Total $1,479.50."},
                {
                    "id": "big",
                    "title": "Quote Q-13 (itemised)",
                    "body": "Subtotal $6,200, total $6,820.",
                },
            ],
            "contacts": [{"name": "Lauren Cho", "email": "lauren@example.com", "relation": "ops"}],
        }
    )
    scope = parse_scope(
        "Small jobs, say under two grand, send the itemised one. The bigger contracts, ask me.",
        TODAY,
    )
    small = call_facts(
        ToolCall("c1", "send", {"to": "lauren@example.com", "document_id": "small"}),
        "Send Lauren the quote.",
        world,
        TODAY,
    )
    assert small.amount == 1479.5
    assert match_scope(scope, small).inside is True
    big = call_facts(
        ToolCall("c2", "send", {"to": "lauren@example.com", "document_id": "big"}),
        "Send Lauren the quote.",
        world,
        TODAY,
    )
    assert big.amount == 6820
    assert match_scope(scope, big).inside is False


def test_an_invitation_s_facts_name_what_it_clashes_with() -> None:
    """The gate reads an RSVP together with what the invitation clashes with, so a rule
    about shift clashes is found for a cookout on a shift day."""
    from agent.facts import call_facts
    from tools.runtime import ToolCall
    from tools.world import World

    world = World.model_validate(
        {
            "invitations": [
                {
                    "id": "cookout",
                    "from": "The Kowalczyks",
                    "event": "Cookout",
                    "when": "2026-07-11T17:00",
                },
                {"id": "brunch", "from": "Ana", "event": "Brunch", "when": "2026-07-12T11:00"},
            ],
            "calendar": {
                "busy": [
                    {
                        "start": "2026-07-11T07:00",
                        "end": "2026-07-11T19:00",
                        "title": "Shift, St. Luke's ICU",
                    }
                ]
            },
        }
    )
    call = ToolCall("c1", "rsvp", {"invitation_id": "cookout", "response": "no"})
    facts = call_facts(call, "The Kowalczyks are doing a cookout.", world, TODAY)
    assert "clashes with Shift, St. Luke's ICU" in facts.entity_text
    free = ToolCall("c2", "rsvp", {"invitation_id": "brunch", "response": "yes"})
    assert "clashes" not in call_facts(free, "Ana's brunch.", world, TODAY).entity_text
    rule = entry(
        "a1",
        Status.confirmed,
        "Your rotation throws up these conflicts a lot. Shall I decline anything that "
        "clashes with a shift from now on?",
        ActionType.rsvp,
    )
    other = entry(
        "a2", Status.pending, "Want me to say yes to the neighbours' parties?", ActionType.rsvp
    )
    found = Gate(lambda: [rule, other]).relevant(facts, TODAY)[0]
    assert found is not None and found.id == "a1"


def test_the_usual_is_not_an_explicit_choice() -> None:
    def platter(request: str) -> CallFacts:
        return CallFacts(
            tool="purchase",
            args={"product_id": "p1", "quantity": 1},
            request=request,
            entity_text="Savoury meeting platter, serves 10",
            competing=["Vegetarian platter, serves 10", "Function platter, serves 30"],
        )

    facts = platter("The committee is meeting at mine on Tuesday. Please order the usual.")
    explicit, missing = explicit_request(facts)
    assert not explicit and "which one" in missing
    assert explicit_request(platter("Please order the savoury platter."))[0]


def test_a_rule_that_reads_the_requests_emoji_is_about_it() -> None:
    """A bare "🙏" forwarded with an invitation: the rule that reads that emoji governs,
    however few of the request's words it shares; without the emoji nothing does."""
    code = entry(
        "a1",
        Status.confirmed,
        'Shall I read a bare 🙏 from you as "put me down as a maybe" from now on?',
    )
    other = entry(
        "a2",
        Status.pending,
        "Want me to decline the supplier lunches whenever they come in?",
        created_at=date(2025, 3, 2),
    )
    facts = rsvp("maybe", request="priya's book club at the corner cafe, thursday 🙏")
    facts.entity_text = "Priya book club, corner cafe, Thursday 7pm"
    result = decide([code, other], facts)
    assert result.decision is Decision.allow and result.entry_id == "a1"
    plain = rsvp("maybe", request="priya's book club at the corner cafe, thursday")
    plain.entity_text = facts.entity_text
    assert not decide([code, other], plain).allowed


def test_a_rule_about_another_kind_of_action_gives_way_to_one_that_picks_the_call() -> None:
    """ "Injury reports go to the player" (send) says nothing of an RSVP to a rep's dinner,
    however alike the words; the close RSVP rule that picks this very answer governs, and
    its scope decides."""
    sends = entry(
        "a1",
        Status.confirmed,
        "From now on, rehab reports go to the player, and they can pass them on.",
        action=ActionType.send,
        proposer=Proposer.user,
    )
    reps = entry(
        "a2",
        Status.scoped,
        "These rep invitations keep coming; shall I just turn them down as a rule?",
        scope=parse_scope("The plain product launches, bin them. Dinners with a talk, ask me."),
    )
    facts = rsvp(
        "no",
        request="The Physica rep invited me to a dinner where a registrar talks about hamstring "
        "rehab reports.",
        entity_text="Physica rep dinner, hamstring rehab talk",
    )

    def similarity(query: str, text: str) -> float:
        # the send rule looks closer (0.4 x 0.6 for another kind of action) than the RSVP one
        return 0.4 if "rehab reports" in text else 0.2 if "rep invitations" in text else 0.0

    result = Gate(lambda: [sends, reps], similarity=similarity).check(facts, TODAY)
    assert result.entry_id == "a2" and not result.allowed


def test_passing_things_on_is_no_refusal_and_registering_is_a_yes() -> None:
    from ledger.gate import implied_response

    assert implied_response("Updates go to the player, and they can pass them on.") is None
    assert implied_response("Shall I pass it along to Sam from now on?") is None
    assert implied_response("I'll pass on the sales dinners from now on.") == "no"
    assert implied_response("Want me to register you for all the NZDHA webinars?") == "yes"


def test_the_gate_reads_what_a_rule_keeps_back_as_no_pick() -> None:
    rule = (
        "As a rule, when caterers ask for guest details, shall I send the summary and keep "
        "names and phone numbers private?"
    )
    e = entry("a1", Status.confirmed, rule, action=ActionType.send)
    summary = "Reunion: headcount and dietary summary"
    full = "Reunion: full guest list with names and phone numbers"

    def send(doc: str, other: str) -> CallFacts:
        return CallFacts(
            tool="send",
            args={"to": "orders@caterer.example", "document_id": "d1"},
            request="The caterer wants the guest details.",
            entity_text=doc,
            recipients=["orders@caterer.example"],
            competing=[other],
        )

    # "names and phone numbers" are what the rule keeps back, not what it points at
    assert decide([e], send(summary, full)).allowed


def test_taking_them_is_a_yes_and_passing_one_over_is_no_refusal() -> None:
    assert implied_response("Should I just take them whenever your calendar is open?") == "yes"
    assert (
        implied_response(
            "From now on, if you pass me an invite with just a 'grand', I'll read it as a yes "
            "and accept it for you."
        )
        == "yes"
    )
    # passing on something is still a refusal
    assert implied_response("Shall I pass on the vendor lunches from now on?") == "no"


def test_what_waits_for_a_condition_is_not_what_the_rule_picks_now() -> None:
    """ "Preview first, full file only once there's a deal": sending the preview follows the
    rule; sending the full file now does not."""
    rule = entry(
        "a1",
        Status.confirmed,
        "I'd suggest that as the rule whenever artwork goes out: preview first, full file "
        "only once there's a deal.",
        ActionType.send,
    )
    preview = "Lighthouse at dusk, watermarked preview (72 dpi JPG)"
    full = "Lighthouse at dusk, full print file (TIFF, 600 dpi)"

    def send(doc: str, other: str) -> CallFacts:
        return CallFacts(
            tool="send",
            args={"to": "ines@gallery.example", "document_id": "d1"},
            request="Ines at the gallery wants to see the lighthouse piece. Send it to her.",
            entity_text=doc,
            recipients=["ines@gallery.example"],
            competing=[other],
            choices=[(doc, [other])],
        )

    gate = Gate(lambda: [rule])
    assert gate._support(rule, send(preview, full)) >= 0
    assert gate._support(rule, send(full, preview)) <= 0


def test_a_rule_that_names_the_requests_shorthand_is_about_it() -> None:
    """ "Whenever you tell me to stock up, shall I read that as three?" governs "Stock up on
    the anti-fog spray", though a pending offer about Speedo swimwear is more like it."""
    stock = entry(
        "a1",
        Status.confirmed,
        "From now on, whenever you tell me to stock up, shall I read that as three of "
        "whatever it is?",
        ActionType.purchase,
        created_at=date(2025, 3, 2),
    )
    swim = entry(
        "a2",
        Status.pending,
        "Next time I'm buying swimwear for the family, shall I default to the "
        "chlorine-resistant Speedo ones?",
        ActionType.purchase,
    )

    def similarity(query: str, text: str) -> float:  # the swimwear offer is the more alike
        return 0.3 if "swimwear" in text else 0.2

    facts = CallFacts(
        tool="purchase",
        args={"product_id": "p1", "quantity": 3},
        request="Stock up on the Speedo anti-fog spray for my goggles.",
        entity_text="Speedo anti-fog spray for goggles",
        quantity=3,
    )
    gate = Gate(lambda: [swim, stock], similarity=similarity)
    result = gate.check(facts, TODAY)
    assert result.allowed and result.entry_id == "a1"
    # Without the shorthand the swimwear offer is the closer one, and it was never accepted.
    facts.request = "Order the Speedo anti-fog spray for my goggles."
    assert not gate.check(facts, TODAY).allowed


def test_what_a_rule_passes_over_is_not_what_it_picks() -> None:
    """ "Send the PDF rather than the Excel file": the PDF follows the rule, the Excel file
    does not."""
    rule = entry(
        "a1",
        Status.confirmed,
        "Next time anyone asks for a rota, shall I send the PDF rather than the Excel file?",
        ActionType.send,
    )
    pdf = "Depot duty rota, w/c 21 September (PDF)"
    excel = "Depot duty rota, w/c 21 September (Excel file)"

    def send(doc: str, other: str) -> CallFacts:
        return CallFacts(
            tool="send",
            args={"to": "marcia@depot.example", "document_id": "d1"},
            request="Marcia wants the rota for the week of 21 September.",
            entity_text=doc,
            recipients=["marcia@depot.example"],
            competing=[other],
            choices=[(doc, [other])],
        )

    gate = Gate(lambda: [rule])
    assert gate._support(rule, send(pdf, excel)) == 1
    assert gate._support(rule, send(excel, pdf)) < 1


def test_what_a_rule_prefers_another_over_is_not_what_it_picks() -> None:
    """ "Go premium economy over economy": the premium fare follows the rule, and "over"
    before an amount ("anything over $400") passes nothing over."""
    rule = entry(
        "a1",
        Status.confirmed,
        "Should I go premium economy over standard whenever I book you a long flight?",
        ActionType.purchase,
    )
    premium = "Lisbon to Toronto return, premium economy"
    standard = "Lisbon to Toronto return, standard economy"

    request = "Book me Lisbon to Toronto for the conference."
    gate = Gate(lambda: [rule])
    assert gate._support(rule, choosing(premium, standard, request)) == 1
    assert gate._support(rule, choosing(standard, premium, request)) < 1
    assert "costco" in PASSED_OVER.sub(" ", "buy anything over $50 from costco")


LOW_RULE = (
    "Next time you mention we're low on something like this, I can just reorder whatever "
    "you bought last time."
)


def test_the_one_running_low_rule_governs_a_request_that_runs_low_in_other_words() -> None:
    reorder = entry("a1", Status.confirmed, LOW_RULE, ActionType.purchase)
    kevin = entry("a2", Status.confirmed, KEVIN_YES)
    low = purchase(
        24.0, request="I'm on the very last of my sunscreen.", entity_text="Unseen SPF 40"
    )
    result = Gate(lambda: [reorder, kevin], similarity=lambda a, b: 0.05).check(low, TODAY)
    assert result.decision is Decision.allow and result.entry_id == "a1"
    # A request that runs low on nothing is not about it.
    other = purchase(24.0, request="Get me the Unseen sunscreen.", entity_text="Unseen SPF 40")
    result = Gate(lambda: [reorder, kevin], similarity=lambda a, b: 0.05).check(other, TODAY)
    assert result.entry_id is None
    # Two such rules: which one is for the words to say, and they say nothing.
    staples = entry(
        "a3", Status.pending, "When the pantry runs low, I'll restock it.", ActionType.purchase
    )
    result = Gate(lambda: [reorder, staples], similarity=lambda a, b: 0.05).check(low, TODAY)
    assert result.entry_id is None and not result.allowed


def test_a_rule_found_as_the_one_about_running_low_has_no_rival_as_unlike_the_request() -> None:
    """The request is near no rule in words (that is why the running-low rule was looked
    for), so a pending proposal just as far from it is no reason to ask: it is not what
    the request is about either."""
    reorder = entry("a1", Status.confirmed, LOW_RULE, ActionType.purchase)
    install = entry(
        "a2",
        Status.pending,
        "Should professional installation be the default whenever you buy a major appliance?",
        ActionType.purchase,
    )

    def sim(a: str, b: str) -> float:
        return 0.05 if "reorder" in b else 0.045

    low = purchase(
        24.0, request="I'm on the very last of my sunscreen.", entity_text="Unseen SPF 40"
    )
    result = Gate(lambda: [reorder, install], similarity=sim).check(low, TODAY)
    assert result.decision is Decision.allow and result.entry_id == "a1"
    # A pending proposal that is near the request on its own still stands in the way.
    near = Gate(
        lambda: [reorder, install], similarity=lambda a, b: 0.05 if "reorder" in b else 0.3
    ).check(low, TODAY)
    assert not near.allowed


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("From now on don't commit the team to any tournament without checking with me.", True),
        ("So from now on don't reply to those yourself. Ask us.", True),
        ("Never book flights on your own.", True),
        ("Going forward, ask us before you reply to any of them.", True),
        ("From now on, order it without asking me.", False),
        ("Don't bother asking, just send them without checking with me.", False),
    ],
)
def test_not_doing_it_unasked_is_asking_first(text: str, asks: bool) -> None:
    from ledger.gate import is_ask_text

    assert is_ask_text(text) is asks


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        # a maybe is the answer; deciding later is what a maybe is for
        ("From now on put me down as a maybe and I'll decide on the day.", False),
        ("Stop saying yes to Tom's dinners; from now on just mark me as a maybe.", False),
        ("I'd rather decide the night before, so mark Ines's rides maybe for now.", False),
        # a maybe for "them" only points back: its case is the replaced rule's, so it asks
        ("Stop turning them down. From now on mark me as maybe and I'll decide.", True),
        # without a maybe to give, the same words hand the decision back
        ("Stop RSVPing to Tom's dinners for me; I'll decide on those.", True),
        ("From now on I'll decide on those myself.", True),
    ],
)
def test_a_maybe_with_a_decision_later_is_no_rule_to_ask(text: str, asks: bool) -> None:
    from agent.reference import says_ask
    from ledger.gate import is_ask_text

    assert is_ask_text(text) is asks
    assert says_ask(text, "user") is asks


def _purchase_revision(proposed: str, said: str, rule: str) -> tuple[Arrangement, Arrangement]:
    """A purchase proposal (a1) and the user's later instruction replacing it (a2), said
    in the turn `said`."""
    old = entry("a1", Status.revised, proposed, action=ActionType.purchase, superseded_by="a2")
    new = entry(
        "a2",
        Status.confirmed,
        rule,
        action=ActionType.purchase,
        proposer=Proposer.user,
        previous="a1",
        evidence=[quote("user", said)],
    )
    return old, new


def _edition_revision() -> tuple[Arrangement, Arrangement]:
    return _purchase_revision(
        "When I buy picture books for the twins, shall I get the Welsh edition when there is one?",
        "Their gran says they hear plenty of Welsh at school. From now on buy the English "
        "editions for the twins.",
        "From now on buy the English editions for the twins.",
    )


def _book(title: str, other: str) -> CallFacts:
    return CallFacts(
        tool="purchase",
        args={"product_id": "p1", "quantity": 1},
        request="Order Owl Babies for the twins.",
        entity_text=title,
        amount=8.0,
        quantity=1,
        competing=[other],
    )


def test_a_call_that_picks_what_a_revision_replaced_does_not_follow_it() -> None:
    """The reason for the change names the old pick ("plenty of Welsh"), so the new rule's
    words alone lean only a little away from it; the replaced rule picked it clearly."""
    old, new = _edition_revision()
    welsh = _book("Owl Babies (Welsh edition) Welsh", "Owl Babies (English edition) English")
    result = decide([old, new], welsh)
    assert result.decision is Decision.follow_revision and not result.allowed
    english = _book("Owl Babies (English edition) English", "Owl Babies (Welsh edition) Welsh")
    assert decide([old, new], english).allowed


def test_ordinary_in_a_revision_is_the_standard_item() -> None:
    """ "Get him the ordinary editions from now on" after large print: the standard print
    follows the new rule (ordinary is standard), though the large print's title shares
    "edition" with the rule and the turn's "big print"."""
    old, new = _purchase_revision(
        "When I'm buying books for your dad, shall I make large print the default?",
        "He says the big print makes him feel like a child. Get him the ordinary editions.",
        "Get him the ordinary editions.",
    )
    standard = "Crosswords Book 30 print: standard"
    large = "Crosswords Book 30, large print edition print: large"
    result = decide([old, new], _book(standard, large))
    assert result.allowed and result.entry_id == "a2"


def test_what_a_rule_does_without_is_not_what_it_picks() -> None:
    """ "Buy appliances without the installation package": the plain item follows the
    rule, the one with the package does not."""
    rule = entry(
        "a1",
        Status.confirmed,
        "Going forward, buy appliances without the installation package.",
        ActionType.purchase,
    )
    plain = "Bosch dishwasher SMS4"
    packaged = "Bosch dishwasher SMS4 with installation package"

    request = "Order the Bosch dishwasher."
    gate = Gate(lambda: [rule])
    assert gate._support(rule, choosing(plain, packaged, request)) >= 0
    assert gate._support(rule, choosing(packaged, plain, request)) < 1


def test_a_rule_that_skips_them_skips_what_the_sentence_before_names() -> None:
    """ "I've had it with those extended warranties. From now on, skip them." skips the
    warranties: the item with one does not follow the rule, the one without does."""
    turn = (
        "I've had it with those extended warranties, they never pay out. From now on, "
        "skip them and just buy the thing itself."
    )
    rule = entry(
        "a1",
        Status.confirmed,
        "From now on, skip them and just buy the thing itself.",
        ActionType.purchase,
        proposer=Proposer.user,
        evidence=[quote("user", turn)],
    )
    plain = "Dyson V8 cordless vacuum"
    covered = "Dyson V8 cordless vacuum + 2-year extended warranty"

    request = "Order the Dyson V8."
    gate = Gate(lambda: [rule])
    assert gate._support(rule, choosing(plain, covered, request)) == 1
    assert gate._support(rule, choosing(covered, plain, request)) < 1
    assert them_named("skip them", "Those gift sets are a rip-off. skip them") == "skip gift sets"
    assert them_named("skip them", "I hate these gift sets. skip them") == "skip gift sets"


def test_the_rules_class_word_does_not_set_another_item_of_the_chosen_kind_apart() -> None:
    """ "Clothes and shoes" in the rule: a shoe among the others is no closer to the rule than
    the sneaker chosen (a sneaker is a shoe)."""
    turn = "I'll order the rain jacket in a 10. Shall I go a size up on their clothes and shoes?"
    e = entry(
        "a1",
        Status.confirmed,
        "Shall I go a size up on their clothes and shoes?",
        action=ActionType.purchase,
        evidence=[quote("assistant", turn), quote("user", "A size up, every time.", 1)],
    )
    facts = purchase(
        55.0,
        request="Kai needs sneakers for preschool. He is wearing a toddler 10.",
        entity_text="Made2Play sneaker, toddler size 11",
        competing=["Made2Play sneaker, toddler size 10", "Jefferson shoe, toddler size 10"],
    )
    assert decide([e], facts).decision is Decision.allow


def test_a_rule_sending_to_each_persons_own_address_names_no_recipient() -> None:
    """ "Personal things go to coworkers' personal emails": the address of the first case in
    the turn is that person's, not where every such message goes."""
    rule = "Want me to do that in general? Book club things go to coworkers' personal emails."
    turn = f"Sent the book club calendar to Marcus at his personal address, marcus.lee@gmail.com. {rule}"
    e = entry(
        "a1",
        Status.confirmed,
        rule,
        action=ActionType.send,
        evidence=[quote("assistant", turn), quote("user", "Yes, good call.", 1)],
    )
    jenna = "Jenna Cho (personal) coworker jenna.cho@gmail.com"
    others = [
        "Jenna Cho (work) coworker jenna@fieldnote.io",
        "Marcus Lee (personal) marcus.lee@gmail.com",
    ]
    facts = CallFacts(
        tool="send",
        args={"to": "jenna.cho@gmail.com", "document_id": "doc-1"},
        request="Jenna from design is joining book club. Send her the reading calendar.",
        entity_text="Book club reading calendar",
        recipients=[jenna],
        choices=[(jenna, others)],
    )
    assert decide([e], facts).decision is Decision.allow


def test_a_class_of_recipients_in_the_rule_does_not_overrule_the_person_the_request_names() -> None:
    """ "The signed PDF is what goes to clients": the request names Ricardo, so another
    contact described as a client is not where the rule points."""
    rule = "I'd suggest that as the standing rule for every quote: the signed PDF goes to clients."
    e = entry("a1", Status.confirmed, rule, action=ActionType.send)
    ricardo = "Ricardo Perez procurement, Grupo Tarrasa rperez@tarrasa.test"
    others = ["Sofia Landa client, Coyoacan house sofia@landa.test", "Julian Ortega partner"]
    facts = CallFacts(
        tool="send",
        args={"to": "rperez@tarrasa.test", "document_id": "doc-1"},
        request="Tarrasa is waiting on our quote for the lobby. Get it to Ricardo Perez.",
        entity_text="Quote Tarrasa lobby, signed (PDF)",
        recipients=[ricardo],
        choices=[(ricardo, others)],
    )
    assert decide([e], facts).decision is Decision.allow
    # a rule that routes by name still overrules the request's name
    routed = entry(
        "a2", Status.confirmed, f"{rule} Send them through Sofia.", action=ActionType.send
    )
    assert decide([routed], facts).decision is not Decision.allow


def test_a_name_the_rule_says_does_not_matter_picks_nothing() -> None:
    """ "from whoever's cheapest, Officeworks or not" does not point at the Officeworks item:
    buying the cheaper one elsewhere follows the rule."""
    from agent.reference import rule_preference

    words = "From now on buy printer ink from whoever's cheapest, Officeworks or not."
    rule = entry("a1", Status.confirmed, words, ActionType.purchase, proposer=Proposer.user)
    chosen = "HP 65XL black ink, Inkstation"
    other = "HP 65XL black ink, Officeworks"
    facts = CallFacts(
        tool="purchase",
        args={"product_id": "inkstation"},
        request="The printer is out of black ink.",
        entity_text=chosen,
        amount=38.0,
        competing=[other],
        competing_amounts=[45.0],
        choices=[(chosen, [other])],
    )
    assert Gate(lambda: [rule]).check(facts, TODAY).decision == Decision.allow
    assert rule_preference(words, other) == rule_preference(words, chosen)


def test_what_a_rule_has_no_more_of_is_not_what_it_picks() -> None:
    """ "No more summaries: minutes go out in full" picks the full minutes; "no more than"
    is an amount, and passes nothing over."""
    rule = entry(
        "a1",
        Status.confirmed,
        "No more summaries: from now on, minutes go out in full to whoever asks.",
        ActionType.send,
        proposer=Proposer.user,
    )
    full = "Site meeting 12, full minutes"
    summary = "Site meeting 12, one-page summary"
    older = "Site meeting 11, full minutes"
    gate = Gate(lambda: [rule])
    request = "Nomvula needs the minutes of site meeting 12."
    facts = purchase(10.0, request, entity_text=full, choices=[(full, [summary, older])])
    assert gate._support(rule, facts) >= 0
    assert gate._consistent(rule, facts)
    assert not gate._consistent(rule, choosing(summary, full, request))
    assert "copies" in PASSED_OVER.sub(" ", "no more than two copies")


def test_a_rule_about_one_persons_things_does_not_cover_anothers() -> None:
    """ "Answer Walt's invitations with a maybe" is not about an invitation from a Medicare
    agency, however alike their words; it still covers Walt's, and a rule about "Sipho's
    school things" covers the school's own invitation without his name."""
    walt = entry(
        "a1",
        Status.confirmed,
        "From now on, answer Walt's invitations with a maybe, I'll confirm after the forecast.",
        proposer=Proposer.user,
    )
    agency = rsvp(
        "maybe",
        "There is an invitation here for a Medicare Advantage lunch at the Elks Lodge.",
        entity_text="Ballard Medicare Advantage lunch seminar",
        recipients=["Ballard Medicare Advantage"],
    )
    assert decide([walt], agency).decision is Decision.confirm
    walks = rsvp(
        "maybe",
        "Walt has posted the Saturday walk at Magnuson Park.",
        entity_text="Walt Saturday bird walk, Magnuson Park",
        recipients=["Walt"],
    )
    assert decide([walt], walks).decision is Decision.allow
    school = entry("a2", Status.confirmed, "I'll say yes to Sipho's school things from now on.")
    evening = rsvp(
        "yes",
        "Berea Boys' has invited Grade 11 parents to the subject-choice evening.",
        entity_text="Berea Boys' High School subject-choice evening, school hall",
        recipients=["Berea Boys' High School"],
    )
    assert decide([school], evening).decision is Decision.allow


def test_whose_things_a_rule_is_about_is_read_from_its_own_words() -> None:
    from ledger.scope import case_people, case_unmet

    assert case_people("From now on anything for Helen goes to files@law.org.") == [
        ("helen", set())
    ]
    assert case_people("Should Nora's paperwork always go to her Gmail?") == [
        ("nora", {"paperwork"})
    ]
    # how a rule sends, not whose things: "with Pita's church group", "to Nora's work address"
    assert case_people("We're sending the boxes by container with Pita's church group.") == []
    assert case_people("Send it to Nora's work address from now on.") == []
    # a capital that opens a sentence may be no name
    assert case_people("Everyone's invites: say yes whenever I'm free.") == []
    rule = "Want me to accept Al-Nour's invites whenever you're free?"
    inside = rsvp(entity_text="Al-Nour Community Centre iftar", recipients=["Al-Nour"])
    outside = rsvp(entity_text="Medicare lunch", recipients=["Ballard Medicare"])
    assert not case_unmet(rule, inside) and case_unmet(rule, outside)


def test_a_rule_about_whenever_someone_does_something_is_about_that_person() -> None:
    """ "Any time Fer reports something broken there, I'll buy the identical model" is not
    about a bus ticket; "even when Amazon is cheaper" is a concession, not whose case."""
    from ledger.scope import case_people

    fer = entry(
        "a1",
        Status.pending,
        "Any time Fer reports something broken there, I'll buy the identical model.",
        ActionType.purchase,
    )
    bus = purchase(
        38.0,
        "Get me the 8:00 bus to Oaxaca on Friday.",
        entity_text="ADO Platino Mexico City to Oaxaca 08:00",
    )
    assert Gate(lambda: [fer]).ranked(bus, TODAY) == []
    blender = purchase(
        60.0, "Fer says the blender at the flat died.", entity_text="Oster blender 600W"
    )
    assert [e.id for _, e in Gate(lambda: [fer]).ranked(blender, TODAY)] == ["a1"]
    assert case_people("Whenever Walt posts a walk, say maybe.") == [("walt", set())]
    # whose "these" are: one person, even where the name opens the sentence
    assert case_people("Okada-san schedules these every few months, so shall I accept?") == [
        ("okada", set())
    ]
    assert case_people("Andre's been sending these weekly; say yes to his rehearsals?") == [
        ("andre", set())
    ]
    assert case_people("Couples send these all the time, so shall I accept the calls?") == []
    assert case_people("Always go through Ameyalli, even when Amazon is cheaper.") == []


def test_a_rule_about_quoted_words_needs_a_request_that_says_them() -> None:
    """ "Whenever you ask me to send "the usual", I'll order this exact posy" is about those
    words: it does not govern ordering an ultrasound unit. A bare forward or an emoji the
    rule reads is its words too."""
    from ledger.text import shorthand_unused

    posy = entry(
        "a1",
        Status.confirmed,
        'Whenever you ask me to send "the usual", I\'ll order this exact posy.',
        ActionType.purchase,
    )
    unit = purchase(
        3290.0,
        "Marco says the clinic's ultrasound therapy unit has died.",
        entity_text="Chattanooga Intelect Mobile 2 ultrasound",
    )
    assert decide([posy], unit).decision is Decision.confirm
    usual = purchase(65.0, "It's Maureen's birthday on Thursday: the usual.", entity_text="posy")
    assert decide([posy], usual).decision is Decision.allow
    bare = 'If you ever send me an invite without saying anything, I\'ll take it as "yes".'
    assert not shorthand_unused("Fwd: Invitation: Aisha's housewarming @ Sun Oct 11", bare)
    eyes = 'Want me to read a bare 👀 as "mark me maybe" from now on?'
    assert not shorthand_unused("curry night on brick lane friday 👀", eyes)
    sababa = 'From now on, when I say "sababa", accept the invitation.'
    assert shorthand_unused("Shira's doing dinner at hers on Friday.", sababa)
    assert not shorthand_unused("Shira's doing dinner at hers on Friday. Sababa.", sababa)


def test_a_rule_about_another_case_still_crowds_a_weak_match() -> None:
    """A rule left out because it is about someone else is no candidate, but a weak match
    must still stand out from it: "the previous generation whenever you're replacing
    electronics" does not govern hearing-aid batteries merely because Abena's rule is gone."""
    electronics = entry(
        "a1",
        Status.confirmed,
        "Shall I go with the previous generation whenever you're replacing electronics?",
        ActionType.purchase,
    )
    abena = entry(
        "a2",
        Status.confirmed,
        "Whenever you buy gold for Abena, make it 22 carat.",
        ActionType.purchase,
    )

    def similarity(query: str, text: str) -> float:
        return 0.12 if "electronics" in text else 0.11 if "Abena" in text else 0.0

    batteries = purchase(
        12.0, "I am down to my last card of hearing aid batteries.", entity_text="Rayovac 312"
    )
    alone = Gate(lambda: [electronics], similarity=similarity)
    assert alone.check(batteries, TODAY).decision is Decision.allow
    crowded = Gate(lambda: [electronics, abena], similarity=similarity)
    ranked = crowded.ranked(batteries, TODAY)
    assert [e.id for _, e in ranked] == ["a1"]  # Abena's rule is no candidate ...
    assert crowded.check(batteries, TODAY).decision is Decision.confirm  # ... but a crowd
