"""The rules grounding-act classifier on fresh, hand-written dialogue (not from the dataset)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from ledger.classifier import (
    action_type_of,
    classify_reply,
    detect_proposal,
    detect_user_rule,
    one_time_acceptance,
)
from ledger.model import Act, ActionType, Kind
from ledger.scope import parse_scope
from ledger.text import sides
from tests.conftest import ROOT

# --- detect_proposal ----------------------------------------------------------------

STANDING_OFFERS = [
    ("From now on, I'll decline any invitation that lands on a Sunday.", ActionType.rsvp),
    ("Should I automatically reorder printer ink when it runs low?", ActionType.purchase),
    (
        "Whenever Priya emails you an invoice, I can forward it to your accountant.",
        ActionType.send,
    ),
    ("Want me to make that the default for all future lunch orders?", ActionType.purchase),
    ("By default, I'll cc your assistant Rob on messages to vendors.", ActionType.send),
    ("Shall I auto-accept calendar invites from your manager going forward?", ActionType.rsvp),
    ("Going forward I'll sign your emails with just your first name.", ActionType.send),
    (
        "Done, I told Jo you're in. Next time Jo hosts trivia, should I just RSVP yes for you?",
        ActionType.rsvp,
    ),
]
ONE_OFF_OFFERS = [
    "Want me to order this one for you?",
    "I've RSVP'd yes to Marco's barbecue on Saturday.",
    "Should I send the slides to Jenna now?",
    "The package arrives Thursday.",
    "I can buy the blue kettle for $34 just this once, if you like.",
    "Shall I decline the book club invite for tonight?",
    "Should I RSVP no to the retirement dinner this time?",
    # "each" and "every" in a report or a one-off are no standing rule
    "I've wrapped each one in tissue paper and sent the parcel.",
    "Every report I found is in the shared folder now.",
    "When the parcel arrives, it goes to the front desk.",
]


@pytest.mark.parametrize(("text", "action"), STANDING_OFFERS)
def test_standing_offers_are_proposals(text: str, action: ActionType) -> None:
    proposal = detect_proposal(text)
    assert proposal is not None
    assert proposal.action_type is action
    assert proposal.text.strip()


@pytest.mark.parametrize("text", ONE_OFF_OFFERS)
def test_one_off_offers_and_answers_are_not_proposals(text: str) -> None:
    assert detect_proposal(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Might be easiest if I decline any meeting after 4pm for you. Want me to?",
        "Reckon I should default to express post for anything going to your accountant?",
        "How about I treat 'done' from you as a yes to any club invitation?",
        "Shall I take it that any field trip form gets signed and sent back?",
        "Would you like me to handle all future council letters like that?",
        "Would it help if I kept bread on a weekly repeat so you never have to ask?",
        "Bought the oat milk. Is it alright if I keep topping it up termly without checking?",
        "Any invite from your book club: yes by default, and I tell you afterwards. Does that "
        "sound fair?",
        "I booked the 14th. And for the follow-up ones, shall I just take the first slot?",
        "If a tenant asks for a copy of the lease, would you be happy for me to send it?",
        "If she asks again next month, can I just send the timetable straight off?",
        "The rule I'd suggest: invitations on a school night get a no. Shall I work like that?",
    ],
)
def test_indirect_standing_offers_are_proposals(text: str) -> None:
    assert detect_proposal(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "There are three invitations from the school in your inbox. Want me to RSVP yes to all "
        "of them?",
        "Is there any milk left, or shall I order some?",
        "Shall I send it to her now, or do you have any changes?",
        "Would you like the blue one or the green one this time?",
    ],
)
def test_a_batch_or_a_question_with_any_is_no_proposal(text: str) -> None:
    assert detect_proposal(text) is None


def test_the_proposal_battery_by_counts() -> None:
    """`proposals_detect.jsonl` (2026-12-04, 200 assistant turns written blind to the code:
    130 standing offers in indirect wording, 70 one-off turns built to fool a detector).
    Measured blind at the session's start: 91/130 found, 6 one-off turns taken for offers;
    then its misses were read and fixed in general form: 118/130, still 6."""
    rows = [
        json.loads(line)
        for line in (ROOT / "tests" / "data" / "proposals_detect.jsonl").read_text().splitlines()
        if line.strip()
    ]
    found = sum(1 for r in rows if r["label"] == "standing" and detect_proposal(r["assistant"]))
    false = sum(1 for r in rows if r["label"] == "one_off" and detect_proposal(r["assistant"]))
    assert found >= 118
    assert false <= 6


def _detection_counts(name: str) -> tuple[int, int]:
    rows = [
        json.loads(line)
        for line in (ROOT / "tests" / "data" / name).read_text().splitlines()
        if line.strip()
    ]
    found = sum(1 for r in rows if r["label"] == "standing" and detect_proposal(r["assistant"]))
    false = sum(1 for r in rows if r["label"] == "one_off" and detect_proposal(r["assistant"]))
    return found, false


def test_the_second_proposal_battery_by_counts() -> None:
    """`proposals_blind2.jsonl` (2026-12-07, 230 turns written blind to the code: 150
    standing offers, most without the usual cue words, 80 one-off turns). Measured blind at
    the session's start: 84/150 found, 3 one-off turns taken for offers; its misses were
    then read and fixed in general form: 138/150, still 3."""
    found, false = _detection_counts("proposals_blind2.jsonl")
    assert found >= 138
    assert false <= 3


def test_the_held_out_proposal_battery_by_counts() -> None:
    """`proposals_blind3.jsonl` (2026-12-07, 190 turns by another writer, never read):
    73/120 offers found by the session-start code, 82/120 after the fixes drawn from
    `proposals_blind2`; no one-off turn taken for an offer by either."""
    found, false = _detection_counts("proposals_blind3.jsonl")
    assert found >= 82
    assert false == 0


def test_proposal_keeps_only_the_standing_sentence() -> None:
    text = (
        "I ordered the oat milk for $4.50. From now on, should I reorder it automatically "
        "whenever you're down to one carton?"
    )
    proposal = detect_proposal(text)
    assert proposal is not None
    assert "From now on" in proposal.text and "$4.50" not in proposal.text
    assert proposal.is_question
    assert proposal.kind is Kind.delegation
    assert proposal.action_type is ActionType.purchase


def test_proposal_kind_convention_for_cc() -> None:
    proposal = detect_proposal("Going forward I'll cc Rob on every email to vendors.")
    assert proposal is not None and proposal.kind is Kind.convention
    assert not proposal.is_question


@pytest.mark.parametrize(
    "text",
    [
        "I could keep sending the weekly summary to Dana every Friday.",
        "Should I keep forwarding your landlord's notices to Sam every month?",
    ],
)
def test_ing_forms_of_send_verbs_are_send(text: str) -> None:
    proposal = detect_proposal(text)
    assert proposal is not None
    assert proposal.action_type is ActionType.send


@pytest.mark.parametrize(
    "text",
    [
        "I've put you down as a maybe for the clearing. I could answer each one the same way, "
        "a maybe that you firm up on the morning, if that suits you?",
        "Shall I put you down for every one of their work days from now on?",
    ],
)
def test_a_maybe_and_putting_someone_down_are_rsvp(text: str) -> None:
    proposal = detect_proposal(text)
    assert proposal is not None and proposal.action_type is ActionType.rsvp


@pytest.mark.parametrize(
    ("text", "action"),
    [
        (
            "Going forward, I'll forward every receipt to your accountant automatically.",
            ActionType.send,
        ),
        ("Going forward, I'll pay the water bill automatically.", ActionType.other),
    ],
)
def test_going_forward_is_not_an_rsvp_cue(text: str, action: ActionType) -> None:
    assert action_type_of(text) is action


def test_action_type_of() -> None:
    assert action_type_of("RSVP yes to the wedding") is ActionType.rsvp
    assert action_type_of("buy the paperback edition") is ActionType.purchase
    assert action_type_of("email the invoice to Dana") is ActionType.send
    assert action_type_of("water the plants") is ActionType.other


# --- classify_reply: the seven labels on fresh dialogue -------------------------------

OAT = (
    "I've ordered the oat milk. From now on, should I reorder it automatically whenever "
    "you're down to one carton?"
)
CLIMB = (
    "I RSVP'd yes to Tomás's housewarming on Friday. Going forward, want me to accept every "
    "invitation from your climbing friends when your calendar is free?"
)
LEASE = (
    "I forwarded the lease PDF to your landlord. In the future I can automatically forward "
    "any document your landlord asks for."
)
THANKS = (
    "Sent the thank-you note to Aunt Rosa. Should I always send thank-you notes for gifts "
    "from now on?"
)
TICKETS = (
    "I bought the concert tickets for $48. Should I automatically buy tickets for shows by "
    "bands you follow from now on?"
)

ACCEPT = [
    (OAT, "Yes please, that would be great."),
    (OAT, "I suppose that's fine."),  # hedged
    (CLIMB, "Go for it, that saves me a ton of back-and-forth."),  # no "yes"
    (LEASE, "Honestly that'd be a huge help."),  # no "yes"
    (THANKS, "Can't hurt, I guess."),  # hedged, no "yes"
    (TICKETS, "I mean... why not."),  # hedged, no "yes"
    (CLIMB, "Ha, that would save me so much texting. Also what time does the party start?"),
]
SCOPED = [  # (assistant, user, a word the scope must keep)
    (CLIMB, "Sure, but only for weekend stuff.", "weekend"),
    (OAT, "Yes, as long as it's under $6.", "$6"),  # no "only"
    (THANKS, "For family, yes.", "family"),  # no "only", the limit first
    (TICKETS, "Under fifty bucks, sure.", "fifty"),  # no "only"
    (CLIMB, "Okay for the bouldering crew, not the ski trips.", "bouldering"),
    (LEASE, "Fine, but just to the landlord, nobody else.", "landlord"),
    (CLIMB, "Weekends are fine, weeknights ask me.", "Weekends"),
    (TICKETS, "Sure, if it's in Oakland.", "Oakland"),
]
IMPLICIT = [
    (CLIMB, "Great, and tell him I'll bring a salad."),
    (OAT, "Thanks! Did it say when it would arrive?"),
    (THANKS, "Aw, thank you. Did you mention the scarf she knitted?"),
    (TICKETS, "Perfect. Put the show on my calendar too."),
    (OAT, "Sure, for now."),  # a yes, but for this time only
    (TICKETS, "Yes for this one, thanks."),
]
REVISE = [  # (assistant, user, words the new rule must keep)
    (CLIMB, "Rather than accepting, mark me as maybe by default.", "maybe"),
    (
        OAT,
        "Instead of reordering automatically, just add it to my shopping list from now on.",
        "shopping list",
    ),
    (THANKS, "I'd rather you draft them and leave them in my outbox going forward.", "draft"),
    (CLIMB, "Default to maybe instead.", "maybe"),
]
REJECT = [
    (OAT, "I'd rather make that call myself each time."),  # no "no"
    (CLIMB, "Hmm, I'll pass on that, I like to choose myself."),  # no "no"
    (THANKS, "I prefer to handle these case by case."),  # no "no"
    (LEASE, "Please don't, some of those are sensitive."),
    (TICKETS, "That's a bit much; I'll stick with buying them myself."),  # no "no"
    (CLIMB, "That feels presumptuous."),  # no "no"
    (THANKS, "Keep asking me, thanks."),  # no "no"
    (OAT, "Nah."),
]
NO_UPTAKE = [
    (OAT, "What's the weather looking like for Saturday?"),
    (CLIMB, "By the way, when is my dentist appointment?"),
    (THANKS, "Can you find me a good ramen place near the office?"),
    (TICKETS, "Unrelated, but did my passport renewal go through?"),
    (CLIMB, "Remind me to call my sister tomorrow."),
]
NO_PROPOSAL = [
    ("I've RSVP'd yes to Marco's barbecue on Saturday.", "Great, thanks!"),
    ("Want me to order this one for you?", "Yes please, the large one."),  # one-off accepted
    ("The package arrives Thursday.", "From now on just tell me when it ships."),
]


@pytest.mark.parametrize(("assistant", "user"), ACCEPT)
def test_accept(assistant: str, user: str) -> None:
    result = classify_reply(assistant, user)
    assert result.act is Act.accept
    assert result.proposal is not None


def test_hedged_accept_starting_with_eh() -> None:
    assert classify_reply(OAT, "Eh, sure, I guess.").act is Act.accept


@pytest.mark.parametrize(("assistant", "user", "words"), SCOPED)
def test_scoped(assistant: str, user: str, words: str) -> None:
    result = classify_reply(assistant, user)
    assert result.act is Act.scoped
    assert result.scope is not None and words in result.scope
    assert result.scope in user  # the user's own words


def test_scoped_by_asking_above_a_price() -> None:
    user = "Yes, but ask me first for anything over $100."
    assert classify_reply(TICKETS, user).act is Act.scoped
    scope = parse_scope(user)
    assert scope.max_amount == 100 and scope.min_amount is None


def test_scoped_by_channel_without_only() -> None:
    assert classify_reply(THANKS, "Okay, by email, not by text.").act is Act.scoped


@pytest.mark.parametrize(("assistant", "user"), IMPLICIT)
def test_implicit(assistant: str, user: str) -> None:
    assert classify_reply(assistant, user).act is Act.implicit


def test_implicit_after_a_short_one_off_part() -> None:
    assistant = (
        "Done, I RSVP'd yes. Going forward, should I RSVP yes to your climbing friends' "
        "invitations automatically whenever you're free?"
    )
    assert classify_reply(assistant, "Great, and tell him I'll bring a salad.").act is Act.implicit


@pytest.mark.parametrize(("assistant", "user", "words"), REVISE)
def test_revise(assistant: str, user: str, words: str) -> None:
    result = classify_reply(assistant, user)
    assert result.act is Act.revise
    assert result.revision is not None and words in result.revision


@pytest.mark.parametrize(("assistant", "user"), REJECT)
def test_reject(assistant: str, user: str) -> None:
    assert classify_reply(assistant, user).act is Act.reject


@pytest.mark.parametrize(("assistant", "user"), NO_UPTAKE)
def test_no_uptake(assistant: str, user: str) -> None:
    result = classify_reply(assistant, user)
    assert result.act is Act.no_uptake
    assert result.proposal is not None  # the proposal stays on record, unaccepted


@pytest.mark.parametrize(("assistant", "user"), NO_PROPOSAL)
def test_no_proposal(assistant: str, user: str) -> None:
    result = classify_reply(assistant, user)
    assert result.act is Act.no_proposal
    assert result.proposal is None


def test_fresh_examples_are_not_copied_from_the_dataset() -> None:
    data = ROOT / "tests" / "data" / "classify_labelled.jsonl"
    rows = [json.loads(line) for line in data.read_text().splitlines() if line.strip()]
    seen = {r["user"].strip().lower() for r in rows} | {r["assistant"].strip() for r in rows}
    cases = [*ACCEPT, *SCOPED, *IMPLICIT, *REVISE, *REJECT, *NO_UPTAKE, *NO_PROPOSAL]
    assert not [c[1] for c in cases if c[1].strip().lower() in seen]
    assistants = [OAT, CLIMB, LEASE, THANKS, TICKETS, *(c[0] for c in NO_PROPOSAL)]
    assert not [a for a in assistants if a in seen]


# --- detect_user_rule ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        (
            "From now on, always decline anything from the PTA.",
            "From now on, always decline anything from the PTA.",
        ),
        (
            "Thanks for the update. Going forward, cc Rob on every vendor email.",
            "Going forward, cc Rob on every vendor email.",
        ),
        (
            "Stop RSVPing for me automatically, ask me first.",
            "Stop RSVPing for me automatically, ask me first.",
        ),
        (
            "Never buy anything over $50 without checking with me.",
            "Never buy anything over $50 without checking with me.",
        ),
        (
            # the hand-back after the case: standing because it is about any of them
            "Something new: before you restock any of my paints, ask me. I want to try others.",
            "Something new: before you restock any of my paints, ask me.",
        ),
    ],
)
def test_user_rule_found(text: str, rule: str) -> None:
    assert detect_user_rule(text) == rule


@pytest.mark.parametrize(
    "text",
    [
        "Can you RSVP yes to Lia's dinner?",  # a one-off request
        "Should I always decline PTA events?",  # a question, not an instruction
        "What's the weather on Saturday?",
        "Thanks, that's great.",
        "I always forget my umbrella.",  # 'always', but nothing the assistant does
        "Before you order the cake, ask me about the flavour.",  # this one order
    ],
)
def test_user_rule_not_found(text: str) -> None:
    assert detect_user_rule(text) is None


# --- limits tied to a yes, the other side handed back, and replies that only look like -----

POTLUCK = "Should I always RSVP yes to neighborhood potlucks when you're free?"
DOG_FOOD = "I ordered the dog food. Want me to reorder it automatically whenever the bag runs low?"
SHIPPING = "From now on, want me to forward shipping notices to your partner?"
STATUS = "Going forward, should I send your weekly status report to the whole project channel?"
CAR_WASH = (
    "I've booked the car wash for Saturday. Should I book it automatically every other "
    "Saturday from now on?"
)

TIED_LIMITS = [  # (assistant, user, the scope clause)
    (
        POTLUCK,
        "Block parties, sure. Anything at the community center, run it past me.",
        "Block parties",
    ),
    (
        POTLUCK,
        "The ones on our street, yes. Farther away, I'd like to decide.",
        "The ones on our street",
    ),
    (
        SHIPPING,
        "For packages from the pharmacy, definitely. Gifts for her, obviously not.",
        "For packages from the pharmacy",
    ),
    (STATUS, "By Slack, yes, not by email.", "By Slack"),
    (POTLUCK, "Weekday evenings work, weekends let me handle.", "Weekday evenings work"),
    (DOG_FOOD, "Go ahead, but check with me for anything above $60.", "anything above $60"),
    (
        SHIPPING,
        "Do that for the ones from the vet. Anyone else, I'd rather you ask.",
        "Do that for the ones from the vet",
    ),
]


@pytest.mark.parametrize(("assistant", "user", "clause"), TIED_LIMITS)
def test_a_limit_next_to_a_yes_is_scoped(assistant: str, user: str, clause: str) -> None:
    result = classify_reply(assistant, user)
    assert result.act is Act.scoped
    assert result.scope is not None and clause in result.scope and result.scope in user


@pytest.mark.parametrize(
    ("assistant", "user", "act"),
    [
        (DOG_FOOD, "Oh please, yes. I always forget.", Act.accept),
        (SHIPPING, "Good idea, she keeps asking me where stuff is.", Act.accept),
        (STATUS, "Honestly, that'd be a relief. Do it.", Act.accept),
        (DOG_FOOD, "Eh, fine, why not.", Act.accept),
        (DOG_FOOD, "Sure. Reorder it from now on, it's a pain to remember.", Act.accept),
        (POTLUCK, "Meh, I'd rather answer those myself.", Act.reject),
        (SHIPPING, "Never do that, please.", Act.reject),
        (POTLUCK, "Is it rude to bring store-bought dessert to a potluck?", Act.no_uptake),
        (STATUS, "How do I stop my laptop fan from being so loud?", Act.no_uptake),
        (CAR_WASH, "Great, and ask them to vacuum the back seats.", Act.implicit),
        (DOG_FOOD, "Perfect, and add a chew toy to the order.", Act.implicit),
        (POTLUCK, "Ugh, my sink is clogged again. What should I use?", Act.no_uptake),
    ],
)
def test_general_acts(assistant: str, user: str, act: Act) -> None:
    assert classify_reply(assistant, user).act is act


@pytest.mark.parametrize(
    ("user", "once"),
    [
        ("Yes, just this once.", True),
        ("This time only, don't make it a rule.", True),
        ("Okay, only this time.", True),
        ("No, not even this once.", False),
        ("Sure, for now.", False),  # for a while, not one call
        ("Yes please, from now on.", False),
    ],
)
def test_one_time_acceptance(user: str, once: bool) -> None:
    assert one_time_acceptance(user) is once
    if once:  # the standing rule itself is not accepted
        assert classify_reply(DOG_FOOD, user).act is Act.implicit


# --- acceptances in everyday speech (2026-12-03) -------------------------------------------

CHOIR = (
    "I've said yes to Saturday's choir social at the Crown. Going forward, want me to accept "
    "the choir's socials whenever your calendar's free?"
)
FILTERS = (
    "I've ordered two replacement water filters for the fridge. Should I reorder them every "
    "six months without asking?"
)
CONTRACT = (
    "I've sent the signed contract to Okafor Builders, not the unsigned draft. Should I always "
    "send the signed version from now on?"
)
CLUB = (
    "I've said yes to the club's quiz on Saturday. From now on, shall I accept the club's "
    "invitations whenever your calendar is free?"
)
GALLERY = (
    "I've sent your portfolio to the gallery in Leith. If other galleries get in touch, "
    "should I send it to them too?"
)
NIGHTS = (
    "I've turned down Ola's quiz on Tuesday because you're on nights. If another invite lands "
    "on a night-shift week, should I just decline it for you?"
)


@pytest.mark.parametrize(
    ("assistant", "user"),
    [
        (CHOIR, "Please do, those are the nights I look forward to all week."),  # yes, a reason
        (CHOIR, "Yeah go on, it's the one thing I never want to miss."),
        (FILTERS, "Do, sure there's no point even asking me about those."),
        (FILTERS, "Don't even bother asking, just keep them coming."),
        (CHOIR, "Oh, go on. I wouldn't miss one of those for the world, rain or no rain."),
        (CHOIR, "Ah go on, I'd go to all of them if I could."),
        (FILTERS, "Legend. Set and forget."),
        (FILTERS, "That's the one. Never changes."),
        (CONTRACT, "Why on earth would I want the unsigned copy going anywhere?"),
        (NIGHTS, "Absolutely, I'm useless on those weeks."),  # "if another ...": standing
        (CHOIR, "Ja, definitely, she loves every single one of those."),  # other Englishes
        (CHOIR, "Aye, go on then, wouldnae miss one."),
        (CHOIR, "Too easy, go for it."),
        (CHOIR, "InshaAllah, that would be perfect, the kids love them."),
        (CHOIR, "Go on so, sure it's all for the kids."),
        (FILTERS, "What's not to love? Keep them coming."),
        (FILTERS, "Lovely, that's the fridge sorted."),
        (FILTERS, "Good shout, I always feel awkward chasing those anyway."),  # praise, a reason
        (FILTERS, "You'd be saving me from myself, I forget every single time."),
    ],
)
def test_everyday_acceptances(assistant: str, user: str) -> None:
    assert classify_reply(assistant, user).act is Act.accept


@pytest.mark.parametrize(
    "assistant",
    [
        "I've booked the plumber for Tuesday. If anything else in the house needs fixing, I "
        "could just book him directly rather than check with you first.",
        GALLERY,
        "Ordered a pack of AA batteries, $9. If I notice you're low again, should I just reorder?",
        "I've emailed Nana the photos from the recital. Should I send her new photos as you "
        "take them?",
        "Flowers are ordered for your mum's birthday. Want me to do the same for every "
        "family birthday?",
        "I'll send the form to the league's office address rather than Ana's Gmail. Shall we "
        "make that the way it's done, anything for the league goes to the office address?",
    ],
)
def test_offers_on_cases_still_to_come_are_standing_proposals(assistant: str) -> None:
    assert detect_proposal(assistant) is not None


@pytest.mark.parametrize(
    "user",
    [
        "Fine this time, but run future bookings past me, prices jump around too much.",
        "This one was fine, but ask me next time, I'm cutting back.",
        "Some weekends we've got family stuff. Let me confirm each one.",
        "I'd rather keep Saturdays flexible. Let me reply to them myself.",
        "Please don't. I can only take so much of their karaoke. I'll decide each time.",
        "Those come with gift expectations. Ask me each time.",
        "I'm thinking of leaving the club, truth be told. Don't sign me up for more.",
    ],
)
def test_keeping_every_case_is_a_refusal(user: str) -> None:
    assert classify_reply(CLUB, user).act is Act.reject


@pytest.mark.parametrize(
    "user",
    [
        # praise of the offer, then turned against: nothing allowed
        "Good thinking, but I'd rather look at each one.",
        "Lovely idea, but let me reply to each one myself.",
        "That's very kind of you, though I'll decide each time.",
        # "each time" / "every time" in a hand-back is no "every time, please"
        "Ask every time. My shifts are all over the place.",
        "Some months it clashes with lambing, so ask each time.",
        "The committee must agree every time, it's the club's money.",
        "Fees keep changing; I'll compare each month.",
        "I read every one of those emails first, some are scams.",
        "I'd rather phone round first. Sometimes another club has a better night on.",
    ],
)
def test_praise_or_every_time_beside_a_hand_back_is_still_a_refusal(user: str) -> None:
    assert classify_reply(CLUB, user).act is Act.reject


@pytest.mark.parametrize(
    "user",
    [
        "Good thinking, go for it.",
        "Good idea for the quiz nights, but ask me each time for anything else.",
        "Every time, please. I never remember otherwise.",
    ],
)
def test_praise_with_a_case_allowed_is_not_a_refusal(user: str) -> None:
    assert classify_reply(CLUB, user).act in (Act.accept, Act.scoped)


@pytest.mark.parametrize(
    "user",
    [
        "It's the only night I see half my old friends, so that's a no-brainer.",
        "Quiz night is the only thing that gets me out of the house. Load me up.",
        "Those are the only evenings I actually enjoy. Consider me in.",
    ],
)
def test_the_only_thing_that_is_a_description_not_a_limit(user: str) -> None:
    assert classify_reply(CLUB, user).act is not Act.scoped


@pytest.mark.parametrize(
    "user",
    [
        "Only the quiz nights, though. Committee stuff, check with me first.",
        "Only the ones on a Saturday.",
    ],
)
def test_only_before_the_case_is_still_a_limit(user: str) -> None:
    assert classify_reply(CLUB, user).act is Act.scoped


@pytest.mark.parametrize(
    "user",
    [
        "It only comes round once a month. Miss one and I'm lost for weeks.",
        "My mother would never forgive me for missing one, so you'd only be saving time.",
        "Half the committee left, so that's only realistic.",
    ],
)
def test_only_as_a_word_of_degree_is_no_limit(user: str) -> None:
    assert classify_reply(CLUB, user).act is not Act.scoped


@pytest.mark.parametrize(
    "user",
    [
        "It's only for the quiz nights, mind.",
        "That's only when I'm not on shift.",
    ],
)
def test_a_case_after_only_is_still_a_limit(user: str) -> None:
    assert classify_reply(CLUB, user).act is Act.scoped


@pytest.mark.parametrize(
    "user",
    [
        "Only the quiz nights, though. Committee stuff, check with me first.",
        "As long as it finishes before nine. Anything later I'd rather decide myself.",
        "Quiz nights and socials, yes. Anything with a ticket price, ask me each time.",
    ],
)
def test_a_limit_with_the_rest_kept_is_still_a_scope(user: str) -> None:
    assert classify_reply(CLUB, user).act is Act.scoped


def test_a_topic_allowed_and_the_rest_handed_back_is_a_scope_not_a_new_rule() -> None:
    assistant = (
        "I'll order two more of the grey polo shirts, same as last time. Whenever your work "
        "shirts wear out, I'll order the same thing again without bothering you."
    )
    user = "Shirts, reorder whenever. Trousers I'm not sure about, so ask me before buying any."
    assert classify_reply(assistant, user).act is Act.scoped


def test_you_have_got_us_figured_out_accepts() -> None:
    assistant = (
        "I've booked the fare with two checked bags. Shall I always go for the two-bag fare "
        "when I book flights home for any of you?"
    )
    user = "You've got us figured out. Nobody in this family flies home with carry-on only."
    assert classify_reply(assistant, user).act is Act.accept


@pytest.mark.parametrize(
    "user",
    [
        "I'll do it myself, the landlord prefers hearing from me.",
        "I'd better do it myself, some of them are touchy.",
        "I'll take it gallery by gallery.",
    ],
)
def test_keeping_the_decision_without_a_yes_refuses(user: str) -> None:
    assert classify_reply(GALLERY, user).act is Act.reject


@pytest.mark.parametrize(
    ("assistant", "user", "act"),
    [
        # a yes beside a limit is still a limit, whatever the clause looks like
        (CHOIR, "Sure, for the ones on Saturdays.", Act.scoped),
        (FILTERS, "Yes, they're fine if it's under $40.", Act.scoped),
        (CHOIR, "Please do, the ones at the Crown. The others, ask me first.", Act.scoped),
        # a rhetorical question against the proposal itself refuses it, or says nothing
        (CONTRACT, "Why would I want that?", None),
        (CONTRACT, "Why would I want the signed one going out before I've read it?", None),
        # a reason with no yes beside it accepts nothing
        (CHOIR, "Those are the nights I look forward to.", None),
        # a yes phrase of another English says yes only where it opens the reply
        (CHOIR, "It won't be too easy for me to get to those, so I'd like a say.", None),
        # praise, then a turn against it, still refuses
        (FILTERS, "Good shout, but I'd rather keep an eye on those myself.", Act.reject),
        (FILTERS, "Lovely idea, though I'll decide each time.", None),
    ],
)
def test_what_everyday_acceptance_cues_do_not_change(
    assistant: str, user: str, act: Act | None
) -> None:
    got = classify_reply(assistant, user).act
    if act is None:
        assert got is not Act.accept
    else:
        assert got is act


# --- a battery written after the rules by writers who never saw them -------------------------

FRESH = ROOT / "tests" / "data" / "classify_fresh.jsonl"
UNSEEN = ROOT / "tests" / "data" / "classify_unseen.jsonl"


def _battery_score(path: Path) -> tuple[int, int]:
    """Right answers on a battery; an unrelated reply read as `implicit` counts as right
    (both leave the proposal pending)."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    right = 0
    for row in rows:
        act = classify_reply(row["assistant"], row["user"]).act.value
        gold = row["label"]
        right += act == gold or (gold == "no_uptake" and act == "implicit")
    return right, len(rows)


def test_the_fresh_batteries_score_at_least_what_was_measured() -> None:
    """Batteries of episodes (proposal + accept / scoped / unrelated reply) written blind to
    the code. `classify_fresh` (90 episodes) scored 212/270 before cues were drawn from it
    and 241/270 after (244/270 on 2026-12-03). `classify_unseen` (30 episodes) scored 71/90
    while it was kept out of development; on 2026-12-03 its missed acceptances were read and
    the cues they showed were added in general form (82/90 since), so it is a development
    battery now too. Floors against regressions, not claims of accuracy on unseen text."""
    right, total = _battery_score(FRESH)
    assert total == 270 and right >= 244
    right, total = _battery_score(UNSEEN)
    assert total == 90 and right >= 82


@pytest.mark.parametrize(
    "assistant",
    [
        "I'm declining the Hendersons' Tuesday dinner party. From now on, should any evening "
        "invite from Tuesday to Saturday just get a polite no?",  # a standing question
        "I've declined the 8 a.m. breakfast. Would you like me to decline anything starting "
        "before 10 a.m. as a matter of course?",
        "I've ordered a box of size 4 nappies. Want me to set up a recurring delivery so you "
        "never run short?",
        "I've bought the 5 kg tub of rose feed. Want me to reorder it every March without asking?",
        "I've sent Mrs. Patel the invoice on WhatsApp. I could send invoices through whatever "
        "channel each customer booked with. Want me to?",
        "I've put you down as a maybe for the hedge-laying day. These will keep coming all "
        "winter. I could answer each one the same way, if that suits you?",
        "I've emailed Tom the audited accounts as a PDF. Shall we make that the rule: whoever "
        "asks for the accounts gets the PDF?",
        "I've acknowledged her email and attached the appeals policy. When an appeal comes "
        "in, would you like me to send the policy out like that straight away?",
        "I've sent it to the clerk to go out with the pack. Want me to route every trustees' "
        "report through her like that?",
    ],
)
def test_more_ways_of_offering_a_standing_rule(assistant: str) -> None:
    assert detect_proposal(assistant) is not None


@pytest.mark.parametrize(
    ("assistant", "user"),
    [
        (
            "I declined the 7:30am vendor webinar. Would you like a blanket rule: any vendor "
            "webinar before 9am gets an automatic no from me?",
            "Nothing good happens before nine. Blanket no it is.",
        ),
        (
            "I've accepted the lab seminar for Friday. Would it help if I always said yes to "
            "them when your calendar's clear?",
            "Why didn't we do this sooner?",
        ),
        (
            "Want me to send client decks as view-only links going forward?",
            "View-only from now on. I'm sick of finding my slides edited.",
        ),
        (
            "I've sent Mrs. Patel the invoice on WhatsApp. I could send invoices through the "
            "channel each customer booked with. Want me to?",
            "Do it for everyone, cracking idea.",
        ),
        (
            "I've sent the newsletter to the members' list. Every month when it's ready, I "
            "could send it out the same way. Shall I?",
            "That'd be marvellous. One less job for the committee secretary.",
        ),
    ],
)
def test_acceptances_that_look_like_limits_or_new_subjects(assistant: str, user: str) -> None:
    assert classify_reply(assistant, user).act is Act.accept


def test_a_limit_that_only_repeats_the_proposal_is_not_a_scope_but_only_still_limits() -> None:
    letters = (
        "I've emailed the parents the trip letter as a PDF. Would you like PDFs to be the "
        "standard for all parent letters, so nobody can edit them?"
    )
    # The limit repeats the proposal, but another case is treated otherwise: still a scope.
    reply = "For letters to parents, yes. Anything going to colleagues, keep it as Word."
    assert classify_reply(letters, reply).act is Act.scoped
    pharmacy = (
        "I've ordered your inhaler refill through Larkspur Pharmacy. Should Larkspur be my "
        "go-to for all your prescriptions from now on?"
    )
    reply = "Prescriptions, yes. Vitamins and the rest I'd rather buy wherever's cheapest."
    assert classify_reply(pharmacy, reply).act is Act.scoped
    offer = (
        "I've shared the deck as a view-only link. Is that how you'd like client decks sent "
        "going forward?"
    )
    assert classify_reply(offer, "Only for the Lowell & Finch decks.").act is Act.scoped
    assert (
        classify_reply(offer, "View-only for external clients, but ask me for the board.").act
        is Act.scoped
    )


# --- a plain statement on the proposal's subject, read with a meaning similarity -------------

COFFEE = (
    "I've ordered another bag of Ridgeback Roasters' Guji beans. Want me to reorder it "
    "automatically whenever you're down to about a week's worth?"
)


def _meaning(pairs: dict[str, float]) -> object:
    """A similarity that gives `pairs[reply]` against the standing offer and 0.1 against
    anything else (the one-off task)."""

    def meaning(a: str, b: str) -> float:
        return pairs.get(a, 0.0) if "whenever" in b else 0.1

    return meaning


@pytest.mark.parametrize(
    ("user", "close", "act"),
    [
        ("Never having to think about coffee beans again. Bliss.", 0.45, Act.reject),
        ("Running dry is my nightmare. Perfect arrangement.", 0.45, Act.accept),
        ("Fresh beans on the doorstep. Bliss.", 0.45, Act.accept),
        ("Fresh beans on the doorstep. Bliss.", 0.20, Act.no_uptake),  # far
        ("Fresh beans on the doorstep, but only the Guji.", 0.45, Act.scoped),
        ("Fresh beans on the doorstep? How much would that cost?", 0.45, Act.no_uptake),
        ("Fresh beans on the doorstep, if the price holds.", 0.45, Act.no_uptake),
        ("Fresh beans on the doorstep. Maybe later in the year.", 0.45, Act.no_uptake),
        ("Fresh beans on the doorstep. Can you also book the boiler service.", 0.45, Act.no_uptake),
    ],
)
def test_a_plain_statement_close_to_the_offer_accepts_it(user: str, close: float, act: Act) -> None:
    got = classify_reply(COFFEE, user, _meaning({user: close})).act
    pending = (Act.no_uptake, Act.implicit)
    assert got is act or (act in pending and got in pending)
    if act in pending:  # without the meaning check the rules leave these pending too
        assert classify_reply(COFFEE, user).act in pending


def test_a_statement_closer_to_the_task_than_to_the_offer_stays_pending() -> None:
    user = "Fresh beans on the doorstep. Bliss."

    def meaning(a: str, b: str) -> float:
        return 0.40 if "whenever" in b else 0.55  # the one-off order, not the standing offer

    assert classify_reply(COFFEE, user, meaning).act in (Act.no_uptake, Act.implicit)


def test_a_failing_meaning_check_leaves_the_proposal_pending() -> None:
    def broken(a: str, b: str) -> float:
        raise RuntimeError("model gone")

    user = "Fresh beans on the doorstep. Bliss."
    assert classify_reply(COFFEE, user, broken).act in (Act.no_uptake, Act.implicit)


@pytest.fixture(scope="module")
def minilm_cosine() -> object:
    from agent.embeddings import MiniLMEmbedder, embedding_cosine

    return embedding_cosine(MiniLMEmbedder())


def test_with_minilm_no_unrelated_reply_in_any_battery_is_read_as_an_acceptance(
    minilm_cosine: object,
) -> None:
    """The meaning check never turns a reply on another subject into consent, and it
    adds acceptances on the development battery (244 -> 246 of 270; the kept battery is
    unchanged at 71/90)."""
    for path, floor in ((FRESH, 246), (UNSEEN, 71)):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        right = 0
        for row in rows:
            act = classify_reply(row["assistant"], row["user"], minilm_cosine).act  # type: ignore[arg-type]
            if row["label"] == "no_uptake":
                assert act is not Act.accept, row["user"]
            right += act.value == row["label"] or (
                row["label"] == "no_uptake" and act is Act.implicit
            )
        assert right >= floor, path.name


@pytest.mark.parametrize(
    ("assistant", "user", "scope_word"),
    [
        (
            "I've forwarded the clinic letter to Adaeze. From here on I could pass Dad's medical "
            "letters to her the moment they arrive. Shall I?",
            "Appointment letters, send them straight on. Anything with test results in it, ask "
            "me first. I'd rather ring her myself.",
            "appointment",
        ),
        (
            "I've sent the consent form to Kara's Gmail. Should Nora's paperwork always go there?",
            "School and doctor stuff, Gmail. Anything about money, ask me first.",
            "school",
        ),
        (
            "I accepted Helen's planning meeting. Shall I accept the central team's meetings "
            "straight away from now on?",
            "Helen's own meetings, accept them. Anything from finance or estates, run past me "
            "first.",
            "helen",
        ),
    ],
)
def test_a_topic_with_what_to_do_and_the_rest_handed_back_is_scoped(
    assistant: str, user: str, scope_word: str
) -> None:
    got = classify_reply(assistant, user)
    assert got.act is Act.scoped
    assert got.scope is not None and scope_word in got.scope.lower()


def test_a_negated_do_it_in_a_remark_is_not_an_acceptance() -> None:
    assistant = (
        "I've put you down as a maybe for the work day. I could answer each one the same way, "
        "if that suits you?"
    )
    user = "Remind me how to take the VAT off a total. I can never do it backwards."
    assert classify_reply(assistant, user).act is not Act.accept


@pytest.mark.parametrize(
    "user",
    [
        "Fresh beans for the weekday pot. The espresso I pick myself, so confirm those with me.",
        "Reorder the Guji; the decaf he can skip.",
        "For the office machine, the Guji. Other grinds are a different story.",
        "Guji for the house. Leave the café order out of it.",
    ],
)
def test_the_meaning_check_never_turns_a_limit_into_an_acceptance(user: str) -> None:
    """However close in meaning, a reply with a limit or another side stays what the rules
    say (scoped or pending): an acceptance would let calls outside the limit through."""

    def close(a: str, b: str) -> float:
        return 0.9 if "whenever" in b else 0.1

    assert classify_reply(COFFEE, user, close).act is not Act.accept


# --- session 8: forms found in three batteries written blind to the code -----------------
# (the text below is written for the tests, not copied from the batteries)


@pytest.mark.parametrize(
    "assistant",
    [
        "Ordered the oat biscuits for the office, £12. Shall I set that up as a regular order?",
        "Got the dog food delivered. Make it a Friday standing order?",
        "Booked the squash court for Tuesday. Would you like this to be a weekly thing?",
        "I said yes to the rowing club barbecue. Want me to say yes to all the club's socials?",
        "I signed you up for the pottery open studio. Shall I sign you up for every studio night?",
        "I emailed the March figures to Dee. Want me to send her each quarter's figures once "
        "you've checked them?",
        "Sent the invoice to the Parks. Once you've priced a job, how about I email the invoice "
        "straight away?",
        "I can book the walks as they're announced, if you'd like.",
        "Renewed your prescription. Shall I line up each renewal the moment it's due?",
        "I filed the receipt with Omar. Do you want that to be the rule for receipts?",
        "Sent the rota to the new starter. Is that something you'd like me to handle for every "
        "new starter?",
        "I replied to the man asking about the flat. Want me to reply to anyone who asks about it?",
    ],
)
def test_named_recurrences_and_every_case_offers_are_proposals(assistant: str) -> None:
    assert detect_proposal(assistant) is not None


@pytest.mark.parametrize(
    "assistant",
    [
        "I'll order two of the lanterns, one each for the girls.",
        "I'll book you both on the early train, £48 each way.",
        "Understood. The pink roses for Gran; for anyone else I'll ask what you want.",
    ],
)
def test_each_as_a_pronoun_or_anyone_else_is_no_proposal(assistant: str) -> None:
    assert detect_proposal(assistant) is None


_OUTINGS = "I said yes to the hill walk on Sunday. Want me to say yes to all the club walks?"


@pytest.mark.parametrize(
    "user",
    [
        "I'd never skip one, they're the best part of my month.",
        "Never want to chase a booking form again.",
        "No argument from me.",
        "Say no more.",
        "Can't fault that.",
        "Wouldn't have it any other way.",
        "Grand, Maura will finally stop nagging me about it.",
        "Walk away, er, book away.",
    ],
)
def test_approving_negations_accept(user: str) -> None:
    assert classify_reply(_OUTINGS, user).act is Act.accept


@pytest.mark.parametrize(
    "user",
    [
        "I'll send them, the club and I talk every day anyway.",
        "Better I check before each booking, the dates move.",
        "Bookings on the club card need my sign-off every time.",
        "I have to ask my wife each time, she does the calendar.",
        "Hold those till I say, some walks are too long for my knee.",
        "Let me sort those, the routes change.",
        "I vet every walk first; half of them are bogs.",
    ],
)
def test_the_user_keeping_the_doing_is_no_acceptance(user: str) -> None:
    assert classify_reply(_OUTINGS, user).act is not Act.accept


_DECLINE_WEBINARS = (
    "I've declined the Stackwise webinar. These vendor webinars keep coming; should I just "
    "decline vendor webinars automatically from now on?"
)
_STORE_BRAND = (
    "I ordered the store-brand ibuprofen, it's the same tablet for half the price. Shall I "
    "always go for the store brand on medicines like this?"
)


@pytest.mark.parametrize(
    ("assistant", "user"),
    [
        (_DECLINE_WEBINARS, "Never learned a thing from one. Decline them every time."),
        (_DECLINE_WEBINARS, "Not interested in a single one of them, so decline the lot."),
        (_DECLINE_WEBINARS, "Not a bad idea at all, make it the standard."),
        (_STORE_BRAND, "No sense paying for the fancy box. Store brand always."),
        (_OUTINGS, "Never miss them anyway, so go ahead."),
    ],
)
def test_a_negative_reason_beside_a_standing_restatement_accepts(assistant: str, user: str) -> None:
    assert classify_reply(assistant, user).act is Act.accept


@pytest.mark.parametrize(
    ("user", "scope"),
    [
        ("Decline the ones on weeknights.", "on weeknights"),
        ("Webinars when they're about pricing.", "when they're about pricing"),
    ],
)
def test_the_proposals_pick_with_a_condition_of_the_users_is_a_limit(user: str, scope: str) -> None:
    got = classify_reply(_DECLINE_WEBINARS, user)
    assert got.act is Act.scoped and got.scope == scope


@pytest.mark.parametrize(
    "user",
    [
        "Webinars on Tuesdays are the worst.",  # a remark, not a case
        "Decline the ones on weeknights? No, ask me.",
        "The dog was sick on the rug again.",
    ],
)
def test_a_remark_or_a_refusal_with_a_condition_is_no_limit(user: str) -> None:
    assert classify_reply(_DECLINE_WEBINARS, user).act is not Act.scoped


def test_only_the_proposals_own_pick_restates_it() -> None:
    aired = (
        "The session agreement needs sign-off for clean mixes. Should I stick to the aired "
        "version whenever somebody asks for a session recording?"
    )
    assert classify_reply(aired, "Makes sense. Aired version only.").act is Act.accept
    # one of a list the proposal named is a limit
    both = "Shall I always RSVP yes to Marta's and Kevin's parties?"
    assert classify_reply(both, "Sure, only Marta's.").act is Act.scoped


@pytest.mark.parametrize(
    ("assistant", "user"),
    [
        (_DECLINE_WEBINARS, "Not a chance. Ask me every time."),
        (_DECLINE_WEBINARS, "No, some are useful, so check with me."),
        (_DECLINE_WEBINARS, "Don't. I'd rather decide each time."),
        (_STORE_BRAND, "No, not for medicine. Brand names always for those."),
        (_STORE_BRAND, "Never for the kids' stuff, so go ahead only for mine."),
        # "turn them down" for one kind, the rest handed back: a limit
        (
            _DECLINE_WEBINARS,
            "The sales ones, certainly, turn them down. Anything on security I would like to see.",
        ),
        # a bare "that" may be the user's own new rule
        (
            _DECLINE_WEBINARS,
            "Hold off on declining. Send me a list each Friday. Do that every time.",
        ),
    ],
)
def test_a_refusal_or_a_limit_beside_standing_words_is_no_acceptance(
    assistant: str, user: str
) -> None:
    assert classify_reply(assistant, user).act is not Act.accept


def test_a_relative_clause_never_is_still_a_reason_beside_a_yes() -> None:
    got = classify_reply(_OUTINGS, "Yes, the club walks are the only ones I never miss.")
    assert got.act is Act.accept


@pytest.mark.parametrize(
    "user",
    [
        "Fill your boots.",
        "Say less.",
        "Now we're talking.",
        "They're my oldest friends, so that's a given.",
        "You don't even need to ask with those.",
        "The more the merrier.",
        "You're a lifesaver, honestly.",
        "A plan after my own heart.",
        "That's a big weight off my mind.",
        "Mam will be glad she doesn't have to nag me about it.",
        "Grand so.",
        "Go! Walks are my therapy.",
    ],
)
def test_more_everyday_acceptances(user: str) -> None:
    assert classify_reply(_OUTINGS, user).act is Act.accept


def test_a_yes_said_to_someone_names_no_limit() -> None:
    assert classify_reply(_OUTINGS, "Yes mate, do it.").act is Act.accept
    scoped = classify_reply(_OUTINGS, "Yes, the walks from the man at the church only.")
    assert scoped.act is Act.scoped


def test_naming_the_proposals_pick_is_no_limit() -> None:
    """ "Local wins." after "the locally serviced option over the cheaper import?" picks
    what was proposed; "Exactly that." opens an approval."""
    offer = (
        "I ordered the locally serviced treadmill. Want me to lean that way for all gym kit "
        "as a rule: the locally serviced option over the cheaper import?"
    )
    assert classify_reply(offer, "Had one stuck in customs for a month once. Local wins.").act is (
        Act.accept
    )
    couple = (
        "I sent the web-size selection, never the full-res gallery. Want that to be the "
        "standard whenever anyone besides the couple asks for photos?"
    )
    got = classify_reply(couple, "Exactly that. Full-res only ever goes to the couple.")
    assert got.act is Act.accept


_GRADES = (
    "I emailed the grade sheets to the head of year, Mrs Obi. Would it help if I sent her "
    "the grade sheets directly every time you finish marking?"
)


@pytest.mark.parametrize(
    "user",
    [
        # the user doing it themselves (both read as a yes by the meaning check before)
        "I'll hand them over in person, she likes to go through them with me.",
        "I'll walk them down to her office, she likes a chat about the marks.",
        "Put the parents' evening on my calendar for Thursday.",
    ],
)
def test_on_topic_remarks_that_are_no_plain_yes_stay_pending(user: str) -> None:
    """The meaning check reads a plain on-topic statement as a yes; the user doing
    something themselves or a new request is no plain statement."""
    from agent.embeddings import MiniLMEmbedder, embedding_cosine

    meaning = embedding_cosine(MiniLMEmbedder())
    assert classify_reply(_GRADES, user, meaning).act is not Act.accept


@pytest.mark.parametrize(
    "user",
    [
        "For the head's own meetings, accept them. Anything from the finance office, run it "
        "past me first; Priya could go to half of those instead.",
        "The league ones, yes. Cup games I'd rather see first, my assistant coach might take "
        "those instead.",
    ],
)
def test_someone_else_going_instead_is_no_new_rule(user: str) -> None:
    """ "Priya could go instead" says who else might go, not what I should do instead: the
    reply limits the offer (scoped), it does not replace it."""
    assistant = (
        "I've accepted it. These keep coming; I could accept them straight away whenever "
        "your diary is clear, if you like."
    )
    assert classify_reply(assistant, user).act is Act.scoped


def test_instead_addressed_to_me_still_revises() -> None:
    assistant = (
        "I've accepted it. These keep coming; I could accept them straight away whenever "
        "your diary is clear, if you like."
    )
    user = "Put me down as a maybe instead, I'll confirm nearer the day."
    assert classify_reply(assistant, user).act is Act.revise


@pytest.mark.parametrize(
    "text",
    [
        "I've entered you for the Hove 5K. They run one every month; I can enter you for any "
        "that are on a Sunday.",
        "I ordered the A3 toner, £48. Your copier flags when it's low; I could order a new one "
        "the moment that happens.",
        "I've said yes to Aunt Rosa's lunch. For family birthdays, I could accept straight away "
        "and tell you afterwards.",
        "I sent the Welsh notice to the chapel and the English one to the school. When the "
        "rota changes, should I send the two versions the same way?",
        "I've paid the window cleaner. I can stop checking with you and just pay him when he "
        "sends the bill.",
        "I booked the spring seed order, £60. Come autumn I can reorder the same lot, as long "
        "as it's under £70.",
        "I forwarded the plumber's invoice to Dev. Happy to make that standing: any trade "
        "invoice for the flat goes straight to him.",
        "I've registered you for Thursday's webinar. Should I register you for any webinar "
        "from the college?",
        "I've RSVP'd yes to Darren's stag do. Any stag or hen dos in future — want me to just "
        "say yes?",
        "The invoice has gone to Mrs Hendry. From here on, same again — invoice out the day "
        "you mark a job finished?",
        "I paid the school fees by bank transfer. Should I pay all school-related costs by bank "
        "transfer?",
        "I booked your haircut in the 7 a.m. slot. Shall I book the earliest slot for your "
        "appointments?",
        "I told the organisers you're a maybe. Should I respond 'maybe' to volunteer rotas until "
        "you've checked your roster?",
        "You're confirmed for the litter pick. Might be worth me signing you up for each monthly "
        "pick as soon as it's announced — thoughts?",
        "I've sent Sarah the term dates. If anyone asks for school info like that, I could send "
        "it along — want that?",
    ],
)
def test_open_offers_for_cases_to_come(text: str) -> None:
    assert detect_proposal(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Weekend club runs I'll accept when you're free.",
        "I'll check with you before replying to any choir invitation.",
        "I'll book the flexible return for €49, so you can hop on any train on Sunday.",
        "Should I add any notes to the order?",
        "Any time before Friday works for the courier - shall I book Thursday?",
        "Every time I check, the price changes - want me to buy it now?",
        "Should I send all the photos to Dana?",
    ],
)
def test_restating_a_rule_or_a_one_off_is_no_open_offer(text: str) -> None:
    assert detect_proposal(text) is None


def test_the_turn_breaks_a_tie_between_two_tools() -> None:
    """ "Reception runs short ... I reorder the same item": reception is also an event, but the
    turn around the rule ("Reordered the same lotion") says it is about buying."""
    turn = (
        "Reordered the same massage lotion from the usual supplier; it should arrive Wednesday. "
        "Reception runs short of something like this every few weeks, so how about a standing "
        "thing: whenever Kirsty flags a consumable running low, I reorder the same item?"
    )
    found = detect_proposal(turn)
    assert found is not None and found.action_type is ActionType.purchase
    rule = found.text
    assert action_type_of(rule) is ActionType.rsvp  # the rule's words alone tie
    assert action_type_of(rule, "I'll RSVP to the reception.") is ActionType.rsvp


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "From now on, whenever you tell me to stock up, shall I read that as three?",
            {"stock up"},
        ),
        ('If you just say "the usual", shall I take it to mean this hamper?', {"the usual"}),
        ("If you pass me an invite with just a 'grand', I'll read it as a yes.", {"grand"}),
        ('How about "stash it" as our shorthand for this?', {"stash it"}),
        ("Whenever you say pencil it in, I'll RSVP maybe.", {"pencil it in"}),
        # a quoted title is no shorthand; nor is a plain standing offer
        ('I sent "Draft 2" to Grace. Should I send drafts to her from now on?', set()),
        ("Next time you're low on something like this, I can just reorder it.", set()),
    ],
)
def test_the_words_a_rule_says_the_user_will_use(text: str, words: set[str]) -> None:
    from ledger.text import shorthands, uses_shorthand

    assert shorthands(text) == words
    for phrase in words:
        assert uses_shorthand(f"{phrase.capitalize()} on the coffee beans, please.", text)
    assert not uses_shorthand("Order the coffee beans, please.", text)


@pytest.mark.parametrize(
    "rule",
    [
        "If you ever send me an invite without saying anything, how about I read that as a yes?",
        "Deal. An invite with no note from you gets accepted.",
        "A forward from Ingrid with nothing added gets a yes for the two of you.",
    ],
)
def test_a_bare_forward_is_the_shorthand_of_a_rule_about_invites_sent_on_without_a_word(
    rule: str,
) -> None:
    from ledger.text import uses_shorthand

    bare = "Fwd: Invitation: Design review @ Thu Oct 8, 2026 12:30pm (priya@fieldnote.io)"
    assert uses_shorthand(bare, rule)
    # words of the user's own are no bare forward; a rule about something else is not it
    assert not uses_shorthand("Dana invited me to the design review on Thursday.", rule)
    assert not uses_shorthand(bare, "Want me to say yes to volleyball invites on my own?")


@pytest.mark.parametrize(
    ("question", "reply", "accepted"),
    [
        ("Would that help?", "It would. She'd take a booth on the moon.", True),
        ("Would that help?", "It really would!", True),
        ("Would that help?", "It would not.", False),
        ("Do you want me to do that from now on?", "I do.", True),
        ("Is the intake desk where your reports should go from here on?", "It is.", True),
        # another verb than the question's is no echo
        ("Would that help?", "It will.", False),
    ],
)
def test_a_yes_said_with_the_question_s_own_verb(question: str, reply: str, accepted: bool) -> None:
    assistant = (
        "I'll accept the stall for Ingrid. Since she takes every one of these, I could accept "
        f"stall offers for her as they come in from now on. {question}"
    )
    assert (classify_reply(assistant, reply).act is Act.accept) is accepted


_STANDING_DECLINE = (
    "I've sent the vendor a polite no. These product launch invitations keep coming; I could "
    "turn them down for you as they arrive from now on. Should I?"
)


@pytest.mark.parametrize(
    ("reply", "act"),
    [
        # a yes after a word of feeling still opens the reply
        ("Honestly, yes. I hate being the one who turns people down.", Act.accept),
        ("Ay, please. I never know what to tell them anyway.", Act.accept),
        ("Oh man, absolutely.", Act.accept),
        # "please" and "always" in other languages
        ("Por favor. I'd be eating canapés every night otherwise.", Act.accept),
        ("Bitte!", Act.accept),
        ("Siempre.", Act.accept),
        # approvals that name the arrangement
        ("Exactly how it should be. I want them off my desk.", Act.accept),
        ("That's the route. Nobody needs me at those.", Act.accept),
        ("Let's make that the usual for everyone, then.", Act.accept),
        # the feeling does not turn a no or a sneer into a yes
        ("Ha, absolutely not.", Act.reject),
        ("Oh yes, because nothing says loyalty like an auto-reply. No thanks.", Act.reject),
        ("Honestly, no. I like to see who's asking.", Act.reject),
        ("Ay, please don't. Some of them are friends.", Act.reject),
        ("Oh, please don't.", Act.reject),
    ],
)
def test_a_yes_after_a_word_of_feeling_or_in_another_language(reply: str, act: Act) -> None:
    assert classify_reply(_STANDING_DECLINE, reply).act is act


_COFFEE = (
    "I've ordered the same coffee beans as last time. Shall I reorder them automatically "
    "whenever the bag runs low?"
)


@pytest.mark.parametrize(
    ("reply", "act"),
    [
        # go on doing it, in other registers and Englishes
        ("Carry on.", Act.accept),
        ("On you go.", Act.accept),  # was read as the limit "On you go"
        ("Proceed.", Act.accept),
        ("Roger that.", Act.accept),
        ("Green light.", Act.accept),
        ("Órale.", Act.accept),  # the accent had split the word
        ("Órale, sounds good.", Act.accept),  # was read as the limit "Órale"
        ("Dale, perfecto.", Act.accept),
        # a remark, then a closing go-on of its own
        ("Spares me hearing the same squabble every month. Carry on.", Act.accept),
        # not a yes: a limit beside it, the user carrying on, a refusal
        ("On you go, weekdays only.", Act.scoped),
        ("Vale, but only the decaf.", Act.scoped),
        ("I'll carry on doing it myself.", Act.reject),
        ("Don't proceed without asking.", Act.reject),
    ],
)
def test_go_on_words_say_yes(reply: str, act: Act) -> None:
    assert classify_reply(_COFFEE, reply).act is act


@pytest.mark.parametrize(
    "assistant",
    [
        "I've said maybe to the gallery. That could be the house rule for openings and talks "
        "in general: a maybe from me first. Want me to work that way?",
        "Booked the aisle seat. Aisle seats on every flight could be your standard from now "
        "on. Shall I?",
    ],
)
def test_a_bare_offer_question_offers_the_standing_sentence_before_it(assistant: str) -> None:
    proposal = detect_proposal(assistant)
    assert proposal is not None and proposal.is_question
    reply = "That's basically how we do it anyway."
    assert classify_reply(assistant, "Yes, do that.").act is Act.accept
    assert classify_reply(assistant, reply).act is not Act.no_proposal


@pytest.mark.parametrize(
    "assistant",
    [
        # a question that asks something of its own, or no offer at all
        "I've said maybe to the gallery. Openings in general tend to run late. Anything else?",
        "Booked the aisle seat. Want me to add a meal?",
    ],
)
def test_no_bare_offer_without_a_standing_sentence_or_with_an_object(assistant: str) -> None:
    assert detect_proposal(assistant) is None


@pytest.mark.parametrize(
    "reply", ["That's what it's there for.", "That is what the intake desk is there for."]
)
def test_what_it_is_there_for_accepts(reply: str) -> None:
    assistant = (
        "I've sent the report to the intake desk. Is the intake desk where your reports should "
        "go from here on?"
    )
    assert classify_reply(assistant, reply).act is Act.accept


_BEANS = (
    "I took the 5 kg bag, arriving Thursday. Per kilo it's about 20 percent cheaper than the "
    "1 kg bags. Shall I go with the 5 kg size every time we restock beans?"
)
_FARE = (
    "Booked the Flex fare, $300 more than the basic one, but you can change dates for free. "
    "Should I go for the flexible fare whenever I book flights for you?"
)


@pytest.mark.parametrize(
    ("assistant", "reply", "act"),
    [
        # the proposal's own pick said again, in other units, limits nothing
        (_BEANS, "Five kilos, yes. We always run out at the worst moment.", Act.accept),
        (_BEANS, "Two kilos, yes.", Act.scoped),  # another size is a limit
        # a yes said loudly, or after an exclamation in another language
        (_FARE, "A thousand times yes. Never paying a change fee again.", Act.accept),
        (_FARE, "Dios, yes. That rebooking cost us a fortune.", Act.accept),
        # what happened before, given as the reason, is no time limit
        (
            _FARE,
            "After the fees we paid when the baby came early, that's money well spent.",
            Act.accept,
        ),
        (_FARE, "After the summer, yes.", Act.scoped),
    ],
)
def test_restated_picks_loud_yeses_and_reasons_are_no_limits(
    assistant: str, reply: str, act: Act
) -> None:
    assert classify_reply(assistant, reply).act is act


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("Nonrefundable from now on. I never cancel these.", "Nonrefundable from now on."),
        (
            "Yvette talked me round. From now on, Evah Gold for any string on the cello.",
            "From now on, Evah Gold for any string on the cello.",
        ),
        (
            "The AGM voted. From now on the complex colour is Coastal Linen, not Harbour Mist.",
            "From now on the complex colour is Coastal Linen, not Harbour Mist.",
        ),
        (
            "She's busy with weddings. So the usual is now the supermarket platter, not hers.",
            "So the usual is now the supermarket platter, not hers.",
        ),
        (
            "New rule: put her down as a maybe on party invites until I've talked to Kara.",
            "New rule: put her down as a maybe on party invites until I've talked to Kara.",
        ),
        (
            "It upset her last time. Don't send her anything about Dad without checking with me.",
            "Don't send her anything about Dad without checking with me.",
        ),
        # descriptions and plans of the user's own are no rules
        ("From now on I'm working from home on Fridays.", None),
        ("From now on, the kids walk to school.", None),
        ("The party is now at 7.", None),
    ],
)
def test_standing_instructions_without_the_usual_verbs(text: str, rule: str | None) -> None:
    assert detect_user_rule(text) == rule


_BUS = (
    "Booked you on the Platino coach, seat 12; the fully reclining seats make a real "
    "difference overnight. Should Platino be what I pick from now on whenever I book buses?"
)
_CARE = (
    "Accepted the care meeting. Her office sends these every few months, so if you'd like, "
    "I'll accept them straight away whenever your calendar has room."
)


@pytest.mark.parametrize(
    ("assistant", "reply", "act"),
    [
        # the pick made standing, with a remark of what the user would rather not do
        (
            _BUS,
            "Platino forever. I'd rather skip a dinner out than six hours in a cheap seat.",
            Act.accept,
        ),
        (_BUS, "Platino forever? No, ask me each time.", Act.reject),
        # a yes that opens the reply, then a habit of the user's ("I always reply late")
        (_CARE, "That would honestly be a relief. I always reply late.", Act.accept),
        (_CARE, "That would be a nightmare. I'll reply myself.", Act.reject),
    ],
)
def test_a_pick_made_standing_or_an_opening_yes_outweighs_a_later_habit(
    assistant: str, reply: str, act: Act
) -> None:
    assert classify_reply(assistant, reply).act is act


def test_a_thousands_comma_does_not_cut_a_limit_clause() -> None:
    result = classify_reply(
        "I'll book the zero-excess cover. Should I always take zero-excess when I hire you a car?",
        "If it's a long trip and the cover adds more than about R2,500, run it past me first.",
    )
    assert result.scope is not None and result.scope.endswith("R2,500")


@pytest.mark.parametrize(
    "turn",
    [
        "Parking complaints like this come in every week. Shall I deal with them by sending "
        "the parking rules back without waiting for you?",
        "Shall I answer the quote requests with the rate card without running them past you?",
    ],
)
def test_an_offer_to_act_without_waiting_for_the_user_is_standing(turn: str) -> None:
    found = detect_proposal(turn)
    assert found is not None and found.is_question


_HOODIES = (
    "I'll order the hoodie in a large so there's room to grow. Should I go a size up "
    "whenever I buy clothes for Theo?"
)
_WATCH = "I'll get the 40 mm case. Whenever you buy a watch for Ines, shall I make it 40 mm?"
_PITCHES = (
    "I'll say no to this one. These keep coming; shall I turn down vendor breakfasts on my "
    "own from now on?"
)


@pytest.mark.parametrize(
    ("assistant", "reply", "scope"),
    [
        # the pick said again ("forty millimetre") is no limit; the case beside it is
        (
            _WATCH,
            "For her dress watches, forty millimetre, no question. Sports watches are another "
            "thing; she likes them chunky. With those, ask me first.",
            "For her dress watches",
        ),
        # "certainly", "spot on" and "acceptable" are a yes beside a case
        (
            _PITCHES,
            "The recruiter ones, certainly, turn them down. Anything from a client I want to "
            "see myself.",
            "The recruiter ones",
        ),
        (
            _HOODIES,
            "School uniforms, a size up is spot on. Party clothes he wears once, so before "
            "buying those, ask me.",
            "School uniforms",
        ),
        # "tell me first" and "put those in front of me" hand a case back
        (
            _PITCHES,
            "The ones the bank sends round to every branch, decline. If the regional head "
            "writes herself, that's a different animal. Put those in front of me.",
            "The ones the bank sends round to every branch",
        ),
        (
            _HOODIES,
            "Hoodies and joggers, go up a size. Anything for the wedding, tell me first.",
            "Hoodies and joggers",
        ),
    ],
)
def test_a_case_with_a_yes_and_a_case_handed_back_is_a_scope(
    assistant: str, reply: str, scope: str
) -> None:
    result = classify_reply(assistant, reply)
    assert (result.act, result.scope) == (Act.scoped, scope)


def test_another_thing_hands_its_case_and_its_reasons_back() -> None:
    allowed, back = sides(
        "For the dress watches, yes. Sports watches are another thing; she likes them chunky."
    )
    assert allowed == [["For the dress watches", "yes"]]
    assert back == ["Sports watches are another thing", "she likes them chunky"]


def test_relief_at_never_again_is_a_yes_across_hyphenated_words() -> None:
    result = classify_reply(
        "I've ordered the 20-pack of filters. Shall I reorder them whenever you say we're low?",
        "Please. Never want to be caught short mid-service again.",
    )
    assert result.act is Act.accept


_BOILER = (
    "I've booked the boiler service for the 12th. Shall I book it every year when the "
    "reminder comes in, without checking with you?"
)


@pytest.mark.parametrize(
    ("reply", "act"),
    [
        ("Chasing the plumber is one job I'd gladly never do again. It's yours.", Act.accept),
        ("If it means I never sit through another hold queue again, I'm in.", Act.accept),
        # "that" is the offer itself
        ("I'd never do that again. I'll book them myself.", Act.reject),
    ],
)
def test_a_chore_never_done_again_is_relief_not_a_refusal(reply: str, act: Act) -> None:
    offer = _BOILER
    assert classify_reply(offer, reply).act is act


@pytest.mark.parametrize(
    ("reply", "until"),
    [
        ("Do that until the end of March.", date(2027, 3, 31)),
        ("Do that until the AGM in March, I'm handing over the books then.", date(2027, 2, 28)),
    ],
)
def test_a_yes_until_a_month_is_a_scope_that_ends(reply: str, until: date) -> None:
    offer = (
        "I've paid the hall deposit. Shall I pay the hall invoices as they come in, without "
        "checking with you?"
    )
    result = classify_reply(offer, reply)
    assert result.act is Act.scoped and result.scope is not None
    scope = parse_scope(reply, date(2027, 1, 10), result.scope, offer)
    assert scope.until == until


def test_a_yes_word_under_a_negation_does_not_make_a_hand_back_a_scope() -> None:
    """ "I'd never do that again" has "do that" in it, but says no: with the rest handed
    back ("I'll book them myself") the reply is a refusal, not a scope."""
    offer = _BOILER
    reply = "After last winter? I'd never do that again. I'll book them myself."
    assert classify_reply(offer, reply).act is Act.reject


def test_a_list_of_cases_then_what_to_do_with_them_is_a_scope() -> None:
    offer = (
        "I've sent the invoice to the accounts inbox rather than to Dev. Shall I send "
        "supplier paperwork to accounts@ from now on?"
    )
    reply = (
        "Invoices, delivery notes, that sort of paperwork, the accounts inbox. Anything "
        "about a dispute, ask me first. I'm not sure who handles those."
    )
    result = classify_reply(offer, reply)
    assert (result.act, result.scope) == (
        Act.scoped,
        "Invoices, delivery notes, that sort of paperwork",
    )


@pytest.mark.parametrize(
    "reply",
    [
        "Aye, that'd suit me grand.",
        "Saves me a phone call every year, so yes.",
        "It's always the week I'm away, bless them, so yes.",
        "Absolutely, would save me digging out the number every time.",
    ],
)
def test_what_the_yes_does_for_the_user_is_no_limit(reply: str) -> None:
    assert classify_reply(_BOILER, reply).act is Act.accept


@pytest.mark.parametrize(
    "reply",
    [
        "That'd suit me, but only for the combi boiler. Ask me about the old one.",
        "Saves me a phone call, but only if it's under a hundred quid.",
    ],
)
def test_a_limit_beside_what_the_yes_does_is_still_a_limit(reply: str) -> None:
    assert classify_reply(_BOILER, reply).act is Act.scoped


@pytest.mark.parametrize(
    "reply",
    [
        "Never liked those dinners, never will. Auto-decline.",
        "No way I can make them anyway. Decline away.",
        "Not doing another one of those ever again. Bin the lot.",
    ],
)
def test_a_negation_before_a_yes_of_its_own_is_the_reason(reply: str) -> None:
    offer = (
        "I've declined the supplier's dinner. Shall I decline their hospitality invitations "
        "as a rule from now on?"
    )
    assert classify_reply(offer, reply).act is Act.accept


@pytest.mark.parametrize(
    "reply",
    [
        "Not needed. Half of them are paid, and I need to approve each time.",
        "Don't do that, I'll tell you each time.",
        "No. Dana sends me everything and half of it is optional.",
    ],
)
def test_a_negation_with_no_yes_after_it_stays_a_refusal(reply: str) -> None:
    offer = (
        "I've declined the supplier's dinner. Shall I decline their hospitality invitations "
        "as a rule from now on?"
    )
    assert classify_reply(offer, reply).act is Act.reject


def test_put_me_down_for_the_lot_is_a_yes() -> None:
    offer = (
        "I'll reply yes to the hospice dinner. Would you like me to accept fundraising dinners "
        "on my own when you're free?"
    )
    reply = "Small town. You turn up to theirs, they turn up to yours. Put me down for the lot."
    assert classify_reply(offer, reply).act is Act.accept


@pytest.mark.parametrize(
    "reply",
    [
        "He goes through the filters like nobody's business. Go on.",
        "Honestly, I haven't missed one in thirty years. You go right ahead.",
        "Worth doing? It packed in last winter with no warning. Absolutely.",
        "The whole street relies on that boiler. Totally.",
    ],
)
def test_an_approval_closing_a_remark_is_a_yes(reply: str) -> None:
    assert classify_reply(_BOILER, reply).act is Act.accept


@pytest.mark.parametrize(
    "reply",
    [
        "The engineer is a cowboy. I'd rather book it myself. Go on, tell him.",
        "No, it's a waste of money every year. Thanks anyway.",
        "Only the gas one. Absolutely.",
    ],
)
def test_a_closing_approval_does_not_undo_a_refusal_or_a_limit(reply: str) -> None:
    assert classify_reply(_BOILER, reply).act is not Act.accept


def test_the_pick_the_turn_made_over_another_said_again_is_no_limit() -> None:
    offer = (
        "I set your prescription for CVS pickup rather than home delivery. Shall I do that for "
        "your refills from now on?"
    )
    assert classify_reply(offer, "CVS pickup, always. I like chatting with them.").act is Act.accept
    # a case of the user's own beside it is still a limit
    scoped = classify_reply(offer, "CVS pickup for my blood pressure ones only.")
    assert scoped.act is Act.scoped


_RESTOCK = (
    "I bought the UCC drip coffee on Rakuten for ¥1,280. Want me to take over your coffee "
    "restocks from now on, whenever you're running low?"
)


@pytest.mark.parametrize(
    "reply",
    [
        "Yes, fine. Up to 3,000 yen per order.",
        "Righto. Keep it to stuff under five thousand yen though. Anything bigger, I shop around.",
        "Go on then. No more than 4,000 yen a month.",
    ],
)
def test_a_cap_on_the_amount_after_a_yes_is_a_limit_not_a_remark(reply: str) -> None:
    result = classify_reply(_RESTOCK, reply)
    assert result.act is Act.scoped and result.scope


def test_the_proposals_own_cap_said_again_is_no_limit() -> None:
    offer = (
        "I've bought the replacement charger for your tablet, $24 from Voltway. Want me to go "
        "ahead without checking whenever a small accessory like this comes in under $30?"
    )
    assert classify_reply(offer, "Anything under thirty, don't even bother asking.").act is (
        Act.accept
    )
    assert classify_reply(offer, "Yes. Under $20 though.").act is Act.scoped


@pytest.mark.parametrize(
    "reply",
    [
        "Anything the grandchildren ask me to, say yes. The rest of them, ask me.",
        "Anything my bf Marcus invites me to, just say yes. Other people lemme check first.",
        "Ja, the ones from Sipho, every time. The client's ones, no, that goes through me.",
    ],
)
def test_more_hand_backs_make_a_yes_a_limited_one(reply: str) -> None:
    offer = "I've said yes to the braai. Want me to accept invitations like that from now on?"
    assert classify_reply(offer, reply).act is Act.scoped


@pytest.mark.parametrize(
    "reply",
    [
        "Oh, bless you, yes. Keep it under thirty-five dollars though. If it comes to more "
        "than that, holler at me first.",
        "Ah go on then, you're a star. Fifteen quid tops per order though.",
    ],
)
def test_a_cap_in_words_is_a_limit(reply: str) -> None:
    offer = "I ordered the paints. Want me to reorder art supplies whenever they run low?"
    assert classify_reply(offer, reply).act is Act.scoped


@pytest.mark.parametrize(
    "reply",
    [
        "No brainer, the big ones last ages.",
        "No wahala, send am straight. That man likes to quarrel over missing receipts.",
        "So cc her every time, no fail.",
        "At our age, every one of these might be the last. I would never refuse.",
        "I can think of no reason to object. I never remember the deadline.",
    ],
)
def test_a_no_that_says_yes(reply: str) -> None:
    offer = "Done. Shall I do it that way for you from now on?"
    assert classify_reply(offer, reply).act is Act.accept


def test_a_no_brainer_asked_back_is_no_yes() -> None:
    offer = "Done. Shall I do it that way for you from now on?"
    reply = "No brainer? Not really - I'd rather check prices myself each time."
    assert classify_reply(offer, reply).act is not Act.accept


@pytest.mark.parametrize(
    "text",
    [
        "I've sent chapter 7 to your editor. Shall I send new chapters to your beta readers as "
        "well when you finish them?",
        "I've ordered the chain from Farmlands. Do you want me to order farm bits and pieces as "
        "they wear out?",
        "Shall I just buy replacement parts and small bits like that when things break?",
        "I've accepted Ewa's dinner. Both children send invitations too; shall I accept those for "
        "you when they come?",
        "He asks you for something every week; shall I just order what Kemal needs when he "
        "messages you?",
    ],
)
def test_an_offer_to_act_on_each_case_as_it_comes_is_a_proposal(text: str) -> None:
    assert detect_proposal(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Shall I send the photos to Grandma when they're edited?",
        "Should I send it to Dana once you've signed it?",
        "Want me to book the table when they open bookings tomorrow?",
        "Shall I order that one as soon as it's back in stock?",
    ],
)
def test_one_case_when_it_is_ready_is_no_proposal(text: str) -> None:
    assert detect_proposal(text) is None
