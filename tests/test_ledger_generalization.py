"""Ledger writer, classifier, gate and provenance on phrasings that broke them before.

Each case is a general pattern (an acknowledgement is not a proposal, a revision names its
topic away from the rule sentence, "no need to ask me" is not an ask rule ...), written
fresh here rather than copied from the benchmark corpus.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from ledger.classifier import classify_reply, detect_user_rule
from ledger.gate import Gate, is_ask_rule
from ledger.model import Act, ActionType, Arrangement, Decision, Evidence, Proposer, Status, Turn
from ledger.provenance import check_provenance
from ledger.scope import CallFacts
from ledger.store import LedgerStore
from ledger.text import stem
from ledger.writer import LedgerWriter

D1, D2 = date(2026, 3, 2), date(2026, 3, 16)
TODAY = date(2026, 5, 1)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LedgerStore]:
    with LedgerStore(tmp_path / "ledger.db") as s:
        yield s


def session(sid: str, day: date, *turns: tuple[str, str]) -> list[Turn]:
    return [
        Turn(session_id=sid, session_date=day, index=i, speaker=sp, text=t)  # type: ignore[arg-type]
        for i, (sp, t) in enumerate(turns)
    ]


def entry(eid: str, status: Status, content: str, **kw: object) -> Arrangement:
    return Arrangement(
        id=eid,
        proposer=kw.pop("proposer", Proposer.assistant),  # type: ignore[arg-type]
        action_type=kw.pop("action_type", ActionType.rsvp),  # type: ignore[arg-type]
        content=content,
        status=status,
        created_at=D1,
        updated_at=D1,
        **kw,  # type: ignore[arg-type]
    )


# --- stemming ----------------------------------------------------------------------------


def test_plural_of_an_ing_noun_stems_like_the_singular() -> None:
    assert stem("openings") == stem("opening")
    assert stem("meetings") == stem("meeting")
    assert stem("paperbacks") == "paperback" and stem("glasses") == "glass"


# --- writer: what is and is not a proposal ------------------------------------------------


def test_acknowledging_a_users_instruction_is_not_a_proposal(store: LedgerStore) -> None:
    LedgerWriter(store).process_session(
        session(
            "s1",
            D1,
            ("user", "From now on, send the invoices to the billing inbox, not to me."),
            ("assistant", "Makes sense. I'll send invoices to billing from now on."),
            ("user", "How long do I boil an egg for a runny yolk?"),
            ("assistant", "About six minutes from boiling."),
        )
    )
    entries = store.all()
    assert [(e.proposer, e.status) for e in entries] == [(Proposer.user, Status.confirmed)]


def test_restating_an_accepted_proposal_does_not_open_a_new_pending_entry(
    store: LedgerStore,
) -> None:
    LedgerWriter(store).process_session(
        session(
            "s1",
            D1,
            ("user", "The pottery guild invited me to their spring fair."),
            ("assistant", "Want me to accept craft fair invitations for you from now on?"),
            ("user", "Mm, fairs are where I sell most. Take them."),
            ("assistant", "Great, I'll accept craft fair invitations as they come in."),
        )
    )
    assert [e.status for e in store.all()] == [Status.confirmed]


def test_a_revision_names_its_topic_outside_the_rule_sentence(store: LedgerStore) -> None:
    writer = LedgerWriter(store)
    writer.process_session(
        session(
            "s1",
            D1,
            ("user", "The gallery on Alberta invited me to its opening."),
            ("assistant", "You go to most openings. Should I just accept those from now on?"),
            ("user", "Ha, fair. Go ahead and accept them."),
            ("user", "Can you get me more printer ink?"),
            ("assistant", "Ordered. Want me to reorder ink on my own whenever you say it's low?"),
            ("user", "That would save me a lot of hassle. Do it."),
            ("user", "My sister's book club meets Thursday."),
            ("assistant", "Should I RSVP yes to her book club whenever you're free?"),
            ("user", "Sure."),
        )
    )
    openings, ink, club = store.all()
    writer.process_session(
        session(
            "s2",
            D2,
            ("user", "About gallery openings: quit accepting them. From now on ask me each time."),
            ("assistant", "Understood."),
        )
    )
    assert store.get(openings.id).status is Status.revised  # type: ignore[union-attr]
    assert store.get(ink.id) == ink and store.get(club.id) == club
    new = store.get(store.get(openings.id).superseded_by or "")  # type: ignore[union-attr]
    assert new is not None and new.proposer is Proposer.user and new.previous == openings.id


def test_a_users_habit_is_not_an_instruction() -> None:
    assert (
        detect_user_rule("There's a trivia lunch Thursday. I never know if I'll make those.")
        is None
    )
    assert detect_user_rule("New rule: put me down as a maybe for those.") is not None
    assert detect_user_rule("Stop turning down the vendor webinars on your own.") is not None


# --- classifier: approval without a yes-word -----------------------------------------------

PROPOSAL = (
    "I sent the minutes to the board. Should the redacted version be what I send whenever "
    "a resident asks for minutes from now on?"
)


@pytest.mark.parametrize(
    "reply",
    [
        "That is the prudent course. Make it the practice.",
        "Quite right.",
        "Redacted for residents, every time.",
        "That would suit me.",
        "You read my mind.",
        "Couldn't agree more.",
        "Makes sense to me.",
        "Make it standard.",
        "No need to run those by me.",
        "I'd never say no to that anyway.",
        "Send them straight over.",
    ],
)
def test_approving_remarks_accept(reply: str) -> None:
    assert classify_reply(PROPOSAL, reply).act is Act.accept


DECLINE = "I declined the vendor webinar. Shall I turn down these sales webinars automatically?"


@pytest.mark.parametrize(
    ("reply", "act"),
    [
        ("Those are a waste of an hour. Turn them all down.", Act.accept),
        ("Nothing I'd attend. No need to check with me on those.", Act.accept),
        # a refusal stays one
        ("No need, thanks.", Act.reject),
        ("No, I'd rather see each one.", Act.reject),
        ("Send them to me first.", None),
    ],
)
def test_negations_that_agree_and_ones_that_refuse(reply: str, act: Act | None) -> None:
    got = classify_reply(DECLINE, reply).act
    if act is None:
        assert got is not Act.accept
    else:
        assert got is act


@pytest.mark.parametrize(
    "reply",
    [
        "What separates a cormorant from a loon?",
        "How many grams of salt go into a liter of brine?",
        "Great, and copy Gloria on it.",
    ],
)
def test_a_new_subject_or_the_task_is_not_an_acceptance(reply: str) -> None:
    assert classify_reply(PROPOSAL, reply).act is not Act.accept


# --- gate --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "proposer", "asks"),
    [
        ("Should I go with paperback whenever you ask me for a book?", Proposer.assistant, False),
        (
            "Want me to decline those from now on so they stop landing on your plate?",
            Proposer.assistant,
            False,
        ),
        ("Should I check with you before accepting any of them?", Proposer.assistant, True),
        ("Just decline them, no need to ask me.", Proposer.user, False),
        ("From now on ask me before you accept those.", Proposer.user, True),
    ],
)
def test_ask_rules(content: str, proposer: Proposer, asks: bool) -> None:
    assert is_ask_rule(entry("a1", Status.confirmed, content, proposer=proposer)) is asks


def buy(quantity: int, request: str = "The kids want kites for the beach.") -> CallFacts:
    return CallFacts(
        tool="purchase",
        args={"product_id": "kite", "quantity": quantity},
        request=request,
        entity_text="Rainbow delta kite",
    )


def rsvp(response: str, request: str, entity: str) -> CallFacts:
    return CallFacts(
        tool="rsvp",
        args={"invitation_id": "inv1", "response": response},
        request=request,
        entity_text=entity,
    )


def test_the_call_is_judged_on_the_similar_rule_it_follows() -> None:
    entries = [
        entry("a1", Status.confirmed, "Should I decline the sponsored work dinners from now on?"),
        entry("a2", Status.confirmed, "Should maybe be my answer to work meeting invites?"),
    ]
    gate = Gate(lambda: entries)
    facts = rsvp("maybe", "Priya sent a work meeting invite for Thursday.", "Work meeting Thu")
    result = gate.check(facts, TODAY)
    assert result.decision is Decision.allow and result.entry_id == "a2"
    decline = gate.check(
        rsvp("no", "There's a sponsored dinner invite.", "Sponsored dinner"), TODAY
    )
    assert decline.decision is Decision.allow and decline.entry_id == "a1"


def test_an_unaccepted_rule_that_picks_this_call_blocks_borrowed_consent() -> None:
    entries = [
        entry("a1", Status.confirmed, "Want me to accept the climbing gym's invitations?"),
        entry("a2", Status.pending, "Should I say maybe to climbing meetups from now on?"),
    ]
    facts = rsvp("maybe", "The climbing meetup invited me for Friday.", "Climbing meetup")
    result = Gate(lambda: entries).check(facts, TODAY)
    assert result.decision is Decision.confirm and result.entry_id == "a2"


def test_a_detail_from_the_accepted_proposal_turn_is_grounded() -> None:
    turn = "I sent the Deluxe Texas box to Acme. Want that to be the usual for client gifts?"
    accepted = entry(
        "a1",
        Status.confirmed,
        "Want that to be the usual for client gifts?",
        action_type=ActionType.purchase,
        evidence=[
            Evidence(session_id="s1", session_date=D1, turn_index=1, speaker="assistant", text=turn)
        ],
    )
    facts = CallFacts(
        tool="purchase",
        args={"product_id": "deluxe"},
        request="Send the usual to our new client.",
        entity_text="Deluxe Texas gift box",
        competing=["Classic fruit basket"],
    )
    assert check_provenance(facts, [("assistant", turn)], [accepted]).ok
    pending = accepted.model_copy(update={"status": Status.pending})
    assert not check_provenance(facts, [("assistant", turn)], [pending]).ok


# --- more phrasings ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "turn",
    [
        "I'll answer the hold with a maybe. Should that be how we treat date holds generally?",
        "Ordered the sharing bundle. Want to just call it 'the Friday feast' and I'll know "
        "you mean this one?",
        "I accepted Monday at 10. When firms send you a choice like this, should I just grab "
        "the earliest slot you're free for?",
        "I'll say yes to Tom's barbecue. Say the word and I'll treat his cookouts as an "
        "automatic yes.",
        "I picked the recycled paper. Would you like that to be the rule for office supplies?",
        "I'll forward it to Sam. Is that how you'd like receipts handled from now on?",
        "I replied maybe. Would it help if I made maybe my default answer for the "
        "neighbourhood meetings?",
        "I booked the 7am train. Do you want early trains to be my go-to for work trips?",
        "I went with the refurbished one to save $80. Happy to make refurbished my first "
        "choice for electronics, if you'd like.",
    ],
)
def test_standing_offers_without_from_now_on(turn: str) -> None:
    from ledger.classifier import detect_proposal

    assert detect_proposal(turn) is not None


@pytest.mark.parametrize("reply", ["Always.", "Short version from now on."])
def test_a_reply_ending_on_the_rule_made_standing_accepts(reply: str) -> None:
    assert classify_reply(PROPOSAL, reply).act is Act.accept


def test_an_anecdote_with_a_word_of_time_is_not_an_acceptance() -> None:
    reply = "What year did the bridge open? My dad always claimed he saw the ribbon cutting."
    assert classify_reply(PROPOSAL, reply).act in (Act.no_uptake, Act.implicit)


@pytest.mark.parametrize(
    ("reply", "act"),
    [
        ("Resident requests, please. Anything from the city, check with me.", Act.scoped),
        ("Please do. Residents deserve privacy anyway, people should know by now.", Act.accept),
    ],
)
def test_a_scope_leads_with_its_limit_or_hands_the_rest_back(reply: str, act: Act) -> None:
    assert classify_reply(PROPOSAL, reply).act is act


def test_turn_down_with_its_object_inside_implies_no() -> None:
    from ledger.gate import implied_response

    assert implied_response("I could turn those down as they arrive") == "no"
    assert implied_response("Should maybe be my answer to those?") == "maybe"


def test_a_call_with_no_price_is_judged_on_the_amount_the_request_states() -> None:
    from ledger.model import Scope
    from ledger.scope import match_scope

    scope = Scope(text="under $500 or so", max_amount=500.0)
    facts = CallFacts(tool="send", args={}, request="Got the Uber receipt, $46.20.")
    assert match_scope(scope, facts).inside is True
    big = CallFacts(tool="send", args={}, request="The hotel folio came in at $812.")
    assert match_scope(scope, big).inside is False
    vague = CallFacts(tool="send", args={}, request="The receipts for $20 and $900 are in.")
    assert match_scope(scope, vague).inside is None


def test_an_unaccepted_proposal_on_top_is_never_traded_for_an_agreed_rule() -> None:
    entries = [
        entry("a1", Status.pending, "Want me to decline the climbing meetups from now on?"),
        entry("a2", Status.confirmed, "Should I say maybe to invitations from work?"),
    ]
    # The call does not follow the pending proposal's wording, and a less similar agreed
    # rule happens to pick it: still the proposal nobody accepted governs, so ask.
    facts = rsvp("maybe", "The climbing meetup invited me for Friday.", "Climbing meetup")
    result = Gate(lambda: entries).check(facts, TODAY)
    assert result.decision is Decision.confirm and result.entry_id == "a1"


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("Should I take 'for the kids' to mean one apiece for all three from now on?", 3),
        ("Get 4 packs of AA batteries.", 4),
        # a pair of what is sold in pairs is one of it; a pair of anything else is two
        ("A pair of wool socks.", None),
        ("Get Ana a pair of size 10 gumboots.", None),
        ("Two pairs of wool socks.", 2),
        ("Buy the memory cards in a pair.", 2),
        ("The 10x25 binoculars, $64.95, on the 15th, for two weeks.", None),
        ("Three or two, I'm not sure.", None),
        # people, not how many
        ("Chidi and two of his mates are staying over.", None),
        ("You three get this most Fridays.", None),
        ("Order two of them.", 2),
        # what the item holds, not how many of it
        ("Ordering the pigment liner set of six again.", None),
        ("A pack of two, like last time.", None),
    ],
)
def test_stated_quantity(text: str, n: int | None) -> None:
    from ledger.text import stated_quantity

    assert stated_quantity(text) == n


def test_a_purchase_for_another_quantity_than_agreed_is_not_consistent() -> None:
    rule = entry(
        "a1",
        Status.confirmed,
        "Should 'for the kids' mean one apiece for all three from now on?",
        action_type=ActionType.purchase,
    )

    gate = Gate(lambda: [rule])
    assert gate.check(buy(3), TODAY).decision is Decision.allow
    assert gate.check(buy(1), TODAY).decision is Decision.confirm
    # the request itself says how many: the rule does not overrule it
    two = buy(2, "The kids want kites for the beach; two of them will do, Bea has one.")
    assert gate.check(two, TODAY).decision is Decision.allow


def test_a_count_the_item_carries_is_not_how_many_to_buy() -> None:
    rule = "Shall I always go for the two-bag fare when I book flights home for any of you?"
    fare = entry(
        "a1",
        Status.confirmed,
        rule,
        action_type=ActionType.purchase,
        evidence=[
            Evidence(session_id="s1", session_date=D1, turn_index=1, speaker="assistant", text=rule)
        ],
    )
    facts = CallFacts(
        tool="purchase",
        args={"product_id": "two", "quantity": 1},
        request="Book Lani a return to Suva for the wedding.",
        entity_text="Fiji Airways return Auckland-Suva, Seat + 2 checked bags",
    )
    assert Gate(lambda: [fare]).check(facts, TODAY).decision is Decision.allow
    # a count on something else is still how many: "two of them" for kites
    kites = fare.model_copy(update={"content": "Should I always buy two of them for the kids?"})
    assert Gate(lambda: [kites]).check(buy(3), TODAY).decision is Decision.confirm


def test_asking_for_an_item_does_not_ask_for_several() -> None:
    from ledger.gate import explicit_request

    assert explicit_request(buy(1, "Order the rainbow kite."))[0]
    assert explicit_request(buy(3, "Order the rainbow kite.")) == (False, ["3 of them"])
    assert explicit_request(buy(3, "Order three rainbow kites."))[0]


BOARD = (
    "I said yes to the March meeting. Shall I answer the board's meeting invites yes from now on?"
)


@pytest.mark.parametrize(
    "reply",
    [
        "When it is in the community room downstairs, yes. If it is held at the management "
        "office, check with me; the parking there is impossible.",
        "Let's keep that to the regular monthly ones. Anything special, run it past me.",
    ],
)
def test_one_side_accepted_and_the_other_handed_back_is_scoped(reply: str) -> None:
    assert classify_reply(BOARD, reply).act is Act.scoped


@pytest.mark.parametrize(
    "reply",
    [
        "To the casual eye, what separates a cormorant from a loon?",
        "how do you stop an avocado going brown once it's cut",
        "What's the difference between baking soda and baking powder? I only half remember.",
    ],
)
def test_a_question_on_another_subject_is_no_uptake(reply: str) -> None:
    assert classify_reply(BOARD, reply).act is Act.no_uptake


def test_a_meaning_similarity_picks_which_entry_an_instruction_revises(
    tmp_path: Path,
) -> None:
    episode = session(
        "s1",
        D1,
        ("user", "Send the roster to the district office."),
        ("assistant", "Sent the redacted roster. Want that to be the version I send from now on?"),
        ("user", "Yes, make it the practice."),
        ("user", "Send my lab write-up to the newsletter."),
        ("assistant", "Sent the one-page summary. Should I default to the one-pager from now on?"),
        ("user", "Sure."),
    )
    revision = session(
        "s2",
        D2,
        ("user", "Editors want the full write-up now. Going forward, ask me which version."),
        ("assistant", "Understood."),
    )

    def meaning(a: str, b: str) -> float:  # a stand-in for MiniLM: "write-up" ~ "one-pager"
        return 1.0 if "one-pager" in b else 0.0

    revised = {}
    for name, sim in (("words", None), ("meaning", meaning)):
        with LedgerStore(tmp_path / f"{name}.db") as store:
            writer = LedgerWriter(store, similarity=sim)
            writer.process_session(episode)
            writer.process_session(revision)
            revised[name] = [e.content for e in store.all() if e.status is Status.revised]
    assert revised["meaning"] == ["Should I default to the one-pager from now on?"]
    assert len(revised["words"]) == 1  # topic words alone also find one entry to revise


MARTA = (
    "I'll RSVP yes to Marta's open house. Want me to say yes to her studio events from now "
    "on whenever you're free?"
)


@pytest.mark.parametrize(
    "reply",
    [
        "Yes, Marta's events are the only ones I never miss.",
        "Of course, for the reasons you gave.",
        "Do it, with the usual note to her.",
        "Please do, I'm always free on those evenings anyway.",
        "Yes, that's for the best with the two of us so busy.",
    ],
)
def test_a_reason_or_description_beside_a_yes_is_not_a_limit(reply: str) -> None:
    assert classify_reply(MARTA, reply).act is Act.accept


def test_a_limit_stands_beside_a_reason() -> None:
    reply = "Only the weekend ones. Weekdays I'm stuck at work anyway."
    got = classify_reply(MARTA, reply)
    assert got.act is Act.scoped and got.scope is not None and "weekend" in got.scope


def test_whom_a_rule_sends_to_leaves_out_the_one_it_replaces() -> None:
    from ledger.text import addressees

    standing = "Shall I route repair reports there from now on rather than to Arlene?"
    turn = "I'll send it to the desk at repairs@crest.test. " + standing
    names, mailboxes = addressees(standing, refer=turn)
    assert "arlene" not in names
    assert mailboxes == {"repairs"}  # "there": where the turn sent the first one
    names, _ = addressees(
        "Would you like me to send her each statement?", refer="I sent it to Emi."
    )
    assert names == {"emi"}


def test_naming_a_recipient_names_a_contact_not_a_document() -> None:
    """ "Send her each statement" after "I'll forward the Chase statement to Emi": Chase is
    not whom the rule sends to, and the Chase statement is not the rule's document."""
    from ledger.text import addressed_in

    standing = "Would you like me to send her each statement and bill as it comes in?"
    turn = "I'll forward the Chase statement to Emi now. " + standing
    assert addressed_in(standing, "Emi Nakagawa daughter emi.n@mail.test", refer=turn) == 1
    assert addressed_in(standing, "Chase checking statement - July 2026", refer=turn) == 0


TUBES = (
    "I'll order the current-production 12AU7 for $16 instead of the NOS one at $38. Want me "
    "to go with current production whenever there's a choice between that and NOS?"
)


@pytest.mark.parametrize(
    ("reply", "act"),
    [
        (
            "The NOS prices have gotten ridiculous. Current production unless I say otherwise.",
            Act.accept,
        ),
        ("Thirty quid saved? Every single time, please.", Act.accept),
        # someone's habit sharing a topic word is not an acceptance
        ("What does NOS stand for? My uncle always said it.", None),
        ("My dad always bought NOS tubes.", None),
    ],
)
def test_rhetorical_questions_habits_and_how_often(reply: str, act: Act | None) -> None:
    got = classify_reply(TUBES, reply).act
    if act is None:
        assert got is not Act.accept and got is not Act.scoped
    else:
        assert got is act


@pytest.mark.parametrize(
    "turn",
    [
        "Ordered the jeans in an 8. Want me to size up like that on everything I buy for her?",
        "Sent Sam the chart. If one of the guys asks for a chart, should I just send it over "
        "without bugging you?",
    ],
)
def test_offers_over_a_whole_class_or_a_condition(turn: str) -> None:
    from ledger.classifier import detect_proposal

    assert detect_proposal(turn) is not None


REHEARSALS = (
    "Andre sends these weekly, so do you want me to just say yes to his rehearsal invites "
    "whenever your calendar's open?"
)
LOWBALL = (
    "Your rate is $450, so for offers under that, should I just turn them down as they come in?"
)


@pytest.mark.parametrize(
    ("proposal", "reply", "act"),
    [
        (REHEARSALS, "That's literally what we agreed to. Go.", Act.accept),
        (REHEARSALS, "Warranty's easier that way. Keep it all there.", Act.accept),
        # the proposal's own answer in other words, after a limit: a scope, not a new rule
        (REHEARSALS, "Weeknights, just accept them. Weekends, run it by me first.", Act.scoped),
        (LOWBALL, "Under three hundred, just say no. Between that and 450, show me.", Act.scoped),
    ],
)
def test_restating_the_answer_in_other_words(proposal: str, reply: str, act: Act) -> None:
    assert classify_reply(proposal, reply).act is act


def test_going_through_a_mailbox_is_not_going_to_an_event() -> None:
    from ledger.classifier import action_type_of

    rule = "Shall we do it that way, with everything you send Helen going through casework@?"
    assert action_type_of(rule) is ActionType.send
    assert (
        action_type_of("Should I tell Marta you're going whenever she invites you?")
        is ActionType.rsvp
    )


FLIGHTS = (
    "Booked you both in Main Cabin. Basic would have saved $140 but you couldn't sit "
    "together. Should I go Main Cabin over Basic whenever I book flights for you?"
)


@pytest.mark.parametrize(
    ("reply", "accepts"),
    [
        ("Basic Economy is a scam with extra steps. Main Cabin.", True),
        ("Main Cabin, obviously.", True),
        # a question, a limit, a refusal or a new subject naming the option does not choose it
        ("Is Main Cabin the one with free bags?", False),
        ("Main Cabin only when Nora flies.", False),
        ("Main Cabin costs too much.", False),
        ("My sister always flies Basic.", False),
    ],
)
def test_naming_the_proposals_own_choice_accepts(reply: str, accepts: bool) -> None:
    assert (classify_reply(FLIGHTS, reply).act is Act.accept) is accepts


# --- later instructions: which entry they revise ---------------------------------------------

OPENINGS = session(
    "s1",
    D1,
    ("user", "The Harbour Gallery asked me to their winter opening."),
    (
        "assistant",
        "I accepted. You go to almost every gallery opening, so should I accept openings "
        "for you whenever you're free?",
    ),
    ("user", "Yes, do that."),
    ("user", "The Saturday craft fair wants a stallholder again."),
    (
        "assistant",
        "I said yes. Should I take the stall whenever a craft fair offers you one?",
    ),
    ("user", "Sure, go for it."),
)
QUIT_OPENINGS = session(
    "s2",
    D2,
    (
        "user",
        "About the gallery openings: quit accepting them for me. From now on ask me each time.",
    ),
    ("assistant", "Understood."),
)


def _revised_after(episode: list[Turn], revision: list[Turn], meaning, path: Path) -> list[str]:
    with LedgerStore(path) as store:
        writer = LedgerWriter(store, similarity=meaning)
        writer.process_session(episode)
        writer.process_session(revision)
        return [e.content for e in store.all() if e.status is Status.revised]


def test_topic_words_and_meaning_both_count_in_picking_the_entry(tmp_path: Path) -> None:
    # The instruction names the openings; meaning alone finds the fair a shade closer (both
    # are invitations to accept). Words and meaning together pick the openings...
    def close_call(a: str, b: str) -> float:
        return 0.45 if "craft fair" in b else 0.40

    revised = _revised_after(OPENINGS, QUIT_OPENINGS, close_call, tmp_path / "a.db")
    assert len(revised) == 1 and "gallery opening" in revised[0]

    # ... while a clear difference in meaning still decides.
    def clear(a: str, b: str) -> float:
        return 0.9 if "craft fair" in b else 0.2

    revised = _revised_after(OPENINGS, QUIT_OPENINGS, clear, tmp_path / "b.db")
    assert len(revised) == 1 and "craft fair" in revised[0]


def test_a_pictograph_the_user_defined_ties_an_instruction_to_its_entry(tmp_path: Path) -> None:
    episode = session(
        "s1",
        D1,
        ("user", "🎉"),
        (
            "assistant",
            "I'll mark the book club as maybe. Want me to read a bare 🎉 as 'mark me maybe' "
            "from now on?",
        ),
        ("user", "Yes please."),
        ("user", "Decline the timeshare dinner."),
        ("assistant", "Declined. Should I turn those sales dinners down automatically?"),
        ("user", "Yes."),
    )
    revision = session(
        "s2",
        D2,
        ("user", "ok new rule, 🎉 now means yes. from now on just accept"),
        ("assistant", "Got it."),
    )
    revised = _revised_after(episode, revision, None, tmp_path / "l.db")
    assert len(revised) == 1 and "🎉" in revised[0]


@pytest.mark.parametrize(
    "said",
    [
        "From now on tea means the Assam loose leaf, the 500 g tin.",
        "New policy for the allotment: decline whatever lands on a Sunday.",
        "Stop picking the size for me; ask me which one I want before you order.",
        "From now on invoices go to billing@example.org, not to me.",
        "From now on it's the oat biscuits, the family pack.",
        "From here on just tell them no.",
        "Stop doubling up automatically; ask me how many I need before you buy any.",
    ],
)
def test_standing_instructions_in_everyday_forms(said: str) -> None:
    assert detect_user_rule(said) is not None


@pytest.mark.parametrize(
    "said",
    [
        "We went to the beach on Sunday; it means a lot to the kids.",
        "It's the best café in town.",
        "Stop by the bakery on your way; the rolls go fast.",
        "Does everything go to billing from now on?",
    ],
)
def test_everyday_remarks_are_not_instructions(said: str) -> None:
    assert detect_user_rule(said) is None


CV = (
    "I sent Dr. Reyes the March version of your CV. Should that be the version I send "
    "whenever someone asks for your CV?"
)
TRIVIA = (
    "I accepted Dev's trivia night. He runs one every month; should I accept those too "
    "whenever you're free?"
)
SHIFTS = (
    "Declined Ana's Friday dinner since you're on nights. Should I take care of these myself "
    "whenever an invite lands on a shift night?"
)


@pytest.mark.parametrize(
    "assistant,reply",
    [
        (CV, "Go with it every time."),
        (CV, "The March one's the keeper. Use that one for all of them."),
        (TRIVIA, "Dev's quizzes are the best. Put me down for all of 'em."),
        (SHIFTS, "Yes, decline those; I can't swap my shifts for a dinner anyway."),
    ],
)
def test_a_directive_in_the_assistants_own_words_is_an_acceptance(
    assistant: str, reply: str
) -> None:
    assert classify_reply(assistant, reply).act is Act.accept


@pytest.mark.parametrize(
    "assistant,reply",
    [
        (CV, "Go with the two-page résumé every time."),
        (TRIVIA, "Put me down as a maybe for all of them from now on."),
        (SHIFTS, "Swap them to a maybe from now on."),
    ],
)
def test_a_directive_with_something_new_is_a_revision(assistant: str, reply: str) -> None:
    assert classify_reply(assistant, reply).act is Act.revise


# --- acceptances without a yes, and what is not a refusal -------------------------------------

ROTA = (
    "I'll send Aroha the PDF of the roster; it opens properly on a phone, unlike the "
    "spreadsheet. Next time anyone asks for a roster, shall I send the PDF rather than the "
    "spreadsheet?"
)
REPORTS = (
    "I'll send the coach the summary rather than your clinical notes. Whenever a coach asks "
    "for an update, shall I handle it the same way?"
)


@pytest.mark.parametrize(
    "assistant,reply",
    [
        (ROTA, "Spot on. Most of them read it at the bus stop and the spreadsheet baffles them."),
        (REPORTS, "Exactly what they need. No coach needs to read about an old knee injury."),
        (REPORTS, "Precisely so. Notes stay with me."),
        (ROTA, "Let it be so."),
        (ROTA, "That is how it should be."),
        (REPORTS, "One hundred per cent. The board would have my guts otherwise."),
        (ROTA, "That would lift a great weight off me."),
        (REPORTS, "You'd be doing me a mitzvah."),
    ],
)
def test_acceptances_in_other_words(assistant: str, reply: str) -> None:
    assert classify_reply(assistant, reply).act is Act.accept


@pytest.mark.parametrize(
    "reply",
    [
        "No. I'd rather pick the format each time.",
        "Stop. I'll send them myself.",
        "Please stop, I'll send them myself.",
        "No more automatic sending, thanks.",
    ],
)
def test_refusals_still_refuse(reply: str) -> None:
    assert classify_reply(ROTA, reply).act is Act.reject


def test_someone_else_doing_that_is_no_yes() -> None:
    reply = "My landlord kept back part of the deposit for cleaning. Can a landlord do that?"
    assert classify_reply(ROTA, reply).act is Act.no_uptake


RESTOCK = (
    "I've reordered the gel. Reception runs short every few weeks; whenever they flag a "
    "consumable running low, shall I reorder the same item without asking?"
)


def test_off_you_go_within_a_limit_is_a_scope() -> None:
    reply = "Anything under a hundred bucks, off you go. Over that, speak to me first."
    got = classify_reply(RESTOCK, reply)
    assert got.act is Act.scoped


def test_saves_us_is_an_acceptance() -> None:
    reply = "Reception will love that. Saves us three phone calls a week."
    assert classify_reply(RESTOCK, reply).act is Act.accept


def test_a_list_or_a_name_with_an_honorific_is_whom_a_rule_sends_to() -> None:
    """ "Straight out to the regulars list" names the list whose mailbox is regulars@;
    "going to Okada-san" names Chieko Okada; neither names anyone else."""
    from ledger.text import addressed_in, normalize

    standing = "Should closure notices go straight out to the regulars list from now on?"
    assert addressed_in(standing, "Shop regulars mailing list regulars@kissa.test") == 1
    assert addressed_in(standing, "Keiko Matsui part-timer keiko.matsui@kissa.test") == 0
    route = "Shall your mother's papers always go through Okada-san from now on?"
    assert addressed_in(route, "Chieko Okada care manager okada@careplan.test") == 1
    assert addressed_in(route, "Mika Sakai day-service nurse nurse@dayservice.test") == 0
    assert normalize("Ask Sakai-san and Tanaka-sensei") == "ask sakai and tanaka"


def test_things_going_to_someone_are_sent_and_a_route_said_again_is_a_yes() -> None:
    from ledger.classifier import action_type_of, detect_proposal

    turn = (
        "I sent the discharge letter to Okada-san and asked her to pass it on to the day "
        "service. Would you like that to be how we always do it, with your mother's papers "
        "going to Okada-san and her passing them along?"
    )
    found = detect_proposal(turn)
    assert found is not None and found.action_type is ActionType.send
    assert action_type_of("Are you going to the party on Friday?") is ActionType.rsvp
    # nor does a rule about papers going to someone say how to answer her invitations
    from ledger.gate import implied_response

    assert implied_response(turn) is None
    assert implied_response("Shall I say I'm going to the rota meetings?") == "yes"
    reply = "Through Okada-san, always. She's the one who keeps everyone straight."
    assert classify_reply(turn, reply).act is Act.accept
    limited = "Through Okada-san, but only the medical papers. The rest come to me."
    assert classify_reply(turn, limited).act is Act.scoped
