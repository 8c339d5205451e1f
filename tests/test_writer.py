"""LedgerWriter.process_session against a real LedgerStore: statuses, evidence, links, time."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from ledger.classifier import Classification
from ledger.model import ActionType, Arrangement, Proposer, Status, Turn
from ledger.store import LedgerEvent, LedgerStore
from ledger.writer import LedgerWriter

D1, D2, D3 = date(2025, 3, 1), date(2025, 3, 8), date(2025, 3, 15)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LedgerStore]:
    with LedgerStore(tmp_path / "ledger.db") as s:
        yield s


@pytest.fixture
def writer(store: LedgerStore) -> LedgerWriter:
    return LedgerWriter(store)


def U(text: str) -> tuple[str, str]:
    return ("user", text)


def A(text: str) -> tuple[str, str]:
    return ("assistant", text)


def session(sid: str, day: date, *turns: tuple[str, str]) -> list[Turn]:
    return [
        Turn(session_id=sid, session_date=day, index=i, speaker=speaker, text=text)  # type: ignore[arg-type]
        for i, (speaker, text) in enumerate(turns)
    ]


def run(writer: LedgerWriter, sid: str, day: date, *turns: tuple[str, str]) -> list[LedgerEvent]:
    return writer.process_session(session(sid, day, *turns))


CLIMB_ASK = "Can you RSVP yes to Tomás's housewarming on Friday?"
CLIMB = (
    "I RSVP'd yes to Tomás's housewarming on Friday. Going forward, should I RSVP yes to "
    "your climbing friends' invitations automatically whenever you're free?"
)
OAT_ASK = "Order more oat milk please."
OAT = (
    "Ordered two cartons. From now on, should I reorder oat milk automatically whenever "
    "you're down to one carton?"
)


def only(store: LedgerStore) -> Arrangement:
    entries = store.all()
    assert len(entries) == 1, entries
    return entries[0]


def test_accept_confirms_with_evidence_of_both_turns(
    writer: LedgerWriter, store: LedgerStore
) -> None:
    events = run(writer, "s1", D1, U(CLIMB_ASK), A(CLIMB), U("Yes please, that'd save me a lot."))
    entry = only(store)
    assert entry.status is Status.confirmed
    assert entry.proposer is Proposer.assistant
    assert entry.action_type is ActionType.rsvp
    assert "climbing friends" in entry.content
    assert entry.context == CLIMB_ASK  # the request the proposal answered
    assert [(e.speaker, e.turn_index, e.session_id) for e in entry.evidence] == [
        ("assistant", 1, "s1"),
        ("user", 2, "s1"),
    ]
    assert entry.evidence[1].text == "Yes please, that'd save me a lot."
    assert [e.op for e in events] == ["create"]
    assert events[0].writer == "rules"
    assert events[0].reason == "the user accepted the proposal"


def test_scoped_keeps_a_structured_scope(writer: LedgerWriter, store: LedgerStore) -> None:
    run(writer, "s1", D1, U(OAT_ASK), A(OAT), U("Sure, as long as it's under $8."))
    entry = only(store)
    assert entry.status is Status.scoped
    assert entry.action_type is ActionType.purchase
    assert entry.scope is not None
    assert entry.scope.max_amount == 8
    assert "under $8" in entry.scope.text
    assert [e.speaker for e in entry.evidence] == ["assistant", "user"]


def test_scoped_weekends(writer: LedgerWriter, store: LedgerStore) -> None:
    run(writer, "s1", D1, U(CLIMB_ASK), A(CLIMB), U("Only the weekend ones."))
    entry = only(store)
    assert entry.status is Status.scoped
    assert entry.scope is not None and entry.scope.weekdays == [5, 6]


def test_unrelated_reply_leaves_it_pending(writer: LedgerWriter, store: LedgerStore) -> None:
    run(writer, "s1", D1, U(CLIMB_ASK), A(CLIMB), U("What's the weather on Saturday?"))
    entry = only(store)
    assert entry.status is Status.pending
    assert [e.speaker for e in entry.evidence] == ["assistant", "user"]


def test_implicit_reply_leaves_it_pending(writer: LedgerWriter, store: LedgerStore) -> None:
    events = run(
        writer, "s1", D1, U(CLIMB_ASK), A(CLIMB), U("Great, and tell him I'll bring a salad.")
    )
    assert only(store).status is Status.pending
    assert "never accepted" in events[0].reason


def test_reject(writer: LedgerWriter, store: LedgerStore) -> None:
    run(writer, "s1", D1, U(OAT_ASK), A(OAT), U("I'd rather make that call myself each time."))
    assert only(store).status is Status.rejected


def test_revise_links_old_and_new(writer: LedgerWriter, store: LedgerStore) -> None:
    events = run(
        writer,
        "s1",
        D1,
        U(CLIMB_ASK),
        A(CLIMB),
        U("Rather than yes, mark me as maybe by default."),
    )
    assert len(events) == 2  # the reply is not also read as a separate user rule
    old, new = store.all()
    assert old.status is Status.revised and old.proposer is Proposer.assistant
    assert new.status is Status.confirmed and new.proposer is Proposer.user
    assert old.superseded_by == new.id and new.previous == old.id
    assert "maybe" in new.content
    assert new.action_type is ActionType.rsvp
    assert [e.speaker for e in new.evidence] == ["user"]
    assert [e.speaker for e in old.evidence] == ["assistant", "user"]
    assert [a.id for a in store.chain(old.id)] == [old.id, new.id]


def test_user_instruction_is_a_confirmed_user_entry(
    writer: LedgerWriter, store: LedgerStore
) -> None:
    run(
        writer,
        "s1",
        D1,
        U("From now on, always decline anything from the PTA."),
        A("Noted."),
        U("Thanks."),
    )
    entry = only(store)
    assert entry.status is Status.confirmed
    assert entry.proposer is Proposer.user
    assert entry.action_type is ActionType.rsvp
    assert entry.previous is None
    assert [(e.speaker, e.turn_index) for e in entry.evidence] == [("user", 0)]


def test_proposal_with_no_reply_is_pending(writer: LedgerWriter, store: LedgerStore) -> None:
    run(writer, "s1", D1, U(OAT_ASK), A(OAT))
    entry = only(store)
    assert entry.status is Status.pending
    assert [e.speaker for e in entry.evidence] == ["assistant"]


def test_session_without_proposals_writes_nothing(writer: LedgerWriter, store: LedgerStore) -> None:
    assert run(writer, "s1", D1, U("What's on Friday?"), A("Dinner with Lia at 7.")) == []
    assert writer.process_session([]) == []
    assert store.all() == [] and store.last_seq == 0


def test_later_user_revision_picks_the_right_entry(
    writer: LedgerWriter, store: LedgerStore
) -> None:
    # Three rsvp entries and one send entry, all accepted in session 1.
    run(
        writer,
        "s1",
        D1,
        U("Is there anything from the PTA?"),
        A("There's the spring gala. From now on, should I decline PTA fundraisers for you?"),
        U("Yes please."),
        U(CLIMB_ASK),
        A(CLIMB),
        U("Sure, go for it."),
        U("Forward the receipt to my accountant."),
        A("Forwarded. From now on, I'll forward every receipt to your accountant."),
        U("Perfect."),
        U("Did Ana invite me to her book club?"),
        A("She did. Want me to always accept Ana's book club meetings?"),
        U("Sounds good."),
    )
    before = {e.id: e for e in store.all()}
    assert [e.status for e in before.values()] == [Status.confirmed] * 4
    pta, climb, receipts, book = before.values()
    assert climb.action_type is ActionType.rsvp and receipts.action_type is ActionType.send

    events = run(writer, "s2", D2, U("Stop RSVPing for me automatically, ask me first."))

    after = {e.id: e for e in store.all()}
    old = after[climb.id]
    assert old.status is Status.revised
    new = after[old.superseded_by or ""]
    assert new.status is Status.confirmed and new.proposer is Proposer.user
    assert new.previous == climb.id
    assert new.content == "Stop RSVPing for me automatically, ask me first."
    assert new.action_type is ActionType.rsvp
    assert old.evidence[-1].text == new.content  # the revision is quoted on the old entry
    for other in (pta, receipts, book):
        assert after[other.id] == other  # untouched
    assert {e.entry_id for e in events} == {climb.id, new.id}
    assert all(e.session_id == "s2" for e in events)


def test_later_user_revision_matches_content_not_order(
    writer: LedgerWriter, store: LedgerStore
) -> None:
    run(
        writer,
        "s1",
        D1,
        U(CLIMB_ASK),
        A(CLIMB),
        U("Sure, go for it."),
        U("Did Ana invite me to her book club?"),
        A("She did. Want me to always accept Ana's book club meetings?"),
        U("Sounds good."),
    )
    climb, book = store.all()
    run(writer, "s2", D2, U("From now on, decline Ana's book club meetings, I'm too busy."))
    assert store.get(book.id).status is Status.revised  # type: ignore[union-attr]
    assert store.get(climb.id).status is Status.confirmed  # type: ignore[union-attr]


def test_each_session_is_one_transaction(
    writer: LedgerWriter, store: LedgerStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []
    real_apply = store.apply

    def spy(changes: Any, **kw: Any) -> list[LedgerEvent]:
        calls.append({"n": len(changes), **kw})
        return real_apply(changes, **kw)

    monkeypatch.setattr(store, "apply", spy)
    run(
        writer,
        "s1",
        D1,
        U(CLIMB_ASK),
        A(CLIMB),
        U("Sure."),
        U(OAT_ASK),
        A(OAT),
        U("Rather than reordering, just add it to my shopping list from now on."),
        U("From now on, always decline anything from the PTA."),
    )
    run(writer, "s2", D2, U("Stop RSVPing for me automatically, ask me first."))
    assert [(c["n"], c["session_id"], c["session_date"]) for c in calls] == [
        (4, "s1", D1),
        (2, "s2", D2),
    ]
    events = store.events()
    assert [e.seq for e in events] == list(range(1, 7))
    first, second = events[:4], events[4:]
    assert {e.session_id for e in first} == {"s1"} and {e.session_id for e in second} == {"s2"}
    # One transaction: one commit timestamp per session.
    assert len({e.recorded_at for e in first}) == 1
    assert len({e.recorded_at for e in second}) == 1
    assert [a.id for a in store.as_of(session_id="s1")] == [e.entry_id for e in first]


def test_a_failing_session_writes_nothing(writer: LedgerWriter, store: LedgerStore) -> None:
    class Boom(Exception):
        pass

    real = store.new_id
    n = {"calls": 0}

    def flaky() -> str:
        n["calls"] += 1
        if n["calls"] == 2:
            raise Boom
        return real()

    store.new_id = flaky  # type: ignore[method-assign]
    with pytest.raises(Boom):
        run(writer, "s1", D1, U(CLIMB_ASK), A(CLIMB), U("Sure."), U(OAT_ASK), A(OAT), U("Ok."))
    assert store.events() == [] and store.all() == []


def test_a_failing_classifier_leaves_the_proposal_pending(store: LedgerStore) -> None:
    class Broken:
        name = "broken"

        def classify_reply(self, assistant: str, user: str) -> Classification:
            raise RuntimeError("model unavailable")

    writer = LedgerWriter(store, classifier=Broken())
    events = run(writer, "s1", D1, U(CLIMB_ASK), A(CLIMB), U("Yes, absolutely."))
    assert only(store).status is Status.pending
    assert events[0].writer == "broken"


def test_as_of_shows_pending_before_a_later_acceptance(
    writer: LedgerWriter, store: LedgerStore
) -> None:
    run(writer, "s1", D1, U(CLIMB_ASK), A(CLIMB), U("What's the weather on Saturday?"))
    (proposal,) = store.all()
    run(
        writer,
        "s2",
        D2,
        U("About my climbing friends: from now on, always RSVP yes to their invitations."),
    )
    rule = store.get(store.get(proposal.id).superseded_by or "")  # type: ignore[union-attr]
    assert rule is not None and rule.status is Status.confirmed

    then = store.as_of(session_date=D1)
    assert [(a.id, a.status) for a in then] == [(proposal.id, Status.pending)]
    assert store.as_of(session_id="s1") == then
    now = store.as_of(session_date=D2)
    assert [(a.id, a.status) for a in now] == [
        (proposal.id, Status.revised),
        (rule.id, Status.confirmed),
    ]
    assert store.as_of(session_date=date(2025, 2, 1)) == []


def test_as_of_follows_a_revision_chain_over_time(writer: LedgerWriter, store: LedgerStore) -> None:
    run(writer, "s1", D1, U(CLIMB_ASK), A(CLIMB), U("Sure, go for it."))
    run(writer, "s2", D2, U("Actually, from now on RSVP maybe to my climbing friends' invites."))
    run(writer, "s3", D3, U("Stop RSVPing for me automatically, ask me first."))
    first = store.all()[0]
    chain = store.chain(first.id)
    assert [a.status for a in chain] == [Status.revised, Status.revised, Status.confirmed]
    assert chain[2].content == "Stop RSVPing for me automatically, ask me first."

    def statuses(day: date) -> list[Status]:
        return [a.status for a in store.as_of(session_date=day)]

    assert statuses(D1) == [Status.confirmed]
    assert statuses(D2) == [Status.revised, Status.confirmed]
    assert statuses(D3) == [Status.revised, Status.revised, Status.confirmed]


# --- one-time acceptances -------------------------------------------------------------------

OAT_RULE = (
    "From now on, should I reorder oat milk automatically whenever you're down to one carton?"
)


@pytest.mark.parametrize(
    "reply", ["Yes, just this once.", "Okay, only this time.", "Just this once."]
)
def test_a_one_time_acceptance_is_a_single_use_entry(
    writer: LedgerWriter, store: LedgerStore, reply: str
) -> None:
    events = run(writer, "s1", D1, A(OAT_RULE), U(reply))
    entry = only(store)
    assert entry.status is Status.confirmed
    assert entry.single_use and not entry.consumed
    assert entry.is_active_on(D2)
    assert "one time only" in events[0].reason
    assert [e.speaker for e in entry.evidence] == ["assistant", "user"]


def test_a_single_use_entry_authorizes_exactly_one_call(
    writer: LedgerWriter, store: LedgerStore
) -> None:
    from ledger.gate import Gate
    from ledger.model import Decision
    from ledger.scope import CallFacts
    from ledger.store import Change

    run(writer, "s1", D1, A(OAT_RULE), U("Yes, just this once."))
    gate = Gate(store.all)
    facts = CallFacts(
        tool="purchase",
        args={"product_id": "p1", "quantity": 1},
        request="I'm down to one carton of oat milk.",
        entity_text="Oat milk carton",
        amount=4.5,
    )
    first = gate.check(facts, D2)
    assert first.decision is Decision.allow
    used = gate.consume(first)
    assert used is not None and used.consumed
    store.apply([Change(arrangement=used, reason="used up")], writer="gate")
    assert gate.check(facts, D3).decision is Decision.confirm


def test_a_one_time_acceptance_of_the_task_at_hand_is_used_up(
    writer: LedgerWriter, store: LedgerStore
) -> None:
    # The proposal turn already did the immediate task: "just this once" was that call.
    run(writer, "s1", D1, U(OAT_ASK), A(OAT), U("Just this once, thanks."))
    entry = only(store)
    assert entry.single_use and entry.consumed
    assert not entry.is_active_on(D2)


def test_a_later_report_in_the_session_uses_it_up(writer: LedgerWriter, store: LedgerStore) -> None:
    run(
        writer,
        "s1",
        D1,
        A(OAT_RULE),
        U("Okay, only this time."),
        A("Done, I've ordered a carton of oat milk."),
    )
    entry = only(store)
    assert entry.single_use and entry.consumed


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        ("No, not even this once.", Status.rejected),
        ("Yes please, that would be great.", Status.confirmed),
    ],
)
def test_refusals_and_standing_acceptances_are_not_single_use(
    writer: LedgerWriter, store: LedgerStore, reply: str, status: Status
) -> None:
    run(writer, "s1", D1, A(OAT_RULE), U(reply))
    entry = only(store)
    assert entry.status is status and not entry.single_use


def test_a_rule_pointing_back_at_the_sentence_before_takes_its_kind_of_action(
    writer: LedgerWriter, store: LedgerStore
) -> None:
    """ "We want to see Noor's party invites first. So don't reply to those yourself.":
    "reply" alone reads as sending, but "those" are the invitations of the sentence
    before, so the rule replaces the RSVP arrangement, not the one about sending bills."""
    run(
        writer,
        "s1",
        D1,
        U("Noor's got an invite to Zara's birthday party on Saturday."),
        A("I'll RSVP yes. Want me to just accept her classmates' party invites from now on?"),
        U("Sure."),
        U("The dentist bill came in for Noor."),
        A("I sent it to Sam. Should I send bills like this straight to Sam from now on?"),
        U("Yes please."),
    )
    party, bills = store.all()
    run(
        writer,
        "s2",
        D2,
        U(
            "Sam and I talked, and we want to see every one of Noor's party invites before "
            "anybody answers. So from now on don't reply to those yourself. Ask us."
        ),
    )
    after = {e.id: e for e in store.all()}
    assert after[party.id].status is Status.revised
    assert after[bills.id].status is Status.confirmed
    new = after[after[party.id].superseded_by or ""]
    assert new.action_type is ActionType.rsvp


def test_a_later_instruction_replaces_the_declined_proposal_it_is_about(
    writer: LedgerWriter, store: LedgerStore
) -> None:
    # The dog-food offer was declined; the cat-litter one accepted. A later rule about dog
    # food is about the declined offer, not the accepted one that merely reads alike.
    run(
        writer,
        "s1",
        D1,
        U("We're out of dog food."),
        A(
            "Ordered a 12 kg bag of Acana. From now on, should I reorder dog food whenever "
            "the bag is nearly empty?"
        ),
        U("No, don't do that."),
        U("The cat litter is nearly gone."),
        A(
            "Ordered two bags of clumping litter. From now on, should I reorder the cat "
            "litter whenever it runs low?"
        ),
        U("Yes please."),
    )
    dog, cat = store.all()
    assert dog.status is Status.rejected and cat.status is Status.confirmed

    run(writer, "s2", D2, U("From now on, buy the small 2 kg bags of dog food, never the big one."))

    after = {e.id: e for e in store.all()}
    assert after[cat.id] == cat  # the accepted rule about litter is untouched
    assert after[dog.id].status is Status.revised
    new = after[after[dog.id].superseded_by or ""]
    assert new.proposer is Proposer.user and new.previous == dog.id
