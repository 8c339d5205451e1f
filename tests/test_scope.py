"""Scope: parse_scope for every kind of limit, match_scope inside / outside / unknown."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import pytest

from ledger.model import Scope
from ledger.scope import (
    CallFacts,
    ScopeMatch,
    document_amount,
    match_scope,
    parse_scope,
    rule_times,
)
from ledger.text import sentences

TODAY = date(2025, 3, 10)  # a Monday
FRI_7PM = datetime(2025, 3, 14, 19, 0)
SAT_7PM = datetime(2025, 3, 15, 19, 0)
TUE_1PM = datetime(2025, 3, 11, 13, 0)
TUE_9AM = datetime(2025, 3, 11, 9, 0)


def facts(tool: str = "rsvp", **kw: Any) -> CallFacts:
    return CallFacts(tool=tool, args=kw.pop("args", {}), **kw)


def check(text: str, **kw: Any) -> ScopeMatch:
    return match_scope(parse_scope(text, TODAY), facts(**kw))


# --- parsing ---------------------------------------------------------------------------


def test_person() -> None:
    scope = parse_scope("Only Kevin's parties.", TODAY)
    assert scope.people == ["Kevin"]
    assert "party" in scope.categories
    assert parse_scope("Only for Maya and Jordan", TODAY).people == ["Jordan", "Maya"]


def test_group() -> None:
    assert parse_scope("Only for family.", TODAY).categories == ["family"]
    assert parse_scope("Only for my team", TODAY).categories == ["team"]


def test_category() -> None:
    assert parse_scope("Only fiction books.", TODAY).categories == ["book", "fiction"]


@pytest.mark.parametrize(
    ("text", "cap"),
    [
        ("Sure, as long as it's under $20.", 20),
        ("Only for stuff under fifty bucks.", 50),  # number word
        ("Sure, up to twenty dollars.", 20),  # number word
        ("Only if it's under seventy-five dollars", 75),  # hyphenated number word
        ("Only under a hundred dollars.", 100),
        ("No more than thirty bucks.", 30),
        ("$30 or less", 30),  # the cap after the number
        ("Fine if it's $15.50 or less", 15.5),
        ("Nothing over $1,200.", 1200),
        ("Up to fifteen hundred dollars is fine.", 1500),  # "N hundred"
        ("Under six hundred dollars, go ahead.", 600),
        ("Only if it's under twenty five dollars", 25),  # compound number word, no hyphen
        ("Fine up to forty-two pounds.", 42),
        ("Under two grand, sure.", 2000),
    ],
)
def test_price_cap(text: str, cap: float) -> None:
    scope = parse_scope(text, TODAY)
    assert scope.max_amount == cap
    assert scope.min_amount is None


def test_price_floor() -> None:
    scope = parse_scope("Only for orders over $40, I'll handle the small stuff.", TODAY)
    assert scope.min_amount == 40 and scope.max_amount is None


def test_a_number_without_money_is_not_a_price() -> None:
    assert parse_scope("Only for the 3 of us", TODAY).max_amount is None


def test_party_size() -> None:
    assert parse_scope("Sure, for a table of 4", TODAY).max_quantity == 4


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("Weekdays only.", [0, 1, 2, 3, 4]),
        ("Only weeknights", [0, 1, 2, 3, 4]),
        ("Only on weekends.", [5, 6]),
        ("Only Saturdays", [5]),
        ("Sure, Tuesdays and Thursdays", [1, 3]),
        # a span of days is every day in it, abbreviated or not, wrapping past Sunday
        ("Monday to Friday, go ahead; weekends ask me", [0, 1, 2, 3, 4]),
        ("Mon-Fri is fine", [0, 1, 2, 3, 4]),
        ("Anything between Tuesday and Thursday", [1, 2, 3]),
        ("Tuesdays through Thursdays, yes", [1, 2, 3]),
        ("Friday to Monday, sure", [0, 4, 5, 6]),
        ("Only the ones I sat in on, on Tuesdays", [1]),  # "sat" alone names no day
    ],
)
def test_weekdays_and_weekends(text: str, days: list[int]) -> None:
    assert parse_scope(text, TODAY).weekdays == days


@pytest.mark.parametrize(
    ("text", "after", "before"),
    [
        ("Only evenings.", "17:00", None),
        ("Only weeknights", "17:00", None),
        ("Only mornings.", None, "12:00"),
        ("Only after 6pm", "18:00", None),
        ("Only after 7:30 pm", "19:30", None),
        ("Only before 10am", None, "10:00"),
        ("Only after 5", "17:00", None),  # "after 5" means 5pm
        ("After six is fine", "18:00", None),
        ("Anything before noon", None, "12:00"),
        ("Evenings before 9 are fine", "17:00", "21:00"),  # 9 in the evening
        # spans of hours: the end is after the start
        ("Weekdays from 9am to 5pm", "09:00", "17:00"),
        ("Between six and nine, yes", "18:00", "21:00"),
        ("From 10 till 2 is fine", "10:00", "14:00"),
        ("Anything 8-10pm", "20:00", "22:00"),
        ("The 9 to 5 ones", "09:00", "17:00"),
        # figures that are not hours
        ("Up to 2 to 3 people", None, None),
        ("Packs of 5-10 are fine", None, None),
        ("One by one is fine", None, None),
    ],
)
def test_time_of_day(text: str, after: str | None, before: str | None) -> None:
    scope = parse_scope(text, TODAY)
    assert (scope.time_after, scope.time_before) == (after, before)


@pytest.mark.parametrize(
    ("text", "until"),
    [
        ("Sure, this month.", date(2025, 3, 31)),
        ("This week only", date(2025, 3, 16)),  # the Sunday of TODAY's week
        ("Until June is fine.", date(2025, 5, 31)),  # up to June, not into it
        ("Until the end of June", date(2025, 6, 30)),
        ("Through June", date(2025, 6, 30)),
        ("Until February", date(2026, 1, 31)),  # a month already past: next year's
    ],
)
def test_dates_relative_to_today(text: str, until: date) -> None:
    assert parse_scope(text, TODAY).until == until


def test_dates_need_today() -> None:
    assert parse_scope("Sure, this month.").until is None


@pytest.mark.parametrize(
    ("text", "channel"),
    [
        ("Only by email.", "email"),
        ("Only Slack messages", "slack"),
        ("Only internal emails", "internal"),
        ("Only to my work address", "work address"),
    ],
)
def test_channel(text: str, channel: str) -> None:
    assert channel in parse_scope(text, TODAY).channels


def test_place() -> None:
    assert parse_scope("Only events in Brooklyn.", TODAY).places == ["Brooklyn"]
    assert parse_scope("Sure, if it's in San Diego", TODAY).places == ["San Diego"]


def test_excluded_after_not() -> None:
    scope = parse_scope("Sure, but not work events.", TODAY)
    assert scope.excluded == ["work"]
    assert scope.categories == []
    scope = parse_scope("Sure, for family and friends, but not coworkers.", TODAY)
    assert scope.categories == ["family"]
    assert scope.excluded == ["coworker"]
    assert parse_scope("Anything except groceries.", TODAY).excluded == ["grocery"]


def test_scope_text_is_the_clause_when_given() -> None:
    reply = "Sure thing! Only on weekends though. Thanks for asking."
    scope = parse_scope(reply, TODAY, clause="Only on weekends though")
    assert scope.text == "Only on weekends though"
    assert scope.weekdays == [5, 6]


def test_ask_me_sentences_do_not_add_limits() -> None:
    scope = parse_scope("Sure, for anything under $100. Ask me for anything over $300.", TODAY)
    assert scope.max_amount == 100 and scope.min_amount is None


def test_is_empty() -> None:
    assert Scope(text="whatever").is_empty()
    assert not parse_scope("Only on weekends.", TODAY).is_empty()


# --- matching --------------------------------------------------------------------------


def test_match_person() -> None:
    text = "Only for Maya and Jordan"
    assert check(text, entity_text="Jordan dinner Friday").inside is True
    outside = check(text, entity_text="Lia dinner Friday")
    assert outside.inside is False and "Maya and Jordan" in outside.diff
    assert check(text).inside is not True  # nothing known about the call: never inside


def test_match_group_through_relation_words() -> None:
    text = "Only for family."
    assert check(text, entity_text="Sunday lunch", recipients=["Ana sister"]).inside is True
    assert check(text, entity_text="Team lunch", recipients=["Sam coworker"]).inside is False
    assert check(text).inside is not True


def test_match_category() -> None:
    text = "Only fiction books."
    inside = check(text, tool="purchase", entity_text="The Night Circus fiction paperback")
    assert inside.inside is True and "fiction" in inside.diff
    assert check(text, tool="purchase", entity_text="Garden hose 50 ft").inside is False
    assert check(text, tool="purchase").inside is not True


def test_match_price_cap() -> None:
    text = "Sure, up to twenty dollars."
    inside = check(text, tool="purchase", amount=15.0)
    assert inside.inside is True and inside.diff == "$15, agreed: up to $20"
    outside = check(text, tool="purchase", amount=22.99)
    assert outside.inside is False
    assert "$22.99" in outside.diff and "up to $20" in outside.diff
    unknown = check(text, tool="purchase")
    assert unknown.inside is None and "unknown" in unknown.diff
    assert check(text, tool="purchase", amount=20.0).inside is True  # the cap itself


def test_match_price_floor() -> None:
    text = "Only for orders over $40"
    assert check(text, tool="purchase", amount=55.0).inside is True
    assert check(text, tool="purchase", amount=12.0).inside is False


def test_match_party_size() -> None:
    text = "Sure, for parties up to 4 people"
    assert check(text, quantity=3, entity_text="Birthday party").inside is True
    outside = check(text, quantity=6, entity_text="Birthday party")
    assert outside.inside is False and "6, agreed: up to 4" in outside.diff


def test_match_weekends() -> None:
    text = "Only on weekends."
    assert check(text, when=SAT_7PM).inside is True
    outside = check(text, when=FRI_7PM)
    assert outside.inside is False and outside.diff == "Fri, agreed: Sat, Sun"
    unknown = check(text)
    assert unknown.inside is None and "day is unknown" in unknown.diff


def test_match_weekdays() -> None:
    text = "Weekdays only."
    assert check(text, when=TUE_1PM).inside is True
    assert check(text, when=SAT_7PM).inside is False
    assert check(text).inside is None


def test_match_spans_of_days_and_hours() -> None:
    assert check("Monday to Friday, fine", when=TUE_1PM).inside is True
    assert check("Monday to Friday, fine", when=SAT_7PM).inside is False
    assert check("Between 9 and 5, yes", when=TUE_1PM).inside is True
    assert check("Between 9 and 5, yes", when=FRI_7PM).inside is False
    assert check("Evenings before 9 are fine", when=FRI_7PM).inside is True


def test_match_time_of_day() -> None:
    text = "Only evenings."
    assert check(text, when=FRI_7PM).inside is True
    outside = check(text, when=TUE_1PM)
    assert outside.inside is False and outside.diff == "13:00, agreed: 17:00-"
    assert check(text).inside is None
    assert check("Only mornings.", when=TUE_9AM).inside is True
    assert check("Only mornings.", when=TUE_1PM).inside is False


def test_match_this_month() -> None:
    text = "Sure, this month."
    inside = check(text, today=date(2025, 3, 20))
    assert inside.inside is True and "2025-03-31" in inside.diff
    assert check(text, today=date(2025, 4, 2)).inside is False
    assert check(text).inside is None  # no date on the call


def test_match_several_limits_all_must_hold() -> None:
    text = "Sure, weekends, and up to $60."
    assert check(text, tool="purchase", when=SAT_7PM, amount=45.0).inside is True
    both = check(text, tool="purchase", when=SAT_7PM, amount=80.0)
    assert both.inside is False and "$80" in both.diff and "Sat" in both.diff
    assert check(text, tool="purchase", when=FRI_7PM, amount=45.0).inside is False
    # One limit fails, one is unknown: outside wins over unknown.
    assert check(text, tool="purchase", when=FRI_7PM).inside is False
    # One holds, one is unknown: unknown.
    assert check(text, tool="purchase", when=SAT_7PM).inside is None


def test_match_channel() -> None:
    text = "Only internal emails"
    inside = check(text, tool="send", entity_text="Dana", recipients=["Dana coworker"])
    assert inside.inside is True
    assert check(text, tool="send", recipients=["Bo client"]).inside is False
    # A bare channel cannot be checked from the facts of a call: unknown (the gate asks).
    assert check("Only by email.", tool="send", recipients=["dana@acme.com"]).inside is None


def test_match_place() -> None:
    text = "Only events in Brooklyn."
    assert check(text, entity_text="Rooftop party in Brooklyn").inside is True
    assert check(text, entity_text="Rooftop party in Queens").inside is False
    assert check(text, entity_text="Rooftop party").inside is not True


def test_match_excluded() -> None:
    text = "Sure, on weekends, but not work events."
    outside = check(text, when=SAT_7PM, entity_text="Saturday work party")
    assert outside.inside is False and "excluded: work" in outside.diff
    assert check(text, when=SAT_7PM, entity_text="Birthday party at Lia's").inside is True
    # An exclusion alone never proves a call inside.
    assert check("Sure, but not work events.", entity_text="Birthday party").inside is None


def test_empty_scope_is_unknown() -> None:
    result = match_scope(Scope(text="sure"), facts(amount=10.0))
    assert result.inside is None and "cannot check" in result.diff


# --- formerly known bugs ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kw"),
    [
        ("Only after 6pm", {"when": FRI_7PM, "entity_text": "Dinner at Lia's"}),
        ("Only before 10am", {"when": TUE_9AM, "entity_text": "Breakfast with Sam"}),
        ("Until June is fine.", {"today": date(2025, 4, 1), "entity_text": "Picnic"}),
        ("Through June", {"today": date(2025, 4, 1), "entity_text": "Picnic"}),
        ("Nothing over $1,200.", {"tool": "purchase", "amount": 500.0, "entity_text": "Sofa"}),
    ],
)
def test_function_words_are_not_categories(text: str, kw: dict[str, Any]) -> None:
    assert parse_scope(text, TODAY).categories == []
    assert check(text, **kw).inside is True


def test_excluded_group_uses_relation_words() -> None:
    text = "Sure on weekends, but not work events."
    result = check(
        text, when=SAT_7PM, entity_text="Saturday office party", recipients=["Sam coworker"]
    )
    assert result.inside is False


def test_person_and_category_must_both_hold() -> None:
    assert check("Only Kevin's parties.", entity_text="Kevin book club").inside is False


# --- limits stated from the other side, channels, places, the proposal's own words ----------


@pytest.mark.parametrize(
    ("text", "cap"),
    [
        ("Go ahead, but check with me for anything above $60.", 60),
        ("Fine. Anything over $80 needs my okay.", 80),
        ("Sure, just ask me first on orders over forty dollars.", 40),
    ],
)
def test_a_price_handed_back_is_a_cap(text: str, cap: float) -> None:
    scope = parse_scope(text, TODAY)
    assert scope.max_amount == cap and scope.min_amount is None
    assert check(text, tool="purchase", amount=cap - 1).inside is True
    assert check(text, tool="purchase", amount=cap + 1).inside is False


def test_what_is_handed_back_is_excluded() -> None:
    text = "Sure, but check with me on anything from work."
    scope = parse_scope(text, TODAY)
    assert "work" in scope.excluded and scope.categories == []
    result = check(text, when=SAT_7PM, entity_text="Quarterly offsite", recipients=["Jo manager"])
    assert result.inside is False


def test_outside_of_names_an_exclusion() -> None:
    scope = parse_scope("For anyone outside the company, yes.", TODAY)
    assert "company" in scope.excluded and "outside" not in scope.categories
    assert (
        check(
            "For anyone outside the company, yes.", tool="send", recipients=["Ivo colleague"]
        ).inside
        is False
    )


def test_channel_allowed_and_excluded() -> None:
    text = "Okay, by email, not by text."
    scope = parse_scope(text, TODAY)
    assert scope.channels == ["email"] and "text" in scope.excluded
    assert check(text, tool="send", request="Email Rui the photos.").inside is True
    texted = check(text, tool="send", request="Text Rui the photos.")
    assert texted.inside is False and "by text" in texted.diff
    assert check(text, tool="send", request="Get the photos to Rui.").inside is None
    assert check(text, tool="send", args={"channel": "sms"}).inside is False


def test_a_place_is_not_a_person_and_must_hold() -> None:
    text = "Sure, if it's in Santa Fe"
    scope = parse_scope(text, TODAY)
    assert scope.places == ["Santa Fe"] and scope.people == []
    assert check(text, entity_text="Gallery opening in Santa Fe").inside is True
    assert check(text, entity_text="Gallery opening in Taos").inside is False


def test_person_and_place_must_both_hold() -> None:
    text = "Only Noor's dinners in Oakland."
    assert check(text, entity_text="Noor dinner in Oakland").inside is True
    assert check(text, entity_text="Noor dinner in Fresno").inside is False
    assert check(text, entity_text="Ola dinner in Oakland").inside is False


def test_words_the_proposal_already_uses_do_not_narrow() -> None:
    proposal = "Should I always buy the large bag when you order coffee beans?"
    scope = parse_scope("For the decaf beans, sure.", TODAY, proposal=proposal)
    assert scope.categories == ["decaf"]
    facts_in = facts(tool="purchase", entity_text="Decaf coffee beans 2 lb large bag")
    facts_out = facts(tool="purchase", entity_text="Espresso coffee beans 2 lb large bag")
    assert match_scope(scope, facts_in).inside is True
    assert match_scope(scope, facts_out).inside is False
    # When the limit only repeats the proposal, its words are kept.
    assert parse_scope("For coffee beans, sure.", TODAY, proposal=proposal).categories == [
        "bean",
        "coffee",
    ]


def test_working_hours_is_a_time_window() -> None:
    text = "During business hours, sure."
    scope = parse_scope(text, TODAY)
    assert (scope.time_after, scope.time_before) == ("09:00", "17:00")
    assert scope.categories == []
    assert check(text, when=TUE_1PM).inside is True
    assert check(text, when=FRI_7PM).inside is False


def test_an_exclusion_ends_with_its_sentence() -> None:
    scope = parse_scope("Sure, not the gift sets. Refills are fine.", TODAY)
    assert "gift" in scope.excluded and "refill" not in scope.excluded


@pytest.mark.parametrize(
    ("text", "cap"),
    [
        ("As long as the box is under a hundred euros, go ahead.", 100),
        ("Under £40, sure.", 40),
        ("Fine for anything under 30 quid.", 30),
        ("Go for it if it's €25 or less.", 25),
    ],
)
def test_caps_in_other_currencies(text: str, cap: float) -> None:
    scope = parse_scope(text, TODAY)
    assert scope.max_amount == cap
    # the currency word is how much, not which case
    assert not {"euro", "quid"} & set(scope.categories)
    item = "Photo Rag A4, box of 25"
    assert check(text, tool="purchase", amount=cap - 1, entity_text=item).inside is True
    assert check(text, tool="purchase", amount=cap + 1, entity_text=item).inside is False


def test_the_working_day_is_daytime() -> None:
    text = "During the working day, go ahead. Anything after seven in the evening, ask me first."
    scope = parse_scope(text, TODAY)
    assert (scope.time_after, scope.time_before) == ("09:00", "17:00")
    assert scope.excluded == []  # "seven" is a time, not a case
    assert check(text, when=datetime(2025, 3, 12, 11, 0)).inside is True
    assert check(text, when=datetime(2025, 3, 12, 20, 30)).inside is False


def test_a_noun_carried_by_a_time_is_not_a_further_limit() -> None:
    """ "The weekend outings": the weekend is the limit; the request may call the outing a
    club trip. A noun with a person still narrows ("Kevin's parties")."""
    text = "For the weekend outings, by all means. The weekday ones I prefer to decide myself."
    scope = parse_scope(text, TODAY)
    assert scope.weekdays == [5, 6] and scope.categories == []
    trip = "Walt club trip to Sunrise"
    assert check(text, entity_text=trip, when=datetime(2025, 3, 15, 6, 0)).inside is True
    assert check(text, entity_text=trip, when=datetime(2025, 3, 13, 6, 0)).inside is False
    assert parse_scope("Only work events on weekdays.", TODAY).categories == ["work"]


def test_a_limit_clause_that_only_repeats_the_proposal_gives_way_to_the_real_limit() -> None:
    """ "Main Cabin, no question" repeats the proposal; the limit is "when Nora's flying
    with me". A call that is Main Cabin but without Nora is outside."""
    proposal = "Should I go Main Cabin over Basic whenever I book flights for you?"
    reply = "When Nora's flying with me, Main Cabin, no question. If it's just me, ask."
    scope = parse_scope(reply, TODAY, clause="Main Cabin", proposal=proposal)
    assert scope.people == ["Nora"]
    alone = facts(
        tool="purchase",
        request="Book me a round trip to Nashville.",
        entity_text="Delta MSP-BNA Main Cabin",
    )
    assert match_scope(scope, alone).inside is False


def test_what_is_handed_back_with_loop_me_in_is_excluded() -> None:
    reply = (
        "When it's the band asking, aired mix, no problem. Managers, labels, publicists, "
        "that's a different conversation, so loop me in on those."
    )
    scope = parse_scope(reply, TODAY, clause="When it's the band asking")
    assert {"publicist", "manager"} <= set(scope.excluded)
    asked = facts(tool="send", request="The band's publicist wants a copy of the session.")
    assert match_scope(scope, asked).inside is False


def test_a_vague_amount_of_more_is_not_a_case() -> None:
    scope = parse_scope(
        "If the difference is thirty bucks, refundable, sure. When it's a lot more, ask me.",
        TODAY,
        clause="refundable",
        proposal="Want me to take the refundable rate whenever I book you a room?",
    )
    assert "lot" not in scope.excluded
    room = facts(
        tool="purchase", request="Book me the Hilton.", entity_text="Hilton king refundable"
    )
    assert match_scope(scope, room).inside is not True


def test_an_amount_without_a_currency_is_money_when_the_proposal_talks_money() -> None:
    proposal = "Your day rate is $450, so for offers under that, should I just turn them down?"
    scope = parse_scope("Under three hundred, just say no.", TODAY, proposal=proposal)
    assert scope.max_amount == 300
    assert parse_scope("Under three hundred, just say no.", TODAY).max_amount is None
    gig = facts(request="A festival day for $375.", amount=None)
    assert match_scope(scope, gig).inside is False
    assert match_scope(scope, facts(request="A luncheon, $180 flat.")).inside is True


def test_a_limit_to_a_kind_takes_in_what_falls_under_it_one_way() -> None:
    clothes = parse_scope(
        "Clothes, yes. Not shoes though, check with me on those.", TODAY, clause="Clothes"
    )
    jeans = facts(tool="purchase", request="Nora needs jeans.", entity_text="Cat & Jack jeans, 8")
    sneakers = facts(tool="purchase", request="Nora needs sneakers.", entity_text="Sneakers, 1")
    assert match_scope(clothes, jeans).inside is True
    assert match_scope(clothes, sneakers).inside is False
    # a limit to jackets does not take in jeans
    jackets = parse_scope("On coats and jackets, yes.", TODAY, clause="On coats and jackets")
    assert match_scope(jackets, jeans).inside is False


# --- limits named in other words: the allowed side against the handed-back side ----------

KITCHEN = (
    "For the kitchen and household things, go ahead. Anything medical or for my health I "
    "would rather look at first."
)


def test_scope_keeps_both_sides_of_the_reply() -> None:
    scope = parse_scope(KITCHEN, TODAY, "For the kitchen and household things")
    assert scope.allowed_text == "For the kitchen and household things"
    assert "medical" in scope.back_text and "kitchen" not in scope.back_text


def test_a_limit_clause_on_the_handed_back_side_excludes() -> None:
    # The clause the classifier found sits on the side that is handed back: it must not
    # become what is allowed.
    reply = (
        "To contractors, certainly. For the consultants on our side, the structural engineer "
        "or the reserve specialist, ask me; they sometimes need the figure."
    )
    scope = parse_scope(reply, TODAY, "For the consultants on our side")
    assert "consultant" not in scope.categories
    assert "consultant" in scope.excluded
    assert "contractor" in scope.categories


def by_words(table: dict[tuple[str, str], float]) -> Any:
    """A meaning similarity that knows a few pairs (call word, side word) and nothing else."""

    def meaning(a: str, b: str) -> float:
        return max((v for (x, y), v in table.items() if x in a and y in b), default=0.0)

    return meaning


# An item of the allowed kind in no word the scope or its kinds use (dishwasher tabs now are:
# `KINDS["household"]`), so only meaning can place it.
GLOVES = facts("purchase", request="We are nearly out of the rubber gloves for the sink.")


def test_a_call_meaning_the_allowed_side_is_inside() -> None:
    scope = parse_scope(KITCHEN, TODAY, "For the kitchen and household things")
    assert match_scope(scope, GLOVES).inside is False  # no shared word: outside
    meaning = by_words({("gloves", "kitchen"): 0.45, ("gloves", "medical"): 0.05})
    verdict = match_scope(scope, GLOVES, meaning)
    assert verdict.inside is True
    assert "rather than" in verdict.diff


def test_the_request_alone_may_mean_the_allowed_side() -> None:
    """The item's own words ("Nitrile exam gloves, medium, box of 100") can pull a call
    towards neither side, where the user's request says it the way the reply did."""
    scope = parse_scope(KITCHEN, TODAY, "For the kitchen and household things")
    call = facts(
        "purchase",
        request="We are nearly out of the rubber gloves for the sink.",
        entity_text="Nitrile exam gloves, medium, box of 100",
    )

    def meaning(a: str, b: str) -> float:
        whole = "Nitrile" in a
        if "kitchen" in b:
            return 0.3 if whole else 0.45
        return 0.25 if whole else 0.05

    verdict = match_scope(scope, call, meaning)
    assert verdict.inside is True and "rather than" in verdict.diff

    def failing(a: str, b: str) -> float:
        if "Nitrile" in a:
            return 0.3 if "kitchen" in b else 0.25
        raise RuntimeError("no model")

    assert match_scope(scope, call, failing).inside is False  # fails closed


@pytest.mark.parametrize(
    "table",
    [
        # closer to the allowed side, but not by the margin
        {("gloves", "kitchen"): 0.40, ("gloves", "medical"): 0.30},
        # clear of the handed-back side, but about neither side in its own right
        {("gloves", "kitchen"): 0.20, ("gloves", "medical"): -0.10},
        # closer to what was handed back
        {("gloves", "kitchen"): 0.10, ("gloves", "medical"): 0.50},
    ],
)
def test_a_call_not_clearly_meaning_the_allowed_side_stays_outside(
    table: dict[tuple[str, str], float],
) -> None:
    scope = parse_scope(KITCHEN, TODAY, "For the kitchen and household things")
    assert match_scope(scope, GLOVES, by_words(table)).inside is False


def allowed_side_of(scope: Scope) -> Any:
    """A meaning similarity for which every call means the scope's allowed side."""

    def meaning(a: str, b: str) -> float:
        return 0.9 if b == scope.allowed_text else 0.0

    return meaning


def test_meaning_never_overrides_an_excluded_word_a_name_or_an_empty_other_side() -> None:
    scope = parse_scope(KITCHEN, TODAY, "For the kitchen and household things")
    pills = facts("purchase", request="Reorder my blood pressure pills, the medical ones.")
    assert match_scope(scope, GLOVES, allowed_side_of(scope)).inside is True
    assert match_scope(scope, pills, allowed_side_of(scope)).inside is False  # excluded
    # A name is an exact limit: a market in Eugene is not a Portland market.
    markets = parse_scope(
        "Portland markets, absolutely. Out-of-town ones mean borrowing a car, so I want to "
        "think those through.",
        TODAY,
        "Portland markets",
        proposal="Should I take vendor spots at markets whenever one is offered?",
    )
    assert markets.categories == ["portland"]
    eugene = facts(request="The Eugene Saturday Market wants me as a guest vendor.")
    assert match_scope(markets, eugene, allowed_side_of(markets)).inside is False
    # "so check with me for those" names nothing to compare with.
    weddings = parse_scope(
        "For weddings here in Catalonia, sure. The destination ones she's not always on, so "
        "check with me for those.",
        TODAY,
        "For weddings here in Catalonia",
    )
    menorca = facts("send", request="The shot list for the Menorca wedding is in my docs.")
    assert weddings.back_text
    assert match_scope(weddings, menorca, allowed_side_of(weddings)).inside is False


def test_a_place_is_held_by_its_name_only_never_by_meaning() -> None:
    scope = parse_scope(
        "For the family here in Auckland, yep, they'll print it. The ones coming from overseas "
        "need other info, so check with me before sending them anything.",
        TODAY,
        "For the family here in Auckland",
    )
    assert scope.places == ["Auckland"]
    cousin = facts("send", request="Cousin Tevita in Brisbane wants the family programme.")
    assert match_scope(scope, cousin, allowed_side_of(scope)).inside is False
    aunt = facts("send", request="Aunty Ana in Auckland wants the family programme.")
    assert match_scope(scope, aunt, allowed_side_of(scope)).inside is True


def test_a_name_the_assistant_used_counts_where_it_opens_the_reply() -> None:
    turn = (
        "I'll send Rangi the one-page summary rather than the statements. Should that be our "
        "standard whenever someone on the committee asks about the money?"
    )
    reply = (
        "Rangi's the treasurer, so the summary's what he needs. For anyone else on the "
        "committee, ask me first."
    )
    proposal = "Should that be our standard whenever someone on the committee asks about the money?"
    scope = parse_scope(reply, TODAY, "For anyone else on the committee, ask me first", proposal)
    assert scope.people == []  # an opener alone is not a name
    scope = parse_scope(
        reply, TODAY, "For anyone else on the committee, ask me first", proposal, turn
    )
    assert scope.people == ["Rangi"]
    other = facts("send", request="Mele wants to know where the money is at.")
    assert match_scope(scope, other).inside is False
    rangi = facts("send", request="Rangi wants an update on the money before the meeting.")
    assert match_scope(scope, rangi).inside is True


def test_a_word_both_sides_use_decides_nothing_on_its_own() -> None:
    scope = parse_scope(
        "For our own club, go for it. Other clubs send invites all the time and I can't be "
        "at every one of those, so run them past me.",
        TODAY,
        "For our own club",
    )
    assert scope.categories == ["club"]
    other = facts(request="The Riverside rowing club is holding a quiz night on Friday.")
    assert match_scope(scope, other).inside is None  # cannot tell: fails closed
    # A name still tells the sides apart.
    named = parse_scope(
        "For Maya's parties, yes. Other parties, ask me.", TODAY, "For Maya's parties"
    )
    maya = facts(request="Maya is throwing a birthday party on Saturday.")
    assert match_scope(named, maya).inside is True


def test_a_named_example_of_the_kind_is_of_that_kind() -> None:
    scope = parse_scope(
        "Official bodies like the Council or the Association, just send it. If it's an "
        "employer or an agency asking, ask me first.",
        TODAY,
        "Official bodies like the Council or the Association",
    )
    guild = facts("send", request="The Physiotherapy Association wants my CPD log.")
    assert match_scope(scope, guild).inside is True
    agency = facts("send", request="The locum agency wants my CPD log.")
    assert match_scope(scope, agency).inside is False


def test_a_failing_meaning_model_fails_closed() -> None:
    def broken(a: str, b: str) -> float:
        raise RuntimeError("model down")

    scope = parse_scope(KITCHEN, TODAY, "For the kitchen and household things")
    assert match_scope(scope, GLOVES, broken).inside is False


def test_offline_minilm_places_a_call_by_meaning() -> None:
    from agent.embeddings import MiniLMEmbedder

    embedder = MiniLMEmbedder()

    def cosine(a: str, b: str) -> float:
        va, vb = embedder.embed_arrays([a, b])
        return float(va @ vb)

    scope = parse_scope(KITCHEN, TODAY, "For the kitchen and household things")
    tabs = facts("purchase", request="We are nearly out of the Finish Quantum dishwasher tabs.")
    batteries = facts("purchase", request="I am down to my last card of hearing aid batteries.")
    assert match_scope(scope, tabs, cosine).inside is True
    assert match_scope(scope, batteries, cosine).inside is False


# --- the times a rule's own words name ----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "weekdays", "after", "before", "months"),
    [
        (
            "Should I decline anything that starts at seven or later by default?",
            [],
            "19:00",
            None,
            [],
        ),
        ("Want me to decline anything that begins at nine or later?", [], "21:00", None, []),
        ("Decline anything from 10pm on.", [], "22:00", None, []),
        ("Decline breakfast meetings after 8 in the morning.", [], "08:00", None, []),
        ("Decline anything before 9.", [], None, "09:00", []),
        ("Turn down weeknight invites after 9pm.", [0, 1, 2, 3, 4], "21:00", None, []),
        (
            "Want me to turn down weekend invites between May and October?",
            [5, 6],
            None,
            None,
            [5, 6, 7, 8, 9, 10],
        ),
        ("Skip the Tuesday classes.", [1], None, None, []),
        ("Decline the Mon-Thu classes.", [0, 1, 2, 3], None, None, []),
        ("Decline anything from November through February.", [], None, None, [11, 12, 1, 2]),
        # no time at all, or numbers that are not clock times
        ("RSVP yes to Kevin's game nights whenever you're free.", [], None, None, []),
        ("Reorder it after 2 weeks if it runs low.", [], None, None, []),
        ("Decline dinners with more than 8 people.", [], None, None, []),
    ],
)
def test_rule_times(
    text: str, weekdays: list[int], after: str | None, before: str | None, months: list[int]
) -> None:
    got = rule_times(text)
    assert (got.weekdays, got.after, got.before, got.months) == (weekdays, after, before, months)


def test_rule_times_hold_only_for_a_known_time_that_meets_every_condition() -> None:
    late = rule_times("Decline weekend invites that start at seven or later.")
    assert late.holds(SAT_7PM)
    assert not late.holds(FRI_7PM)  # a Friday
    assert not late.holds(datetime(2025, 3, 15, 18, 30))  # before seven
    assert not late.holds(None)
    assert not rule_times("Decline the rep dinners.").holds(SAT_7PM)  # names no time


def test_handing_back_with_flag_and_not_with_one_too_many() -> None:
    from ledger.text import sides

    allowed, back = sides("For work socials, go for it. If it's family, flag it so I can swap.")
    assert back and "family" in " ".join(back)
    assert "work socials" in " ".join(" ".join(parts) for parts in allowed)
    _, back = sides("PDF every time. They've mangled my formatting one too many times.")
    assert not back


@pytest.mark.parametrize(
    "text,cap",
    [
        ("For the smaller jobs, under two grand, say.", 2000),
        ("Anything under 5 grand is fine.", 5000),
        ("Up to ten thousand dollars, go ahead.", 10000),
    ],
)
def test_grand_and_thousand_multiply(text: str, cap: float) -> None:
    assert parse_scope(text, TODAY).max_amount == cap


def test_a_bare_number_is_money_when_the_assistants_turn_priced_the_thing() -> None:
    turn = "The refurbished mixer is $420 with a warranty; new is $680."
    scope = parse_scope(
        "On the smaller stuff, mixers, scales, anything under five hundred, sure.",
        TODAY,
        proposal="Want me to default to refurbished whenever there's one with a warranty?",
        turn=turn,
    )
    assert scope.max_amount == 500


def test_at_that_price_caps_at_the_price_the_assistant_chose() -> None:
    turn = (
        "I'm ordering the original 130 ml at $2,390 rather than the $1,150 compatible. "
        "Should I stick with genuine HP every time I buy ink for the plotter?"
    )
    scope = parse_scope(
        "At that price, go with the genuine. The 300 ml black is over five thousand though, "
        "so for that one ask me.",
        TODAY,
        clause="At that price",
        proposal="Should I stick with genuine HP every time I buy ink for the plotter?",
        turn=turn,
    )
    assert scope.max_amount == 2390
    cyan = facts(tool="purchase", request="The cyan is low.", amount=2390.0)
    black = facts(tool="purchase", request="The black is low.", amount=5380.0)
    assert match_scope(scope, cyan).inside is True
    assert match_scope(scope, black).inside is False


@pytest.mark.parametrize(
    ("reply", "cap", "item"),
    [
        (
            "Up to about three hundred extra, go flexible. If the gap's bigger, show me both.",
            300,
            "Economy Flex return",
        ),
        (
            "If the difference is twenty, thirty bucks, refundable, sure. More than that, ask me.",
            30,
            "1 king, 1 night, refundable",
        ),
        (
            "Short hires, yes. If the cover adds more than about R1,500 over standard, ask me.",
            1500,
            "Compact car hire, 2 days, short hire, zero-excess cover",
        ),
    ],
)
def test_an_amount_more_than_the_cheaper_option_limits_the_difference(
    reply: str, cap: float, item: str
) -> None:
    turn = "I booked the flexible rate, $149 against $132 for the saver. Shall I always do that?"
    scope = parse_scope(reply, TODAY, proposal=turn, turn=turn)
    assert scope.max_amount == cap and scope.amount_of == "extra"

    def call(cheaper: float) -> CallFacts:
        return facts(
            tool="purchase",
            entity_text=item,
            amount=cap + 100.0,
            competing=["the other option"],
            competing_amounts=[cheaper],
        )

    assert match_scope(scope, call(110.0)).inside is True
    assert match_scope(scope, call(50.0)).inside is False
    # nothing cheaper to compare with: the difference is unknown, the limit unmet
    assert match_scope(scope, call(cap + 900.0)).inside is not True


def test_an_amount_stated_for_the_new_one_limits_the_new_price() -> None:
    turn = "New it's £54.99, but a very good used copy was £23.50. Always go used for law books?"
    scope = parse_scope(
        "For the big expensive ones, anything over thirty quid new, definitely.",
        TODAY,
        proposal=turn,
        turn=turn,
    )
    assert scope.min_amount == 30 and scope.amount_of == "new"

    def used_copy(price: float, new_price: float) -> CallFacts:
        return facts(
            tool="purchase",
            entity_text="Equity, used, very good",
            amount=price,
            competing=["Equity, new", "Equity, used, acceptable"],
            competing_amounts=[new_price, price / 2],
        )

    assert match_scope(scope, used_copy(22.0, 49.99)).inside is True
    assert match_scope(scope, used_copy(8.4, 19.99)).inside is False


def test_an_amount_in_another_sentence_than_the_difference_is_the_price() -> None:
    scope = parse_scope(
        "For the everyday stuff under about $500, do that. Anything bigger, ask me "
        "first; the difference starts to be real money.",
        TODAY,
    )
    assert scope.max_amount == 500 and scope.amount_of == ""


def _send_to(email: str, who: str, others: list[str]) -> CallFacts:
    return facts(
        tool="send",
        request=f"{who} asked for it.",
        entity_text=f"{who} {email}",
        recipients=[email, who],
        competing=others,
    )


def test_a_recipient_outside_the_organisation_is_what_was_allowed() -> None:
    """ "For anything leaving the hospital": the hospital's domain is the one of a contact
    who works there; a recipient elsewhere is inside the scope, one at the hospital is not,
    and one that cannot be placed is not known to be."""
    scope = parse_scope(
        "For anything leaving the hospital, PDFs. Our own education office takes whatever, "
        "so check with me on internal ones.",
        TODAY,
        clause="For anything leaving the hospital",
    )
    assert scope.outside == ["hospital"]
    staff = "MICU Education Office hospital education office micu@lakeviewmemorial.org"
    club = _send_to("registrar@ravenswoodysc.org", "Club registrar", [staff])
    assert match_scope(scope, club).inside is True
    ward = _send_to(
        "priya@lakeviewmemorial.org", "Priya Desai nurse manager", [staff, "Tom tom@gmail.com"]
    )
    assert match_scope(scope, ward).inside is False
    unknown = _send_to("registrar@ravenswoodysc.org", "Club registrar", ["Tom tom@gmail.com"])
    assert match_scope(scope, unknown).inside is not True


def test_outside_a_named_organisation_by_its_domain() -> None:
    scope = parse_scope(
        "For anyone outside Fieldnote, definitely. Partners, customers, that crowd. Inside the "
        "company it depends who's asking, so run those by me.",
        TODAY,
        clause="For anyone outside Fieldnote",
    )
    assert scope.outside == ["fieldnote"]
    cfo = "Karen Liu Fieldnote CFO karen.liu@fieldnote.io"
    partner = _send_to("ines@northwind.com", "Ines Ferreira partner manager at Northwind", [cfo])
    assert match_scope(scope, partner).inside is True
    colleague = _send_to("dana@fieldnote.io", "Dana Whitfield manager", [cfo])
    assert match_scope(scope, colleague).inside is False


def test_outside_a_time_is_no_organisation() -> None:
    scope = parse_scope("Outside the summer, go ahead. In summer the house is let, ask me.", TODAY)
    assert scope.outside == []


def test_a_not_clause_beside_the_limit_excludes_its_names_not_their_titles() -> None:
    reply = (
        "For most owners, go ahead. Not Mrs Naicker in 14, though; she has a complaint open, "
        "so anything from her comes to me first."
    )
    scope = parse_scope(reply, TODAY, clause="For most owners")
    assert "naicker" in scope.excluded and "mrs" not in scope.excluded
    naicker = facts(tool="send", request="Mrs Naicker emailed about the dog.", entity_text="")
    assert match_scope(scope, naicker).inside is False
    # a hedge is no exclusion: "I'm not sure he wants that landing at work"
    hedge = parse_scope(
        "For the flat stuff, yes, he deals with it at the office. Other things I'm not sure "
        "he wants landing at work, so ask me which address.",
        TODAY,
        clause="For the flat stuff",
    )
    assert "work" not in hedge.excluded


def test_a_price_handed_back_with_confirm_the_count_with_me_is_a_cap() -> None:
    scope = parse_scope(
        "On small things, take it that way. For anything over forty dollars each, confirm "
        "the count with me.",
        TODAY,
    )
    assert scope.max_amount == 40 and scope.min_amount is None


@pytest.mark.parametrize(
    "text,cap",
    [
        ("The small ones, up to about R150, knock yourself out.", 150),
        ("Anything under ¥3,000 is fine.", 3000),
        ("Up to 300 pesos, go ahead.", 300),
        ("Fine for anything under ₹2,000.", 2000),
        ("Up to NZ$40, sure.", 40),
        ("Under 5,000 yen or less, yes.", 5000),
    ],
)
def test_money_in_any_currency_is_a_cap(text: str, cap: float) -> None:
    scope = parse_scope(text, TODAY)
    assert scope.max_amount == cap
    # the amount is the limit, not a kind of thing named "r150" or "yen"
    assert not {"r150", "yen", "peso", "pesos"} & set(scope.categories)


def test_a_count_in_currency_words_is_no_cap_without_money() -> None:
    # "R2" only counts as rand before a number that ends the word
    assert parse_scope("Only the R2-D2 ones, up to 3 of them.", TODAY).max_amount is None


def test_the_thing_priced_in_a_condition_is_no_kind() -> None:
    scope = parse_scope("As long as the bag comes in under 25,000 yen, go ahead.", TODAY)
    assert scope.max_amount == 25000 and scope.categories == []
    assert match_scope(scope, facts(entity_text="Mandheling 5kg", amount=19500.0)).inside is True
    assert (
        match_scope(scope, facts(entity_text="Blue Mountain 5kg", amount=58000.0)).inside is False
    )
    # a kind named beside the amount still limits
    kinds = parse_scope("Kids' clothes under $50, sure.", TODAY)
    assert kinds.max_amount == 50 and "kid" in kinds.categories


def test_amounts_are_shown_in_the_items_currency() -> None:
    scope = parse_scope("As long as the bag comes in under 25,000 yen, go ahead.", TODAY)
    verdict = match_scope(scope, facts(entity_text="Beans 5kg", amount=58000.0, currency="JPY"))
    assert verdict.inside is False and verdict.diff == "¥58000, agreed: up to ¥25000"
    rand = match_scope(
        parse_scope("Up to about R150.", TODAY),
        facts(entity_text="2GB bundle", amount=129.5, currency="ZAR"),
    )
    assert rand.inside is True and rand.diff == "129.5 ZAR, agreed: up to 150 ZAR"


def test_a_request_states_its_amount_in_any_currency() -> None:
    scope = parse_scope("Up to R500, fine.", TODAY)
    assert match_scope(scope, facts(request="The levy is R420 this month.")).inside is True
    assert match_scope(scope, facts(request="The levy is 650 rand this month.")).inside is False


@pytest.mark.parametrize(
    ("text", "clause"),
    [
        (
            "If it's free or cheap, like under fifty bucks a head, sign me up.",
            "If it's free or cheap",
        ),
        ("For the smaller ones, under fifty dollars, fine.", None),
        ("For the everyday stuff under about fifty dollars, do that.", None),
    ],
)
def test_words_for_how_dear_are_no_kind_when_an_amount_is_given(
    text: str, clause: str | None
) -> None:
    scope = parse_scope(text, TODAY, clause)
    assert scope.max_amount == 50 and scope.categories == []
    inside = match_scope(scope, facts(entity_text="Chamber mixer", amount=25.0))
    assert inside.inside is True
    assert match_scope(scope, facts(entity_text="Gala", amount=200.0)).inside is False


def test_whatever_a_person_schedules_limits_to_the_person() -> None:
    scope = parse_scope("Whatever Ngaio schedules, yes. Other club stuff, ask me.", TODAY)
    assert scope.people == ["Ngaio"] and scope.categories == []
    assert match_scope(scope, facts(entity_text="Ngaio: extra rehearsal Sat")).inside is True
    assert match_scope(scope, facts(entity_text="Piripi: club quiz night")).inside is False


def test_a_call_without_a_time_is_on_the_days_its_thing_names() -> None:
    scope = parse_scope("For weekday practices, go ahead.", TODAY)
    assert scope.weekdays == [0, 1, 2, 3, 4]
    plan = facts(tool="send", entity_text="Practice plan - Tue Aug 25", request="Send the plan.")
    assert match_scope(scope, plan).inside is True
    weekend = facts(tool="send", entity_text="Practice plan - Sat Aug 29")
    assert match_scope(scope, weekend).inside is False
    assert match_scope(scope, facts(tool="send", entity_text="Practice plan")).inside is None
    assert match_scope(scope, facts(tool="send", entity_text="the sun is out")).inside is None


def test_the_others_of_a_persons_kind_are_handed_back_not_the_persons_things() -> None:
    scope = parse_scope(
        "With Aroha, always. The other directors I'd rather judge one at a time.",
        TODAY,
        "With Aroha, always",
    )
    assert scope.people == ["Aroha"] and "director" not in scope.excluded
    with_directors = facts(entity_text="Aroha: board offsite with the directors")
    assert match_scope(scope, with_directors).inside is True
    assert match_scope(scope, facts(entity_text="Hemi: directors' dinner")).inside is False


def test_who_is_asking_names_no_case() -> None:
    scope = parse_scope(
        "For the parents, sure. The district office depends on who's asking, so check with "
        "me on those.",
        TODAY,
        "For the parents, sure",
    )
    assert "ask" not in scope.excluded and "depend" not in scope.excluded
    asked = facts(tool="send", entity_text="Report", request="A parent is asking for the report.")
    assert match_scope(scope, asked).inside is True


def test_a_place_opening_the_reply_is_a_place() -> None:
    scope = parse_scope("In Dunedin, a maybe does no harm.", TODAY)
    assert scope.places == ["Dunedin"] and scope.people == []


def test_a_hand_back_pointing_to_the_sentence_before_hands_that_back() -> None:
    reply = (
        "In Dunedin, a maybe does no harm. When the do is out of town, Christchurch or "
        "wherever, they book a bus and count heads. Those, kindly bring to me."
    )
    scope = parse_scope(reply, TODAY, "In Dunedin, a maybe does no harm")
    assert "christchurch" in scope.excluded
    away = facts(entity_text="Annual dinner, Christchurch (bus from Dunedin)")
    assert match_scope(scope, away).inside is False
    assert match_scope(scope, facts(entity_text="Committee lunch, Dunedin")).inside is True


@pytest.mark.parametrize(
    ("reply", "clause", "call", "inside"),
    [
        (
            "Tax forms, go ahead. Bank letters I'd rather see first.",
            "Tax forms",
            facts("send", request="My corrected 1099 came in.", entity_text="1099-NEC 2025"),
            True,
        ),
        (
            "For the magazines, yes. Blogs and podcasts, ask me.",
            "For the magazines",
            facts("send", request="The invoice for Harbour Quarterly is ready."),
            True,
        ),
        (
            "For tablets and laptops, sure. Phones, ask me.",
            "For tablets and laptops",
            facts("purchase", request="Order the 13-inch MacBook Air."),
            True,
        ),
        (
            "For tablets and laptops, sure. Phones, ask me.",
            "For tablets and laptops",
            facts("purchase", request="Order the iPhone 16."),
            False,
        ),
        (
            "For the big whiteware, go ahead. Small appliances like kettles, ask me.",
            "For the big whiteware",
            facts("purchase", request="The dryer is done for; get the vented 8kg one."),
            True,
        ),
        (
            "For the common areas, go ahead. Anything inside a flat, ask me.",
            "For the common areas",
            facts("send", request="The light in the third-floor stairwell is out."),
            True,
        ),
        (
            "Arts groups, sure. Businesses, ask me.",
            "Arts groups",
            facts("send", request="The puppet theatre wants my rate sheet."),
            True,
        ),
        # an acronym's plural: "GPs" takes in a GP, and not a specialist
        (
            "For GPs, the summary. Specialists, ask me.",
            "For GPs",
            facts("send", request="Her GP at the medical centre wants the summary."),
            True,
        ),
        (
            "For GPs, the summary. Specialists, ask me.",
            "For GPs",
            facts("send", request="Her orthopaedic specialist wants the summary."),
            False,
        ),
    ],
)
def test_a_kind_named_by_its_everyday_word_takes_in_its_members(
    reply: str, clause: str, call: CallFacts, inside: bool
) -> None:
    assert match_scope(parse_scope(reply, TODAY, clause), call).inside is inside


def test_outside_on_the_handed_back_side_names_what_stays_allowed() -> None:
    # "Anything from outside the team, run it past me": the team is not what is handed back.
    team = parse_scope(
        "Let's keep that to the football lot. Anything from outside the team, run it past me.",
        TODAY,
    )
    assert "team" not in team.excluded
    society = parse_scope(
        "Members, yes, the PDF is what they should see. If it's someone outside the society, "
        "the independent examiner or the council, ask me first.",
        TODAY,
    )
    assert "society" not in society.excluded
    assert {"examiner", "council"} <= set(society.excluded)
    member = facts("send", request="Bernadette, a member of the society, wants the accounts.")
    assert match_scope(society, member).inside is True


GARY = (
    "Gary's own invitations, accept freely; he is my line manager. When it comes from Head "
    "Office in Coventry, the regional director and her people, check with me first."
)


def test_a_handed_back_word_in_a_call_naming_the_allowed_side_is_weighed_by_meaning() -> None:
    scope = parse_scope(GARY, TODAY)
    assert "director" in scope.excluded and "gary" in scope.categories
    gary = facts(request="Gary has called a meeting with the director on Monday at 2.")
    # Without a meaning, or when the call is no nearer what was allowed, the word vetoes.
    assert match_scope(scope, gary).inside is False
    near_back = by_words({("Gary", "Head Office"): 0.5, ("Gary", "Gary's own"): 0.4})
    assert match_scope(scope, gary, near_back).inside is False
    near_allowed = by_words({("Gary", "Gary's own"): 0.5, ("Gary", "Head Office"): 0.2})
    verdict = match_scope(scope, gary, near_allowed)
    assert verdict.inside is True and "though it says director" in verdict.diff
    # A call that names nothing of the allowed side: the handed-back word still vetoes,
    # whatever the meaning says.
    director = facts(request="Coventry has called a meeting for the regions on Monday.")
    everything_allowed = by_words({("", "Gary's own"): 0.9})
    assert match_scope(scope, director, everything_allowed).inside is False


def test_a_kind_named_in_a_list_takes_any_item_of_the_list() -> None:
    florists = parse_scope(
        "Florists, venues, caterers, the people who actually worked the day, yes. Magazines "
        "and blogs wanting to feature a wedding are another thing, ask me on those.",
        TODAY,
        "the people who actually worked the day",
    )
    assert {"florist", "venue", "caterer"} <= set(florists.categories)
    caterer = facts("send", request="The caterer from the Bellver dinner asked for a few photos.")
    assert match_scope(florists, caterer).inside is True
    clinical = parse_scope(
        "The clinical ones, definitely: perio, infection control, that sort of thing. The "
        "business-y ones about running a practice, ask me first.",
        TODAY,
        "The clinical ones",
    )
    assert {"clinical", "infection"} <= set(clinical.categories)


@pytest.mark.parametrize(
    ("reply", "clause", "categories"),
    [
        # a reason beside the item is no further item
        (
            "The downtown ones, absolutely, I'm not fighting Loop traffic on a day off. If "
            "one's up here near home, let me decide.",
            "The downtown ones",
            ["downtown"],
        ),
        # a name or a channel beside the kind would be a further limit: the list is not read
        (
            "School and doctor stuff, Gmail. Anything about money, like her half of camp, ask "
            "me first.",
            "School and doctor stuff",
            ["doctor", "school"],
        ),
    ],
)
def test_a_list_is_only_items_of_the_clause_kind(
    reply: str, clause: str, categories: list[str]
) -> None:
    scope = parse_scope(reply, TODAY, clause)
    assert scope.categories == categories and scope.people == []


def test_a_person_limit_takes_no_words_beside_it_as_items() -> None:
    scope = parse_scope(
        "For Maureen, beautiful. If I ever say the usual for anyone else, ask me.",
        TODAY,
        "For Maureen",
    )
    assert scope.people == ["Maureen"] and scope.categories == []


def test_a_clause_naming_no_case_gives_way_to_the_whole_allowed_side() -> None:
    scope = parse_scope(
        "The main contractors all have a proper tenders address, so for them, yes. The "
        "specialist subbies, electrical, plumbing, ask me.",
        TODAY,
        "so for them",
        proposal="Shall the tender documents go to the contractor's tenders address?",
    )
    assert "main" in scope.categories and "specialist" in scope.excluded
    main = facts("send", request="Ridgeway Builders are tendering as main contractor.")
    assert match_scope(scope, main).inside is True
    subby = facts("send", request="Khumalo Electrical, the specialist subby, wants the bills.")
    assert match_scope(scope, subby).inside is False


def test_the_outside_as_a_noun_is_no_exclusion() -> None:
    scope = parse_scope(
        "For the outside, the walls and the block facades, that's the one. Inside the clubhouse "
        "is a different story, so ask me there.",
        TODAY,
        "For the outside",
    )
    assert {"wall", "facade"} <= set(scope.categories) and "wall" not in scope.excluded
    facade = facts("purchase", request="The front facade of Block C is peeling. Order paint.")
    assert match_scope(scope, facade).inside is True


def test_what_the_handed_back_side_is_outside_of_is_allowed_too() -> None:
    """ "Keep that to the football lot. Anyone from outside the club, check with me": a
    club member is inside, though the request never says "football"."""
    scope = parse_scope(
        "Keep that to the football lot. Anyone from outside the club, check with me.",
        TODAY,
        clause="Keep that to the football lot",
        proposal="Shall I accept social invitations whenever you're free?",
    )
    assert {"football", "club"} <= set(scope.categories)
    alto = facts(request="Priya from the club is having a garden party on Saturday.")
    assert match_scope(scope, alto).inside is True
    gym = facts(request="Tom from the gym is having a garden party on Saturday.")
    assert match_scope(scope, gym).inside is not True


def test_places_listed_with_or_are_each_allowed() -> None:
    scope = parse_scope(
        "Anything in Leeds or Bradford, accept it. Further out, York or Hull, ask me first.",
        TODAY,
        clause="Anything in Leeds or Bradford",
        proposal="Shall I accept craft fair invitations for you?",
    )
    assert scope.places == ["Leeds", "Bradford"] and not scope.people
    fair = facts(request="The craft fair at Leeds Corn Exchange has a stall for me on Saturday.")
    assert match_scope(scope, fair).inside is True
    assert parse_scope("Anything in New York, Boston or Providence.", TODAY).places == [
        "New York",
        "Boston",
        "Providence",
    ]


def test_a_reason_joined_to_the_handed_back_side_by_a_semicolon_is_handed_back() -> None:
    from ledger.text import sides

    allowed, back = sides(
        "On cheap things, go ahead. Over forty dollars, check with me first; Theo may have "
        "outgrown it."
    )
    assert "Theo may have outgrown it" in back
    assert allowed == [["On cheap things", "go ahead"]]
    # Handed to the assistant, not a reason for what was handed back.
    allowed, back = sides("Check with me on dinners; parties I leave to you.")
    assert allowed == [["parties I leave to you"]]


def test_a_reason_for_handing_back_excludes_nothing() -> None:
    """ "Boots are another matter; a tight boot hurts a growing kid": boots are handed back,
    while "kid", said only in the reason, does not make every kid's order ask."""
    scope = parse_scope(
        "For raincoats and hats, yes. Boots are another matter; a tight boot hurts a growing "
        "kid, so ask me about those.",
        TODAY,
        clause="For raincoats and hats",
        proposal="Shall I buy the children's outdoor gear a size up in general?",
    )
    assert "boot" in scope.excluded
    assert not {"kid", "grow", "tight", "hurt"} & set(scope.excluded)
    hat = facts(request="Sam lost his sun hat, the kid needs a new one for the trip.")
    assert match_scope(scope, hat).inside is True
    boots = facts(request="Sam's rain boots are split, get him new boots.")
    assert match_scope(scope, boots).inside is False


def test_a_subject_with_its_reason_names_only_the_subject() -> None:
    """ "The night nurses often need to swap shifts about": the night nurses are handed
    back, the shifts they swap are not."""
    scope = parse_scope(
        "For the porters, the PDF every time. The night nurses often need to swap shifts "
        "about, so when it's one of them, ask me which version.",
        TODAY,
        clause="For the porters",
        proposal="Shall I send the rota as a PDF whenever someone asks for it?",
    )
    assert "nurse" in scope.excluded
    assert "shift" not in scope.excluded and "swap" not in scope.excluded
    porter = facts(request="Dev, one of the porters, wants the shift rota for next week.")
    assert match_scope(scope, porter).inside is True


def test_clauses_after_a_case_stay_cases_unless_they_give_a_reason() -> None:
    """A list after the case is more of the case; a clause with someone doing something,
    after "X is another matter", is why."""
    scope = parse_scope(
        "For the garden and the bins, go ahead. If the minutes touch money, dues, the repair "
        "fund, ask me first.",
        TODAY,
        clause="For the garden and the bins",
        proposal="Shall I send the final minutes to the residents' list each month?",
    )
    assert {"money", "due", "fund"} <= set(scope.excluded)
    kept = parse_scope(
        "For weekday breakfasts, go ahead. Easter is another matter: the whole family comes "
        "and Nan has views on the cheese. Over the holidays, ask me.",
        TODAY,
        clause="For weekday breakfasts",
        proposal="Shall I reorder the cheese when it runs low?",
    )
    assert {"easter", "holiday"} <= set(kept.excluded)
    assert not {"nan", "family", "view"} & set(kept.excluded)


def test_a_title_s_dot_ends_no_sentence() -> None:
    """'For Dr. Okonkwo, send everything': Okonkwo is a person, and the others of her kind
    ("Other offices") are handed back, not her office."""
    reply = "For Dr. Okonkwo, send everything; she reads every page. Other offices I will decide on case by case."
    scope = parse_scope(
        reply, TODAY, clause="For Dr. Okonkwo", proposal="Send her office the full records?"
    )
    assert scope.people == ["Okonkwo"] and scope.excluded == []
    hers = facts("send", request="Dr. Okonkwo's office would like my records.")
    assert match_scope(scope, hers).inside is True
    other = facts("send", request="Dr. Sterling's office would like my records.")
    assert match_scope(scope, other).inside is False
    assert sentences("Mrs. Reyes said yes. Ms. Li too.") == ["Mrs. Reyes said yes.", "Ms. Li too."]


def test_a_name_of_several_words_is_handed_back_whole() -> None:
    """ "Head Office in Coventry": the depot office is not Head Office."""
    scope = parse_scope(GARY, TODAY)
    assert "head office" in scope.excluded and "office" not in scope.excluded
    depot = facts(request="Gary has called a meeting in the depot office on Monday at 2.")
    assert match_scope(scope, depot).inside is True
    head_office = facts(request="Gary has a meeting at Head Office on Monday at 2.")
    assert "excluded: head office" in match_scope(scope, head_office).diff


def test_what_a_time_carries_on_the_handed_back_side_is_no_case() -> None:
    """ "Any weekend cover", "clinic hours": the time tells the sides apart, not the cover."""
    reply = (
        "Weekday evenings, go for it. Weekends are my study time though, so any weekend "
        "cover I want to weigh up myself."
    )
    scope = parse_scope(reply, TODAY, clause="Weekday evenings")
    assert "cover" not in scope.excluded
    assert check(reply, request="Helen needs cover on Friday evening.", when=FRI_7PM).inside
    assert not check(reply, request="Helen needs cover on Saturday evening.", when=SAT_7PM).inside
    hours = parse_scope(
        "Nights and weekends, go for it. If it lands in clinic hours, leave it and check with me.",
        TODAY,
    )
    assert "clinic" not in hours.excluded


def test_what_the_things_handed_back_do_names_no_case() -> None:
    reply = (
        "Florists, venues, caterers, yes. Magazines and blogs wanting to feature a wedding are "
        "another thing, ask me on those."
    )
    scope = parse_scope(reply, TODAY)
    assert {"magazine", "blog"} <= set(scope.excluded) and "wedd" not in scope.excluded
    caterer = facts("send", request="The caterer from the Bellver wedding asked for photos.")
    assert match_scope(scope, caterer).inside is True
    # ... unless the describing clause is what names them
    money = parse_scope("Groceries, yes. Anything involving money is another matter.", TODAY)
    assert "money" in money.excluded


def test_a_call_without_a_time_takes_the_clock_time_its_request_states() -> None:
    scope = parse_scope("Nights and weekends, go for it. In clinic hours, check with me.", TODAY)
    late = facts("send", request="A new enquiry came in, sent Saturday at 10:45pm.")
    assert match_scope(scope, late).inside is True
    morning = facts("send", request="A new enquiry came in, sent Tuesday at 9:15am.")
    assert match_scope(scope, morning).inside is False
    # a thing of a named day, with no time stated, is of that day's kind
    plans = parse_scope("Weeknight ones, yes. Saturdays, check with me first.", TODAY)
    tue = facts("send", entity_text="Practice plan - Tue Aug 25")
    assert match_scope(plans, tue).inside is True
    sat = facts("send", entity_text="Practice plan - Sat Aug 29")
    assert match_scope(plans, sat).inside is False
    assert match_scope(plans, facts("send", entity_text="Practice plan")).inside is None


def test_a_hand_back_pointing_to_one_of_those_before_hands_them_back() -> None:
    reply = (
        "When Colin says it, that's what he means. The weekend volunteers say it for whatever "
        "they ordered last. If it's one of them asking, check with me."
    )
    scope = parse_scope(
        reply, TODAY, clause="The weekend volunteers say it for whatever they ordered last"
    )
    assert scope.people == ["Colin"] and not scope.weekdays and "volunteer" in scope.excluded
    assert scope.back_text.count("weekend volunteers") == 1


def test_a_name_listed_beside_kinds_is_one_more_item() -> None:
    reply = "For banks, Skatteetaten, that sort, the protected one. For family, ask me."
    scope = parse_scope(
        reply, TODAY, clause="For banks, Skatteetaten, that sort, the protected one"
    )
    assert scope.people == ["Skatteetaten"] and "bank" in scope.categories
    assert check_scope(scope, "Skatteetaten wants a copy of my passport.") is True
    assert check_scope(scope, "DNB bank wants a copy of my passport.") is True
    assert check_scope(scope, "The gym wants a copy of my passport.") is False
    # a name that is no item of a list still limits on its own: "Kevin's parties"
    kevin = parse_scope("Only Kevin's parties.", TODAY)
    assert check_scope(kevin, "A party from Ana on Friday.") is False


def test_a_capitalized_word_before_a_hyphen_is_no_name() -> None:
    scope = parse_scope(
        "Day-to-day care papers, the medication list, contact sheets, that sort of thing, fine.",
        TODAY,
        clause="Day-to-day care papers",
        turn="I sent it to Okada-san to pass on to Himawari Day Service.",
    )
    assert scope.people == [] and "contact" in scope.categories


def test_someones_place_is_where_they_live() -> None:
    scope = parse_scope("At Mum's place, go ahead. Anywhere else, ask me.", TODAY)
    assert check_scope(scope, "A care check at Mum's flat on Wednesday.") is True


def check_scope(scope: Scope, request: str) -> bool | None:
    return match_scope(scope, facts("send", request=request)).inside


def test_nights_and_weekends_take_either() -> None:
    reply = "Nights and weekends, go for it. In clinic hours, check with me."
    scope = parse_scope(reply, TODAY)
    assert scope.days_or_hours and scope.weekdays == [5, 6] and scope.time_after == "17:00"
    assert match_scope(scope, facts(when=SAT_7PM.replace(hour=9))).inside is True  # Sat 9am
    assert match_scope(scope, facts(when=FRI_7PM)).inside is True  # a weeknight
    assert match_scope(scope, facts(when=TUE_1PM)).inside is False  # clinic hours
    # both at once when the reply says so
    both = parse_scope("Weekend evenings only.", TODAY)
    assert not both.days_or_hours
    assert match_scope(both, facts(when=SAT_7PM.replace(hour=9))).inside is False


def test_a_word_the_episode_used_for_the_case_is_not_handed_back() -> None:
    # The request was about the club's newsletter; "newsletters" on the handed-back side
    # names what the arrangement is about, and "fundraising" is what tells the cases apart.
    reply = (
        "For the match reports and fixtures, go ahead. If the newsletters are about "
        "fundraising or the club's accounts, ask me first."
    )
    proposal = "Want me to send it to the members' list every month, as soon as it's final?"
    context = "The newsletter for the rugby club is done. Send it to the members' list."
    with_context = parse_scope(reply, TODAY, None, proposal, "", context)
    assert "newslett" not in " ".join(with_context.excluded)
    assert any(k.startswith("fundrais") for k in with_context.excluded)
    without = parse_scope(reply, TODAY, None, proposal, "")
    assert any(k.startswith("newslett") for k in without.excluded)
    call = facts(
        tool="send", request="The May newsletter is final: the match reports and fixtures."
    )
    assert match_scope(with_context, call).inside is True
    assert match_scope(without, call).inside is False


def test_the_scale_of_an_amount_is_not_a_kind_of_thing() -> None:
    # "three thousand yen" is the cap, not a category the call must name.
    scope = parse_scope(
        "For the everyday stuff, under three thousand yen or so, that's ideal. Anything "
        "pricier, check with me first.",
        TODAY,
        "For the everyday stuff, under three thousand yen or so",
    )
    assert scope.max_amount == 3000
    assert not any(c.startswith("thousand") for c in scope.categories)
    inside = facts(tool="purchase", request="We're out of rice.", amount=1800, currency="JPY")
    assert match_scope(scope, inside).inside is True
    over = facts(tool="purchase", request="We're out of rice.", amount=4200, currency="JPY")
    assert match_scope(scope, over).inside is False


def test_a_reason_is_not_the_limit() -> None:
    # The limit clause picked out is a reason; the limit is what the reply allows around it.
    scope = parse_scope(
        "For the allotment, do that; it's the society's money and it has to last. The "
        "tennis club, ask me.",
        TODAY,
        "it's the society's money and it has to last",
    )
    assert "allotment" in scope.categories
    shed = facts(tool="purchase", request="The allotment shed needs a new padlock.")
    assert match_scope(scope, shed).inside is True
    club = facts(tool="purchase", request="The tennis club needs new nets.")
    assert match_scope(scope, club).inside is False


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("3 sessions at $400, report $145. Subtotal $1,345, GST $134.50, total $1,479.50.", 1479.5),
        ("Quote for the parks crew. Total: $6,820 including GST.", 6820.0),
        ("Uber receipt, airport run, $46.20", 46.2),
        ("Two options: $120 or $180.", None),
        ("Minutes of the March meeting.", None),
    ],
)
def test_a_document_is_for_its_total(text: str, amount: float | None) -> None:
    assert document_amount(text) == amount


# --- what a limit is not: colour, the amount's unit, a statement beside the limit --------


@pytest.mark.parametrize(
    ("text", "categories"),
    [
        ("Only if they're €500 or less", []),  # "they're" is a pronoun and its verb
        ("Matinees only, dear.", ["matinee"]),  # whom the user is talking to
        ("Honestly yes, that'd be a lifesaver, keep it under £20", []),  # how they feel
        ("Up to 5,000 yen per order is fine without asking me", []),
        ("$75 a seat or less", []),  # what the amount is counted per
        ("£20 a head max", []),
    ],
)
def test_colour_and_units_are_no_kind_of_thing(text: str, categories: list[str]) -> None:
    assert parse_scope(text, TODAY).categories == categories


@pytest.mark.parametrize(
    ("text", "cap"),
    [
        ("As long as it's under a tenner a go", 10.0),
        ("ok sure but like cap it at 25 bucks per thing", 25.0),
        ("Only the ones that are $75 a seat or less, though", 75.0),
        ("Keep them under £40 each", 40.0),
    ],
)
def test_more_ways_to_state_a_cap(text: str, cap: float) -> None:
    assert parse_scope(text, TODAY).max_amount == cap


def test_a_statement_beside_the_limit_gives_way_to_the_clause_with_the_amount() -> None:
    reply = "Sure, I like supporting them. Only the ones that are $75 a seat or less, though."
    proposal = "Shall I buy tickets for the charity dinners you get invited to?"
    scope = parse_scope(reply, TODAY, clause="I like supporting them", proposal=proposal)
    assert scope.max_amount == 75.0 and scope.categories == []
    inside = facts(tool="purchase", entity_text="Hospice spring dinner ticket", amount=60.0)
    outside = facts(tool="purchase", entity_text="Hospice spring gala ticket", amount=250.0)
    assert match_scope(scope, inside).inside is True
    assert match_scope(scope, outside).inside is False
    # A clause naming cases keeps its own limit beside an amount elsewhere.
    kids = parse_scope(
        "For the kids' stuff, yes. Under $50 though.", TODAY, clause="For the kids' stuff"
    )
    assert kids.categories == ["kid"] and kids.max_amount == 50.0


@pytest.mark.parametrize(
    "reply",
    [
        "Cultural ones are fine. Sports hospitality and golf days, please ask, I decline those.",
        "NDAs are fine. Anything that commits us to money, I sign off personally.",
        "Yeah, righto, just keep it under fifty bucks each time. Over that, give me a hoy.",
        "Sí, great. Cap it at 1,000 pesos per purchase though; above that, I decide.",
        "In town, sure. Anything out west, I'll have a think first.",
        "The local ones, yes. The away games are my call.",
    ],
)
def test_more_ways_to_hand_a_case_back(reply: str) -> None:
    from ledger.text import sides

    allowed, back = sides(reply)
    assert back and allowed


def test_a_request_to_ask_someone_hands_nothing_back() -> None:
    from ledger.text import sides

    assert sides("Please ask Dana to send it over.")[1] == []
    assert sides("Sure, I decided that ages ago.")[1] == []


def test_the_clause_that_marks_itself_as_the_limit_wins_over_a_reason() -> None:
    reply = (
        "Aye, but I'm on nights Monday to Thursday till the autumn, so only say yes if it "
        "falls on a Friday, Saturday or Sunday. The midweek ones leave for me."
    )
    scope = parse_scope(reply, TODAY, clause="but I'm on nights Monday to Thursday till the autumn")
    assert scope.weekdays == [4, 5, 6] and scope.categories == []  # "falls on" is no kind
    assert match_scope(scope, facts(when=SAT_7PM)).inside is True
    assert match_scope(scope, facts(when=TUE_1PM)).inside is False
    # a hedge names no case: the clause that says what it has to be is the limit
    hedged = parse_scope(
        "Mostly, yeah. I'm teaching Mondays and Fridays, so it'd have to be a Tuesday or "
        "Thursday. Other days, just flag them.",
        TODAY,
        clause="Mostly",
    )
    assert hedged.weekdays == [1, 3]


def test_letters_of_any_script_stay_in_one_word() -> None:
    from ledger.text import words

    assert words("Ja, gärna. Zürich and São Paulo") == [
        "ja",
        "gärna",
        "zürich",
        "and",
        "são",
        "paulo",
    ]
    scope = parse_scope("Only for Sofía's things", TODAY)
    assert match_scope(scope, facts(tool="purchase", entity_text="Sofía gift")).inside is True
    assert match_scope(scope, facts(tool="purchase", entity_text="Sofi gift")).inside is False


@pytest.mark.parametrize(
    ("text", "days", "after"),
    [
        ("Yes please, any night except Tuesdays and Thursdays.", [0, 2, 4, 5, 6], "17:00"),
        ("Weekdays except Wednesday", [0, 1, 3, 4], None),
        ("Anything but not on Fridays", [0, 1, 2, 3, 5, 6], None),
        ("Anything kicking off from ten at night, lock it in.", [], "22:00"),
    ],
)
def test_days_left_out_and_a_start_at_night(text: str, days: list[int], after: str | None) -> None:
    scope = parse_scope(text, TODAY)
    assert (scope.weekdays, scope.time_after) == (days, after)
    assert parse_scope("Except the board meetings", TODAY).weekdays == []
