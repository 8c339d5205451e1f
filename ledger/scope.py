"""Scope: parse a user's restriction into structured constraints, and match calls against it.

The parser reads general English patterns (money caps, weekdays, times of day,
"until June", "this month", names, groups, categories, places, channels); the
matcher compares them with the facts of one call. Only the part of a reply the
user allows sets limits; what it hands back ("check with me on anything over
$100", "not the work ones") bounds or excludes. Every kind of limit must hold on
its own (a person limit needs the person, a category limit the category), while
the values listed for one kind are alternatives. When a constraint cannot be
checked from the facts, the answer is "unknown", which the gate treats as out of
scope (ask the user).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import lru_cache

from ledger.model import Scope
from ledger.text import (
    ACCEPT_CUE,
    ASK_BACK,
    CURRENCY_SIGN,
    CURRENCY_WORD,
    HOUR_WORDS,
    MONEY_AMOUNT,
    STOPWORDS,
    normalize,
    sides,
    stem,
    words,
)

_UNITS = (
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_NUMBER_WORDS: dict[str, int] = {
    **{w: i + 1 for i, w in enumerate(_UNITS)},
    **{w: 10 * (i + 2) for i, w in enumerate(_TENS)},
    # "twenty-five", "seventy five"
    **{
        f"{t}{sep}{u}": 10 * (i + 2) + j + 1
        for i, t in enumerate(_TENS)
        for j, u in enumerate(_UNITS[:9])
        for sep in ("-", " ")
    },
    "hundred": 100,
    "a hundred": 100,
    "a thousand": 1000,
    "a grand": 1000,
    # "under a tenner a go", "a fiver each"
    "a tenner": 10,
    "tenner": 10,
    "a fiver": 5,
    "fiver": 5,
}
# "Under three thousand yen", "two grand": the scale of a number is part of the amount.
_SCALES = frozenset("hundred hundreds thousand thousands grand million millions billion".split())
# Currency words say how much, never which case.
_CURRENCY_WORDS = frozenset(
    "dollar dollars buck bucks euro euros pound pounds quid cent cents pence usd eur gbp yen "
    "yuan rupee rupees peso pesos rand reais kroner kronor krona krone franc francs baht "
    "ringgit dirham dirhams shilling shillings naira cedi cedis zloty lira".split()
)
_NUM = (
    r"(?:"
    + CURRENCY_SIGN
    + r")?\s?(\d[\d,]*(?:\.\d+)?)\s*(k\b|grand\b|thousand\b)?|\b("
    + "|".join(sorted((re.escape(k) for k in _NUMBER_WORDS), key=len, reverse=True))
    # "twelve hundred", "two grand", "five thousand"
    + r")(?:\s+(hundred|grand|thousand)\b)?"
)
_MAX_RE = re.compile(
    r"\b(?:under|below|less than|up to|upto|no more than|not more than|at most|max(?:imum)?|"
    r"within|cap(?:ped)?(?: (?:it|them|that|those|this|each(?: one)?|purchases?|orders?))? at|"
    r"keep (?:it|them|each(?: one)?|things|the bill) (?:under|below|to|at or under)|"
    r"nothing (?:over|above|more than)|not over|cheaper than|"
    r"(?:that|which|if it|as long as it|when it)(?:'s| is| costs?)? (?:under|below|less than))"
    r"\s+(?:about |around |roughly |like |a budget of )?(?:" + _NUM + r")"
)
_MAX_AFTER_RE = re.compile(
    r"(?:" + _NUM + r")\s*(?:" + CURRENCY_WORD + r")?\s*"
    # "$75 a seat or less", "£20 a head max"
    r"(?:(?:a|per|each) \w+\s*)?"
    r"(?:or less|or under|max\b|tops\b|or below)"
)
_MIN_RE = re.compile(
    r"\b(?:over|above|more than|at least)\s+(?:about |around |roughly )?(?:" + _NUM + r")"
)
_MONEY_HINT = re.compile(
    r"[$€£¥₹₩₱₦₪₺₫฿]|" + CURRENCY_SIGN + r"\d[\d,.]*(?![\w-])|\b" + CURRENCY_WORD + r"\b|"
    r"dollar|buck|euro|pounds? sterling|price|cost|spend|budget|\bk\b|grand|tenner|fiver"
)
_PARTY_RE = re.compile(r"\b(?:party|group|table) of (\d+)|\bup to (\d+) (?:people|guests|of us)")
_DAYS = {d.lower(): i for i, d in enumerate(calendar.day_name)}
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_DAY_INDEX = {name[:3]: i for name, i in _DAYS.items()}  # "tue": 1
_DAY_ABBREVIATIONS = ("mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun")
_DAYTIME_RE = re.compile(
    r"\b(?:(?:working|work|business|office) (?:hours|day)|workday|daytime|during the day|"
    r"(?:9|nine) ?(?:to|-|–) ?(?:5|five))\b"
)
_DAYS_OR_HOURS_RE = re.compile(
    r"\b(?:nights?|evenings?)\s+(?:and|or|&)\s+(?:on\s+)?weekends?\b|"
    r"\bweekends?\s+(?:and|or|&)\s+(?:in\s+the\s+)?(?:nights?|evenings?)\b"
)

GENERIC = frozenset(
    [
        "rsvp",
        "rsvps",
        "invitation",
        "invitations",
        "invite",
        "invites",
        "event",
        "events",
        "order",
        "orders",
        "buy",
        "purchase",
        "purchases",
        "email",
        "emails",
        "send",
        "sends",
        "message",
        "messages",
        "reply",
        "replies",
        "thing",
        "things",
        "stuff",
        "anything",
        "everything",
        "something",
        "one",
        "ones",
        "people",
        "folks",
        "person",
        "anyone",
        "anybody",
        "everyone",
        "everybody",
        "whatever",
        "lot",
        "lots",
        "bit",
        "whichever",
        "those",
        "them",
        "that",
        "it's",
        "fine",
        "go",
        "ahead",
        "do",
        "it",
        "sure",
        "yes",
        "yeah",
        "okay",
        "ok",
        "please",
        "just",
        "only",
        "definitely",
        "always",
        "never",
        "ask",
        "check",
        "me",
        "first",
        "handle",
        "decide",
        "myself",
        "except",
        "unless",
        "long",
        "provided",
        "providing",
        "as",
        "keep",
        "limit",
        "limited",
        "stick",
        "restrict",
        "restricted",
        "default",
        "rule",
        "automatically",
        "auto",
        "future",
        "now",
        "forward",
        "going",
        "good",
        "great",
        "perfect",
        "works",
        "sound",
        "sounds",
        "thank",
        "thanks",
        "fine",
        "by",
        "all",
        "means",
        "deal",
        "alright",
        "also",
        "well",
        "let",
        "let's",
        "lets",
        "kind",
        "sort",
        "like",
        "stuff",
        "bit",
        "case",
        "basis",
        "otherwise",
        "elsewhere",
        "rest",
        "else",
        "way",
        "time",
        "times",
        "be",
        "it's",
        "i'd",
        "i'm",
        "that's",
        "them,",
        "those,",
        "ok,",
        "can",
        "could",
        "would",
        "should",
        "will",
        "may",
        "might",
        "need",
        "want",
        "wants",
        "make",
        "made",
        "get",
        "gets",
        "got",
        "give",
        "take",
        "same",
        "usual",
        "via",
        "per",
        "day",
        "days",
        "price",
        "cost",
        "dollar",
        "dollars",
        "buck",
        "bucks",
        "under",
        "below",
        "over",
        "above",
        "up",
        "less",
        "more",
        "than",
        "most",
        "least",
        "within",
        "cheap",
        "cheaper",
        "expensive",
        "about",
        "around",
        "roughly",
        "approximately",
        "much",
        "many",
        "few",
        "mine",
        "yours",
        "yeah",
        "item",
        "items",
        "product",
        "products",
        "thing's",
        "ones,",
        "i'll",
        "you'll",
        "don't",
        "doesn't",
        "isn't",
        "aren't",
        "friend",
        "friends",
        "folks",
        "guys",
        "crowd",
        "gang",
        "group",
        "groups",
    ]
)
# Function words and words of assent: they shape a limit but never name what it covers.
_FUNCTION_WORDS = frozenset(
    """
    after before until till through thru during since between among around across along
    outside inside
    toward towards upon without within beyond behind beside besides near past like unlike
    because although though unless whether while whereas whenever wherever whoever however
    nothing none nobody noone anyone someone everyone every each either neither ever
    really actually maybe probably still already yet even soon later earlier whole
    absolutely definitely totally certainly surely honestly basically usually sometimes
    often always never perfect smart idea question percent drill shorthand call
    yes yep yup sure fine okay alright deal works please thanks go ahead
    say mean guess think suppose else other others another rest ask asking asked
    falls happens happen lands occurs onward onwards kicking
    """.split()
)
# How the user feels about the offer, whom they are talking to, and how they say it: a
# reply's colour, never what it covers ("that'd be a lifesaver", "Matinees only, dear",
# "Sim, but only from the official stores"; not "directly" or "personally", which can say
# how a thing goes: "sent to me personally").
_COLOUR_WORDS = frozenset(
    """
    lifesaver godsend gem legend relief brilliant lovely amazing awesome wonderful fantastic
    superb excellent terrific splendid marvellous marvelous ace beaut bonza stoked chuffed
    glad thrilled delighted grateful thankful cheers lekker sorted keen helpful handy useful
    ideal
    dear darling love pet hun honey sweetie mate bro bru boet buddy pal hey haha hahaha lol
    lah ja jah eh oi aye yah sim oui haan ndiyo hmm ah oh wow yay phew righto
    pai sawa yebo claro vale genau merci gracias danke asante salamat bueno gärna
    obviously seriously simply literally honestly gladly happily mostly mainly largely generally
    automatically properly proper itself themselves yourself myself ourselves himself
    herself
    """.split()
)
# "they're", "that'd", "it'll": a pronoun and its verb.
_PRONOUN_CONTRACTION = re.compile(
    r"^(?:i|you|he|she|it|we|they|that|there|here|who|what|this|these|those|which|where|"
    r"when|how|let)'(?:s|re|d|ll|ve|m)$"
)
_TIME_WORDS = (
    frozenset(
        [
            "weekday",
            "weekdays",
            "weekend",
            "weekends",
            "weeknight",
            "weeknights",
            "morning",
            "mornings",
            "evening",
            "evenings",
            "afternoon",
            "afternoons",
            "night",
            "nights",
            "month",
            "week",
            "year",
            "today",
            "tomorrow",
            "am",
            "pm",
            "noon",
            "midnight",
        ]
    )
    | set(_DAYS)
    | {d + "s" for d in _DAYS}
    | set(_DAY_ABBREVIATIONS)
    | set(_MONTHS)
)

# Relation words a request or a contact may use for a group the user named.
SYNONYMS: dict[str, frozenset[str]] = {
    k: frozenset(v.split())
    for k, v in {
        "family": "family mom dad mother father sister brother parent parents aunt uncle cousin "
        "grandma grandmother grandpa grandfather wife husband son daughter kid kids in-law "
        "niece nephew sibling",
        "work": "work coworker co-worker colleague colleagues office team boss manager company "
        "internal workplace job staff department",
        "home": "home house household apartment",
        "internal": "internal company coworker colleague team office work",
        "friend": "friend friends buddy pal",
        "client": "client clients customer customers",
        "kid": "kid kids child children son daughter girl girls boy boys toddler",
        "refundable": "refundable flex flexible changeable",
    }.items()
}
# Kinds and what falls under them, one way only: a limit to "clothes" takes in jeans, but a
# limit to jackets does not take in jeans.
KINDS: dict[str, frozenset[str]] = {
    stem(k): frozenset(stem(w) for w in v.split())
    for k, v in {
        "clothes": "clothing shirt tshirt t-shirt tee top blouse jeans pants trousers shorts skirt "
        "dress jacket coat raincoat parka fleece sweater jumper hoodie sweatshirt cardigan "
        "leggings socks pajamas pyjamas underwear swimsuit overalls uniform",
        "clothing": "clothes shirt tshirt t-shirt tee top blouse jeans pants trousers shorts "
        "skirt dress jacket coat raincoat parka fleece sweater jumper hoodie sweatshirt cardigan "
        "leggings socks pajamas pyjamas underwear swimsuit overalls uniform",
        "shoes": "shoe sneakers sneaker trainers trainer boots boot sandals sandal heels loafers "
        "slippers cleats footwear",
        "footwear": "shoe shoes sneakers trainers boots sandals heels loafers slippers cleats",
        "electronics": "laptop phone tablet headphones earbuds charger camera monitor speaker "
        "kindle e-reader router console",
        "groceries": "milk bread eggs cheese butter coffee tea rice pasta flour sugar fruit "
        "vegetables produce cereal yogurt",
        "toiletries": "shampoo conditioner toothpaste soap deodorant razor sunscreen lotion",
        # kinds a scope names by their everyday word, and what is of that kind by its name
        "household": "toilet tissue tissues towels detergent laundry dishwasher bleach sponge "
        "sponges wipes foil bin-bags cleaner cleaning softener",
        "whiteware": "appliance appliances washer dryer drier fridge refrigerator freezer "
        "dishwasher oven stove cooktop range",
        "laptop": "macbook thinkpad chromebook notebook ultrabook",
        "tablet": "ipad",
        "marker": "copic sharpie promarker posca highlighter highlighters felt-tip",
        "pen": "biro rollerball ballpoint fineliner fountain",
        "software": "app apps application lightroom photoshop illustrator indesign acrobat "
        "autocad sketchup revit archicad licence license plugin plug-in antivirus",
        "magazine": "magazines quarterly journal zine periodical gazette",
        "tax": "1099 1040 w-2 w2 w-9 w9 w-4 p60 p45 p11d t4 hmrc irs",
        "common": "hallway hallways stairwell stairwells stairs lobby elevator elevators "
        "corridor corridors foyer courtyard",
        "arts": "theater theatre gallery museum choir orchestra ballet dance opera puppet",
        # "at Mum's place": where someone lives
        "place": "home flat apartment house condo",
        # "the ordinary editions" take in "print: standard" (not the other way: "make that
        # the standard" is no kind of item)
        "ordinary": "standard regular normal",
        "flexible": "flex",
        "regular": "standard ordinary normal",
    }.items()
}
CHANNELS = ("email", "text", "sms", "slack", "internal", "external", "personal", "work address")
# Channels that name the medium of a send; the others name a kind of recipient.
_MEDIA = {"email": "email", "e-mail": "email", "text": "text", "sms": "text", "slack": "slack"}
_MEDIUM_RE = re.compile(
    r"\b(?:by|via|over|on|through|in an?) (email|e-mail|text|sms|slack)\b|^(email|e-mail|text|"
    r"slack)\b|[.!?;,]\s+(email|e-mail|text|slack)\b"
)


def _amount(match: re.Match[str]) -> float | None:
    groups = [g for g in match.groups() if g]
    if not groups:
        return None
    raw = groups[0]
    if raw in _NUMBER_WORDS:
        value = float(_NUMBER_WORDS[raw])
    else:
        try:
            value = float(raw.replace(",", ""))
        except ValueError:
            return None
    # "5k", "two grand", "ten thousand", "twelve hundred"
    if len(groups) > 1 and groups[1] in ("k", "grand", "thousand"):
        value *= 1000
    elif len(groups) > 1 and groups[1] == "hundred":
        value *= 100
    return value


def _hhmm(hour: str, minute: str | None, ampm: str | None) -> str:
    h = _HOUR_WORDS.get(hour) or int(hour)
    ampm = (ampm or "").replace(".", "")
    if ampm == "pm" and h < 12:
        h += 12
    elif ampm == "am" and h == 12:
        h = 0
    elif not ampm and 1 <= h <= 7:
        h += 12  # "after 5" means 5pm in everyday speech
    return f"{h:02d}:{minute or '00'}"


_HOUR_WORDS = HOUR_WORDS | {"noon": 12, "midnight": 24}
_HOUR = r"(\d{1,2}|" + "|".join(_HOUR_WORDS) + r")(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?"
# "anything that starts at seven or later", "begins at nine or after", "from 10pm on"
# ... but not "after 2 weeks", "before 8 people"
_NOT_A_UNIT = (
    r"(?!\w)(?!\s*(?:weeks?|days?|months?|years?|hours?|minutes?|nights?|people|guests|of|more|"
    r"or so))"
)
_AMPM = r"(am|pm|a\.m\.|p\.m\.)"
# "before 9", "after six", "until noon" ("by" only with a figure: "one by one" is no time).
_TIME_RE = re.compile(
    r"\b(before|after|until|till)\s+"
    + _HOUR
    + _NOT_A_UNIT
    + r"|\b(by)\s+(\d{1,2})(?::(\d{2}))?\s*"
    + _AMPM
    + r"?"
    + _NOT_A_UNIT
    # "kicking off from ten at night", "from 8 onwards"
    + r"|\b(from)\s+"
    + _HOUR
    + r"(?=\s*(?:(at night|in the evening|tonight)|onwards?\b|on\b|or later))"
)
# "9 to 5", "between six and nine", "from 10am till 2": a span of hours. Bare figures
# need "from" or "between" before them, or a.m./p.m. after one ("two to three people"
# is no span).
_HOUR_SPAN_RE = re.compile(
    r"\b(?:from|between)\s+"
    + _HOUR
    + r"\s*(?:to|till|until|and|-|–)\s*"
    + _HOUR
    + _NOT_A_UNIT
    + r"|\b(\d{1,2})(?::(\d{2}))?\s*"
    + _AMPM
    + r"?\s*(?:to|till|until|-|–)\s*"
    + r"(\d{1,2})(?::(\d{2}))?\s*"
    + _AMPM
    + r"?(?!\w)(?!\s*(?:people|guests|of|more|weeks?|days?))"
)


def _hour_span(m: re.Match[str]) -> tuple[str, str] | None:
    """The "HH:MM" bounds of a span of hours; the end is after the start ("9 to 5" ends at
    17:00, "six to nine" at 21:00). None for two bare figures ("5-10", "3 to 4")."""
    g = m.groups()
    h1, m1, p1, h2, m2, p2 = g[0:6] if g[0] else g[6:12]
    if not g[0] and not (p1 or p2) and not (m1 or m2):
        return None
    # "8-10pm": the start shares the end's half of the day when that keeps it first.
    start, end = _hhmm(h1, m1, p1 or (p2 if p2 and p2.startswith("p") else None)), _hhmm(h2, m2, p2)
    if start > end:
        start = _hhmm(h1, m1, p1)
    if not p2 and end <= start and int(end[:2]) < 12:
        end = f"{int(end[:2]) + 12:02d}{end[2:]}"
    return start, end


_FROM_RE = re.compile(
    r"\b(?:at|from)\s+" + _HOUR + r"\s+(?:or (?:later|after)|onwards?|on)\b"
    r"|\b(?:after|past)\s+" + _HOUR + _NOT_A_UNIT
)
_UNTIL_RE = re.compile(r"\b(?:before|earlier than)\s+" + _HOUR + _NOT_A_UNIT)
_MONTH_SPAN = re.compile(
    r"\b(?:between|from)\s+("
    + "|".join(_MONTHS)
    + r")\s+(?:and|through|to|till|until)\s+("
    + "|".join(_MONTHS)
    + r")\b"
)


@dataclass
class When:
    """The times a rule's own words are about: "decline anything that starts at seven or
    later", "weekend invites between May and October". Empty when it names none."""

    weekdays: list[int] = field(default_factory=list)
    after: str | None = None  # "HH:MM", inclusive
    before: str | None = None  # "HH:MM", exclusive
    months: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.weekdays or self.after or self.before or self.months)

    def holds(self, when: datetime | None) -> bool:
        """Does a call at this time meet every condition? False when the time is unknown."""
        if when is None or not self:
            return False
        hhmm = when.strftime("%H:%M")
        return (
            (not self.weekdays or when.weekday() in self.weekdays)
            and (not self.after or hhmm >= self.after)
            and (not self.before or hhmm < self.before)
            and (not self.months or when.month in self.months)
        )


_DAY_WORD = r"(" + "|".join(_DAY_ABBREVIATIONS) + r"|(?:mon|tues|wednes|thurs|fri|satur|sun)days?)"
# "Monday to Friday", "mon-fri", "between Tuesday and Thursday": every day of the span.
# An abbreviation counts only in a span ("I sat down" names no Saturday).
_DAY_SPAN_RE = re.compile(
    r"\b(?:between "
    + _DAY_WORD
    + r" and "
    + _DAY_WORD
    + r"|"
    + _DAY_WORD
    + r"\s*(?:to|through|thru|till|til|until|-|–|—)\s*"
    + _DAY_WORD
    + r")\b"
)


_EXCEPT_DAYS = re.compile(
    r"\b(?:except|but not|other than|apart from|excluding|not on)\b(?=(?:\s+(?:on|the|for|"
    r"any|and|or|[a-z]+days?|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun|,))+)"
)


def named_weekdays(norm: str) -> list[int]:
    """The weekdays a normalized text names, spans in full ("monday to friday" is five
    days, "fri-mon" four), single days by their whole names."""
    days: set[int] = set()
    for m in _DAY_SPAN_RE.finditer(norm):
        first, last = (g for g in m.groups() if g)
        a, b = _DAY_INDEX[first[:3]], _DAY_INDEX[last[:3]]
        days.update((a + i) % 7 for i in range((b - a) % 7 + 1))
    toks = words(_DAY_SPAN_RE.sub(" ", norm))
    days.update(_DAYS[t.rstrip("s")] for t in toks if t.rstrip("s") in _DAYS)
    return sorted(days)


def _clock(hour: str, minute: str | None, ampm: str | None, evening: bool) -> str:
    h = _HOUR_WORDS.get(hour) or int(hour)
    ampm = (ampm or "").replace(".", "")
    if ampm == "pm" and h < 12:
        h += 12
    elif ampm == "am" and h == 12:
        h = 0
    elif not ampm and evening and 1 <= h <= 11:
        h += 12
    return f"{min(h, 24):02d}:{minute or '00'}"


def rule_times(text: str) -> When:
    """The days, hours and months a rule's wording is about (see `When`).

    An hour with no am/pm is read as events are spoken of: "at seven or later" and "after
    nine" are in the evening unless the rule speaks of mornings; "before nine" is a morning.
    """
    norm = normalize(text)
    toks = set(words(norm))
    out = When()
    if toks & {"weekend", "weekends"}:
        out.weekdays = [5, 6]
    elif toks & {"weekday", "weekdays", "weeknight", "weeknights"}:
        out.weekdays = [0, 1, 2, 3, 4]
    else:
        out.weekdays = named_weekdays(norm)
    morning = bool(toks & {"morning", "mornings", "am", "breakfast"})
    m = _FROM_RE.search(norm)
    if m:
        hour, minute, ampm = m.group(1, 2, 3) if m.group(1) else m.group(4, 5, 6)
        out.after = _clock(hour, minute, ampm, evening=not morning)
    m = _UNTIL_RE.search(norm)
    if m:
        hour, minute, ampm = m.group(1, 2, 3)
        out.before = _clock(hour, minute, ampm, evening=False)
    m = _MONTH_SPAN.search(norm)
    if m:
        first, last = _MONTHS[m.group(1)], _MONTHS[m.group(2)]
        span = range(first, last + 1) if first <= last else [*range(first, 13), *range(1, last + 1)]
        out.months = list(span)
    return out


def _end_of_month(day: date) -> date:
    return date(day.year, day.month, calendar.monthrange(day.year, day.month)[1])


# A clause that gives a reason ("since it's the committee's money", "because of the glass").
_REASON_CLAUSE = re.compile(r"^(?:since|because|cos|'cause|it's|it is|that's|that is)\b")


def parse_scope(
    text: str,
    today: date | None = None,
    clause: str | None = None,
    proposal: str = "",
    turn: str = "",
    context: str = "",
) -> Scope:
    """Structured constraints from a user's scoped acceptance (see `_parse_scope`).

    When the limit clause only repeats the proposal ("Main Cabin, no question" after "should
    I go Main Cabin?"), the limit is elsewhere in what the reply allows ("When Nora's flying
    with me"): the whole allowed side is read instead.
    """
    if clause and _REASON_CLAUSE.match(normalize(clause)):
        # "For the marae, do that; it's the committee's money": a reason says why, not
        # which cases; the limit is in what the reply allows around it.
        clause = None
    scope = _parse_scope(text, today, clause, proposal, turn, context)
    if clause and scope.categories and not scope.people:
        # A kind named in a list ("Florists, venues, caterers, the people who worked the
        # day"): any item of the list is the limit. Only items of that kind: a name or a
        # word of another kind beside it would be a further limit, not another item.
        listed = _whole_list(clause, sides(text)[0])
        if listed != clause:
            whole_list = _parse_scope(text, today, listed, proposal, turn, context)
            if not whole_list.people and not whole_list.places and not whole_list.channels:
                scope = whole_list.model_copy(update={"text": scope.text})
    if clause and (_STATEMENT_CLAUSE.match(normalize(clause)) or not _allows_something(scope)):
        # "Yeah go on, that'd be a godsend. Long as it's under a tenner a go though", "Aye,
        # but I'm on nights Monday to Thursday, so only say yes if it falls on a Friday,
        # Saturday or Sunday": a statement of the user's own says why; the clause that
        # states the limit (with "only", "as long as", "has to be") is the limit, else the
        # one with an amount, a day or an hour.
        alone = _parse_scope(clause, today, None, proposal, turn, context)
        stated = _stated_limit(
            text,
            clause,
            today,
            proposal,
            turn,
            context,
            marked_only=_structured(alone),
            named=not _allows_something(scope),
        )
        if stated is not None:
            clause = stated
            scope = _parse_scope(text, today, clause, proposal, turn, context)
    if clause and not _allows_something(scope):
        # "so for them, yes" or a limit read as something else: the clause names no case,
        # so the whole allowed side is what the user allowed.
        whole = _parse_scope(text, today, None, proposal, turn, context)
        if _allows_something(whole):
            return whole.model_copy(update={"text": scope.text})
    if clause and proposal and not _narrows(scope, proposal):
        whole = _parse_scope(text, today, None, proposal, turn, context)
        if _narrows(whole, proposal):
            return whole.model_copy(update={"text": scope.text})
    return scope


# A clause that is a statement of the user's own ("that'd be a godsend", "I like supporting
# them", "but remember I am up at three"), not a noun phrase naming cases.
_STATEMENT_CLAUSE = re.compile(
    r"^(?:(?:but|and|so|though|although|because|cos|since|well|plus|also|oh|yeah|yes) )*"
    r"(?:remember )?(?:i|i'm|i'd|i'll|i've|that|that's|that'd|that'll|it|it's|it'd|it'll|we|"
    r"we're|we'd|they|they're|they'd|you|you're|you'd|he|he's|she|she's|this|this'd)\b"
)


def _structured(scope: Scope) -> bool:
    """Does the scope state an amount, a count, days, hours or an end date?"""
    return bool(
        scope.max_amount is not None
        or scope.min_amount is not None
        or scope.max_quantity is not None
        or scope.weekdays
        or scope.time_after
        or scope.time_before
        or scope.until is not None
    )


# A clause that states the limit itself: "so only say yes if ...", "as long as ...", "so
# it'd have to be a Tuesday or Thursday".
_LIMIT_MARK = re.compile(
    r"^(?:(?:so|and|but|then|though) )*(?:only|just|as long as|so long as|long as|provided|"
    r"providing)\b|\b(?:has|have|had|needs?) to be\b|\bit'd have to\b"
)


def _stated_limit(
    text: str,
    clause: str,
    today: date | None,
    proposal: str,
    turn: str,
    context: str,
    marked_only: bool,
    named: bool = False,
) -> str | None:
    """Another clause of the allowed side that states an amount, days or hours: one that
    marks itself as the limit first (read with the rest of its sentence: "only if it falls
    on a Friday, Saturday or Sunday"), else any (unless `marked_only`). With `named`, a
    marked clause that names a case of any kind will do ("Hmm, only Efua's")."""
    marked: list[str] = []
    plain: list[str] = []
    for parts in sides(text)[0]:
        for i, part in enumerate(parts):
            if part == clause:
                continue
            if _LIMIT_MARK.search(normalize(part)):
                whole = ", ".join(parts[i:])
                read = _parse_scope(whole, today, None, proposal, turn, context)
                if _structured(read) or (named and _allows_something(read)):
                    marked.append(whole)
            elif _structured(_parse_scope(part, today, None, proposal, turn, context)):
                plain.append(part)
    if marked:
        return marked[0]
    return None if marked_only or not plain else plain[0]


def _allows_something(scope: Scope) -> bool:
    """Does the scope say what is allowed (not only what is handed back)?"""
    return bool(
        scope.people
        or scope.categories
        or scope.places
        or scope.outside
        or scope.channels
        or _structured(scope)
    )


def _narrows(scope: Scope, proposal: str) -> bool:
    """Does the scope state anything the proposal did not already say?"""
    said = _keys(proposal)
    return bool(
        _structured(scope)
        or scope.channels
        or scope.places
        or scope.excluded
        or [p for p in scope.people if stem(p.lower()) not in said]
        or [c for c in scope.categories if c not in said]
    )


# An amount that is a difference: "up to about three hundred extra", "if the cover adds more
# than R1,500 over standard", "if the difference is twenty, thirty bucks".
_EXTRA_CUE = re.compile(
    r"\b(?:extra|difference|gap|premium|upcharge|surcharge|on top)\b|\badds?\b|"
    r"\b(?:more|over) (?:than )?(?:the )?(?:standard|basic|base|cheapest|cheaper one|saver|"
    r"non-?refundable)\b"
)
_DIFFERENCE_IS = re.compile(r"\b(?:difference|gap|extra) (?:is|of|'s) (?:about |around |like )?")
_NEW_PRICE = re.compile(r"(?:" + _NUM + r")\s*(?:" + CURRENCY_WORD + r")?\s+(?:new|brand new)\b")


def _amount_of(scope: Scope, allowed: str, back: str) -> str:
    """What the scope's amount limits (see Scope.amount_of); "" for the item's own price.

    "If the difference is twenty, thirty bucks, refundable, sure" states no cap in the usual
    words: the largest amount said of the difference is the cap."""
    if scope.max_amount is None and scope.min_amount is None:
        said = _DIFFERENCE_IS.search(allowed)
        if not said:
            return ""
        amounts = [a for m in re.finditer(_NUM, allowed[said.end() :]) if (a := _amount(m))]
        if not amounts:
            return ""
        scope.max_amount = max(amounts[:3])
        return "extra"
    # Only the sentence that states the amount says what it is of ("For the everyday stuff
    # under about five hundred, do that. Anything bigger, show me the prices first; the
    # difference starts to be real money" limits the price, not the difference).
    for side in (allowed, back):
        for sentence in re.split(r"[.;!?]", side):
            if not (_MAX_RE.search(sentence) or _MIN_RE.search(sentence)):
                continue
            if _NEW_PRICE.search(sentence):
                return "new"
            if _EXTRA_CUE.search(sentence):
                return "extra"
            return ""
    return ""


_AT_THAT_PRICE = re.compile(
    r"\b(?:at|for) (?:that|this|those|these) (?:price|prices|price point|cost|money|amount)\b"
)
# A price the proposal names as the other option, not as what it chose.
_OTHER_OPTION = re.compile(
    r"\b(?:rather than|instead of|than|versus|vs\.?|against|over)\s+(?:the\s+)?$"
)


def _proposed_price(proposal: str) -> float | None:
    """The first price in the proposal that is not the option it passed over ("the original
    at $2,390 rather than the $1,150 compatible": 2390)."""
    for m in MONEY_AMOUNT.finditer(proposal):
        if _OTHER_OPTION.search(proposal[max(0, m.start() - 20) : m.start()].lower()):
            continue
        try:
            return float((m.group(1) or m.group(2)).replace(",", ""))
        except (TypeError, ValueError):
            continue
    return None


def _parse_scope(
    text: str,
    today: date | None = None,
    clause: str | None = None,
    proposal: str = "",
    turn: str = "",
    context: str = "",
) -> Scope:
    """Structured constraints from a user's scoped acceptance (whole reply + its limit clause).

    Only the part of the reply the user allows sets limits; a part handed back ("ask me
    first for anything over $100") bounds it from the other side (a cap of $100). Words the
    proposal itself uses ("books" in "for chapter books", when books were proposed) do not
    narrow it, so they are not kept as categories unless nothing else is.
    """
    allowed, back = sides(text)
    allowed_text = ". ".join(", ".join(parts) for parts in allowed)
    if clause and (ASK_BACK.search(normalize(clause)) or clause.strip() in back):
        # The limit was stated as what to hand back ("For the consultants on our side, the
        # structural engineer or the reserve specialist, ask me"): it excludes, the rest is
        # allowed.
        if clause.strip() not in back:
            back.append(clause)
        clause = None
    limit_src = clause or allowed_text
    norm = normalize(allowed_text)
    back_norm = normalize(" ".join(back))
    scope = Scope(
        text=(clause or text).strip(), allowed_text=limit_src.strip(), back_text=" ".join(back)
    )
    # "Under three hundred" after "your day rate is $450": the proposal says it is money.
    money_talk = bool(_MONEY_HINT.search(norm) or MONEY_AMOUNT.search(f"{proposal} {turn}"))
    for m in _MAX_RE.finditer(norm):
        if money_talk or re.search(CURRENCY_SIGN, m.group(0)):
            scope.max_amount = _amount(m)
            break
    if scope.max_amount is None:
        m2 = _MAX_AFTER_RE.search(norm)
        if m2:
            scope.max_amount = _amount(m2)
    m3 = _MIN_RE.search(norm)
    if m3 and money_talk and scope.max_amount is None:
        scope.min_amount = _amount(m3)
    # What is handed back bounds what is allowed: "ask me for anything over $100" is a cap.
    if scope.max_amount is None and scope.min_amount is None and _MONEY_HINT.search(back_norm):
        over = _MIN_RE.search(back_norm)
        under = _MAX_RE.search(back_norm)
        if over:
            scope.max_amount = _amount(over)
        elif under:
            scope.min_amount = _amount(under)
    if scope.max_amount is None and scope.min_amount is None and _AT_THAT_PRICE.search(norm):
        # "At that price, go with the genuine": the price the proposal named is the cap.
        scope.max_amount = _proposed_price(f"{proposal} {turn}")
    scope.amount_of = _amount_of(scope, norm, back_norm)
    party = _PARTY_RE.search(norm)
    if party:
        scope.max_quantity = int(party.group(1) or party.group(2))

    toks = words(normalize(limit_src))
    # "Any night except Tuesdays and Thursdays": the days after "except" are the ones left out.
    parts = _EXCEPT_DAYS.split(normalize(limit_src), maxsplit=1)
    kept_src, left_out = (parts[0], parts[1]) if len(parts) == 2 else (parts[0], "")
    kept_toks = words(kept_src)
    if any(t in ("weekday", "weekdays", "weeknight", "weeknights") for t in kept_toks):
        scope.weekdays = [0, 1, 2, 3, 4]
    elif any(t in ("weekend", "weekends") for t in kept_toks):
        scope.weekdays = [5, 6]
    else:
        days = named_weekdays(kept_src)
        if days:
            scope.weekdays = days
    skipped = named_weekdays(left_out) if left_out else []
    if skipped:
        scope.weekdays = sorted(set(scope.weekdays or range(7)) - set(skipped))
    if any(
        t in ("evening", "evenings", "night", "nights", "weeknight", "weeknights") for t in toks
    ):
        scope.time_after = "17:00"
    if any(t in ("morning", "mornings") for t in toks):
        scope.time_before = "12:00"
    # "Nights and weekends", "weekends or evenings": either will do.
    if scope.weekdays and scope.time_after and _DAYS_OR_HOURS_RE.search(normalize(limit_src)):
        scope.days_or_hours = True
    if _DAYTIME_RE.search(normalize(limit_src)):
        scope.time_after, scope.time_before = "09:00", "17:00"
    limit_norm = normalize(limit_src)
    spans = [span for m in _HOUR_SPAN_RE.finditer(limit_norm) if (span := _hour_span(m))]
    if spans:
        scope.time_after, scope.time_before = spans[0]
        limit_norm = _HOUR_SPAN_RE.sub(" ", limit_norm)
    for m in _TIME_RE.finditer(limit_norm):
        groups = m.groups()
        start = 0 if groups[0] else 4 if groups[4] else 8
        kind, hour, minute, ampm = groups[start : start + 4]
        if kind == "from":
            at_night = groups[12] is not None and (_HOUR_WORDS.get(hour) or int(hour)) < 12
            scope.time_after = _hhmm(hour, minute, ampm or ("pm" if at_night else None))
        elif kind == "after":
            scope.time_after = _hhmm(hour, minute, ampm)
        elif ampm or minute or not hour.isdigit() or int(hour) <= 12:
            scope.time_before = _hhmm(hour, minute, ampm)
            if scope.time_after and scope.time_before < scope.time_after and not ampm:
                # "Evenings before 9": the hour is in the evening.
                evening_hour = int(scope.time_before[:2]) + 12
                if evening_hour <= 24:
                    scope.time_before = f"{evening_hour:02d}{scope.time_before[2:]}"
    if today is not None:
        if re.search(r"\bthis month\b", norm):
            scope.until = _end_of_month(today)
        elif re.search(r"\bthis week\b", norm):
            scope.until = date.fromordinal(today.toordinal() + (6 - today.weekday()))
        else:
            m4 = re.search(
                r"\b(?:until|till|through|before) (?:the end of )?(?:(?!the end\b)[\w']+ ){0,4}?"
                r"(?:the end of )?(" + "|".join(_MONTHS) + r")\b",
                norm,
            )
            if m4:
                month = _MONTHS[m4.group(1)]
                year = today.year + (1 if month < today.month else 0)
                scope.until = (
                    _end_of_month(date(year, month, 1))
                    if "end of" in m4.group(0) or "through" in m4.group(0)
                    else date.fromordinal(date(year, month, 1).toordinal() - 1)
                )

    limit = _DAYTIME_RE.sub(" ", normalize(limit_src))
    positive, negative = _split_negated(limit)
    src_positive, src_negative = _split_negated(limit_src)
    scope.channels = _channels(positive)
    # "in Halifax", and each place listed with it ("in Halifax or Dartmouth")
    scope.places = [
        name
        for m in _IN_PLACES_RE.finditer(src_positive)
        for name in _PLACE_RE.findall(m.group(0))[1:]
    ]
    place_words = {w.lower() for p in scope.places for w in p.split()}
    # A name the assistant's turn used counts even where it opens a sentence of the reply.
    known = _names(f"{turn} {proposal}")
    people = [p for p in _names(src_positive, known) if p.lower() not in place_words]
    # Names the proposal itself uses ("Main Cabin") do not narrow it when others do.
    said = _keys(proposal)
    scope.people = [p for p in people if stem(p.lower()) not in said] or people
    named = {stem(w) for w in [*(p.lower() for p in scope.people), *place_words]}
    named |= {p.lower() for p in scope.people} | place_words
    # A noun that only carries a stated time ("the weekend outings", "weekday ones") names
    # what the arrangement is about, not a further limit: the day is the limit, and the
    # request may call the thing by another word ("Walt's club trip on Saturday").
    attached: set[str] = set()
    if scope.weekdays or scope.time_after or scope.time_before:
        attached |= {stem(m) for m in _AFTER_TIME_WORD.findall(positive)}
    # Words that only say how big or dear ("the smaller ones, under two grand", "free or
    # cheap, like under fifty a head"): the amount is the limit.
    if scope.max_amount is not None or scope.min_amount is not None:
        attached |= _AMOUNT_WORDS
        if scope.amount_of:  # "three hundred extra", "thirty quid new": what the amount is of
            attached |= _AMOUNT_OF_WORDS
        # "As long as the bag comes in under 25,000 yen": the thing priced is what the
        # arrangement is about, and how its price is said is no kind either.
        for m in _PRICED_RE.finditer(positive):
            attached |= {stem(w) for w in m.group(0).split()}
        attached |= {stem(w) for w in _PER_UNIT_RE.findall(positive)}
    # "Whatever Carol schedules": what the person does picks their things, it is no kind.
    for m in _WHATEVER_RE.finditer(src_positive):
        if m.group(1) in scope.people:
            attached.add(stem(m.group(2).lower()))
    # "For anyone outside Fieldnote", "for anything leaving the hospital": a recipient
    # outside the organisation. (Its words stay limits too, for a call whose recipient
    # cannot be placed: "outside the summer" is no organisation.)
    for m in _OUTSIDE_ORG.finditer(limit_src):
        org = _keys(m.group(1))
        # an organisation: a name ("Fieldnote") or a word for one ("the hospital"), not a
        # time or a thing ("outside the summer")
        if org and (m.group(1)[:1].isupper() or org & _ORGANISATIONS):
            scope.outside.append(" ".join(sorted(org)))
    categories = _keys(positive) - named - attached
    narrowing = categories - _keys(proposal)
    # "Keep that to the football lot. Anything from outside the team, run it past me": what
    # the handed-back side is outside of is allowed too, another word for the same case.
    inside = (
        {
            k
            for part in back
            for m in _OUTSIDE_RE.finditer(normalize(part))
            for k in _keys(ASK_BACK.split(m.group(0))[0])
        }
        - _KEY_VERBS
        - named
        - attached
    )
    scope.categories = sorted((narrowing or categories) | (inside if categories else set()))
    # "Rangi's the treasurer, so the summary's what he needs": who the person is, and why;
    # the person is the limit, the rest describes them.
    role = _ROLE_RE.match(src_positive.strip())
    if role and role.group(1) in scope.people:
        scope.categories = []
    excluded = _keys(negative) | {stem(c) for c in _channels(negative)}
    excluded |= {stem(n.lower()) for n in _names(src_negative)}
    if limit_src.strip() != allowed_text.strip():
        # "For most owners, go ahead. Not Mrs Naicker in 14, though": what the allowed side
        # says not to do beside the limit clause is excluded too.
        for m in _NOT_THESE.finditer(allowed_text):
            also = _keys(m.group(1)) | {stem(n.lower()) for n in _names(m.group(1), known)}
            excluded |= also - _TITLES
    if limit_src and back and scope.max_amount is None and scope.min_amount is None:
        # "Sure, but check with me on work invites": what is handed back is excluded.
        # A word the episode itself used for the case at hand (the user's request, the turn
        # that proposed: "the minutes", "residents' families") names what the arrangement is
        # about on both sides, not what the user handed back ("If the minutes touch money").
        excluded |= _keys(_handed_back(back)) - _keys(f"{proposal} {turn} {context}") - _KEY_VERBS
        # "With Dana, always. The other execs I'd rather judge": the others of Dana's kind
        # are handed back, not Dana's own things.
        if scope.people or scope.places:
            excluded -= {stem(w) for w in _OTHER_KIND_RE.findall(normalize(" ".join(back)))}
        # "Any weekend cover", "if it lands in clinic hours": with a day or a time as the
        # limit, the thing the time words carry is what the arrangement is about on both
        # sides; the time tells them apart.
        if scope.weekdays or scope.time_after or scope.time_before:
            handed = _handed_back(back)
            excluded -= {stem(w) for w in _AFTER_TIME_WORD.findall(handed)}
            excluded -= {stem(w) for w in _BEFORE_TIME_WORD.findall(handed)}
        # "Head Office in Coventry", "a South Shore bird": a name of several words is handed
        # back whole; one of its words alone ("the office", "on the shore") is not it.
        for name in _name_phrases(" ".join(back)):
            parts = [stem(w.lower()) for w in name.split()]
            if set(parts) & excluded:
                excluded -= set(parts)
                excluded.add(" ".join(parts))
    scope.excluded = sorted(excluded - set(scope.categories) - named)
    return scope


# "clinic hours", "study time": a word that only says whose or what time it is.
_BEFORE_TIME_WORD = re.compile(r"\b(\w+) (?:hours|time)\b")
_NAME_PHRASE_RE = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)+\b")


def _listed_names(text: str) -> set[str]:
    """Names (lower case) that are a whole item of a list: "Skatteetaten" in "For banks,
    Skatteetaten, that sort"."""
    items = re.split(r",\s*|\s+(?:and|or)\s+", text)
    return (
        {
            item.strip().lower()
            for item in items
            if re.fullmatch(r"(?:the )?[A-Z][\w'-]+(?: [A-Z][\w'-]+)*", item.strip())
        }
        if len(items) >= 3
        else set()
    )


def _name_phrases(text: str) -> list[str]:
    """Names of several capitalized words ("Head Office", "Pascoe Vale"), without an
    opening word that is no name ("The European classics" names no "The European")."""
    out = []
    for m in _NAME_PHRASE_RE.finditer(text):
        kept = m.group(0).split()
        while kept and (kept[0] in _NOT_NAMES or kept[0].lower() in STOPWORDS):
            kept.pop(0)
        if len(kept) >= 2:
            out.append(" ".join(kept))
    return out


_PLACE = r"[A-Z][a-z]+(?: [A-Z][a-z]+)?"
_PLACE_RE = re.compile(r"\b(?:[Ii]n|" + _PLACE + r")\b")
_IN_PLACES_RE = re.compile(r"\b[Ii]n " + _PLACE + r"(?:(?:,\s*|,? (?:or|and) )" + _PLACE + r")*")


# A clause that says something of its own rather than naming a case: it opens with a
# subject, a conjunction or a condition ("I'm not fighting Loop traffic", "she reads every
# page", "if ...").
_STATEMENT_RE = re.compile(
    r"^(?:i|i'm|i'd|i'll|i've|we|we're|you|he|she|they|it|it's|that's|there's|this|these|"
    r"those|if|when|so|but|because|since|as|and then|though|although|unless|just|go|"
    r"please)\b|n't\b"
)
_LIST_ITEM_WORDS = 3


def _list_item(part: str) -> bool | None:
    """Is a part of a sentence an item of a list (True), a yes beside it (None) or neither?"""
    norm = normalize(part)
    if ACCEPT_CUE.fullmatch(norm) or (len(words(norm)) <= 2 and ACCEPT_CUE.search(norm)):
        return None
    return not (_STATEMENT_RE.search(norm) or len(words(norm)) > _LIST_ITEM_WORDS)


def _whole_list(clause: str, allowed: list[list[str]]) -> str:
    """The limit clause with the other items of the list it sits in.

    "Florists, venues, caterers, the people who actually worked the day, yes": the limit
    is any of them, not only the clause the classifier quoted. Items are short parts of the
    same sentence that name a case; a yes beside them is skipped, a statement ends the list.
    """
    target = clause.strip().rstrip(".!?")
    for parts in allowed:
        if target not in parts:
            continue
        at = parts.index(target)
        before: list[str] = []
        for part in reversed(parts[:at]):
            verdict = _list_item(part)
            if verdict is False:
                break
            if verdict:
                before.insert(0, part)
        after: list[str] = []
        for part in parts[at + 1 :]:
            verdict = _list_item(part)
            if verdict is False:
                break
            if verdict:
                after.append(part)
        return ", ".join([*before, target, *after])
    return clause


_EXAMPLES_RE = re.compile(
    r"\b(?:like|such as|e\.g\.?|including|for example)\s+[^.;:!?]*", re.IGNORECASE
)
_PRICED_RE = re.compile(
    r"\b(?:as long as|so long as|if|when|provided|providing)(?: that)? (?:the |it |they |each |"
    r"a |an |one )?(?:\w+ ){0,2}?\w+ (?:comes? in|comes? out|costs?|is|are|stays?|runs?|works? "
    r"out)(?= (?:at |to |around |about )?(?:under|below|less than|at most|no more than|over|"
    r"above|more than)\b)"
)
_OTHER_KIND_RE = re.compile(r"\b(?:the )?(?:other|rest of the|all the other) (\w+)")
_AMOUNT_WORDS = frozenset(
    stem(w)
    for w in "small smaller smallest little big bigger biggest large larger free cheap cheaper "
    "pricey pricier costly fancy affordable inexpensive minor major low high budget "
    "everyday ordinary routine normal cap capped max maximum limit tops".split()
)
# What an amount is counted per ("$75 a seat or less", "a tenner a go", "£20 a head max"):
# how the price is said, not a kind of thing.
_PER_UNIT_RE = re.compile(
    r"(?:\d|\b(?:tenner|fiver|bucks?|quid|dollars?|pounds?|euros?|yen|rand)) (?:a|an|per|each) (\w+)"
)
# A clause that opens by saying what not: "Not Mrs Naicker in 14, though", "but not the
# Friday ones", "except Carlos" (not "I'm not sure he wants that").
_NOT_THESE = re.compile(
    r"(?:^|[.;!?,]\s*)(?:but |and )?(?:not|except(?: for)?|apart from|other than) ([^,.;!?]+)",
    re.IGNORECASE,
)
_TITLES = frozenset({"mr", "mrs", "ms", "miss", "mx", "dr", "prof"})
_AMOUNT_OF_WORDS = frozenset(
    stem(w) for w in "extra difference gap premium upcharge surcharge new brand".split()
)
_WHATEVER_RE = re.compile(
    r"\b(?:[Ww]hatever|[Aa]nything|[Ee]verything|[Ww]hichever) ([A-Z][a-z]+) ([a-z]+s)\b"
)
_ROLE_RE = re.compile(r"([A-Z][a-z]+)(?:'s| is) (?:the|our|my|their|her|his) \w+")
_AFTER_TIME_WORD = re.compile(
    r"\b(?:weekend|weekday|weeknight|evening|morning|afternoon|night|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)s? (\w+)"
)


# Verbs that tell how a case is handed back, not which case it is.
_KEY_VERBS = frozenset(
    stem(w)
    for w in """
    see look decide judge weigh handle spell write run leave bring flag pick choose check
    assume talk know come take commit rather prefer like love want need try trade plan
    think eat switch change pay fit hold finish ask asking depend depends wonder
    """.split()
)


def _handed_back(back: list[str]) -> str:
    """The cases a reply hands back, without the asking itself or the reasons given for it:
    "if it's out in the suburbs" and "on internal ones" in "..., so check with me on internal
    ones"; "shoes" in "Shoes are another matter; a loose shoe trips a small child"."""
    kept = []
    for part in _without_reasons(back):
        norm = _DAYTIME_RE.sub(" ", normalize(part))
        m = ASK_BACK.search(norm)
        if m is None:
            kept.append(norm)
            continue
        kept.append(norm[: m.start()])
        after = norm[m.end() :]
        if re.match(r"\s*(?:first\s+)?(?:on|for|about|with|when|if|over|above)\b", after):
            kept.append(after)
    # "Anything from outside the team": the team is what stays allowed, not a case handed back.
    return " ".join(_OUTSIDE_RE.sub(" ", part) for part in kept)


_OUTSIDE_RE = re.compile(
    r"\b(?:outside(?: of)?|other than|apart from|except(?: for)?|beyond)\b[^,;.!?]*"
)

# "Shoes are another matter", "The pantry volunteers are a different crowd": what comes
# before names the case handed back; what follows it is why.
_OTHER_MATTER_RE = re.compile(
    r"^(.+?)\s+(?:is|are|'s|'re)\s+(?:a |an )?(?:another|a different|different|separate)\s+"
    r"(?:matter|story|thing|case|conversation|question|crowd|kettle of fish)\b"
)
# "The supervisors and controllers often need to move duties about", "The Walsall matches
# have their own secretary": the subject names the case, the rest of the sentence is why.
_REASON_PREDICATE_RE = re.compile(
    r"(?<!\bso)\s(?:often|sometimes|mostly|usually|generally|normally|tend to|"
    r"(?:have|has) (?:their|its|his|her|our) own)\s"
)
# A clause that opens with a reason, or with someone doing something, says why.
_REASON_OPENING_RE = re.compile(
    r"^(?:because|since|as|which|who|so that|that's|it's|there's|"
    r"(?:sometimes |often |usually |mostly )?(?:i|i'm|i'd|i've|we|we're|we'd|she|she's|he|"
    r"he's|they|they've|it|you|you'd|that|this|there)\b)"
)
# A clause that opens by naming a case: "if it's going abroad", "over the holidays".
_CASE_OPENING_RE = re.compile(
    r"^(?:so )?(?:if|when|whenever|with|for|over|on|anything|any|anyone|anybody|those|these|"
    r"the ones|ones|once|where|unless|from)\b"
)


# "Magazines and blogs wanting to feature a wedding": what follows the things named says
# what they do, not which they are.
_DESCRIBING_RE = re.compile(r"\s(?:\w+ing|who|which|that|whose)\b")


def _head_only(subject: str) -> str:
    """The things a subject names, without the clause describing them; all of it when the
    clause is what names them ("anything involving money")."""
    m = _DESCRIBING_RE.search(subject)
    if m is None or not _keys(subject[: m.start()]) - GENERIC:
        return subject
    return subject[: m.start()]


def _without_reasons(back: list[str]) -> list[str]:
    """The handed-back clauses that name a case, without those that only give a reason for
    handing it back. A clause that asks the user, or opens with "if", "when", "for" and the
    like, names a case; after one clause has named it, a clause with someone doing
    something ("a loose shoe trips a small child", "I send those unframed") is a reason.
    When nothing would be left, all clauses stay."""
    out: list[str] = []
    named = False
    explained = False  # the last clause was "X is another matter": why may follow
    for part in back:
        norm = normalize(part).strip(" ,;:")
        other = _OTHER_MATTER_RE.match(norm)
        if other:
            out.append(_head_only(other.group(1)))
            named = explained = True
            continue
        if ASK_BACK.search(norm) or _CASE_OPENING_RE.match(norm):
            out.append(part)
            named, explained = True, False
            continue
        if named and (explained or _REASON_OPENING_RE.match(norm)):
            continue
        subject = _REASON_PREDICATE_RE.search(f" {norm} ")
        if subject and not named:
            out.append(f" {norm} "[: subject.start()])
            named = True
            continue
        out.append(part)
    return out if any(_keys(p) for p in out) else list(back)


def _channels(text: str) -> list[str]:
    return [c for c in CHANNELS if re.search(r"\b" + re.escape(c) + r"\b", text)]


def _split_negated(text: str) -> tuple[str, str]:
    """Split a clause into what it allows and what follows 'not' / 'except' / 'but not'."""
    parts = re.split(
        r"\b(?:but not|not|except(?: for)?|excluding|other than|(?<!the )outside(?: of)?|apart from|"
        r"besides|no)\b",
        text,
        maxsplit=1,
        flags=re.I,
    )
    if len(parts) < 2:
        return text, ""
    # The exclusion runs to the end of its sentence; what follows is allowed again.
    end = re.search(r"[.!?;](?=[\"'”’)\s]|$)", parts[1])
    if end is None:
        return parts[0], parts[1]
    return parts[0] + " " + parts[1][end.end() :], parts[1][: end.end()]


_AMOUNT_WORD = re.compile(r"^(?:" + CURRENCY_SIGN + r")?\d")


def _keys(text: str) -> set[str]:
    out = set()
    for w in (p.removesuffix("'s") for tok in words(text) for p in tok.split("-")):
        if w in STOPWORDS or w in GENERIC or w in _FUNCTION_WORDS or w in _TIME_WORDS or len(w) < 3:
            continue
        if w in _COLOUR_WORDS or _PRONOUN_CONTRACTION.match(w):
            continue
        if _AMOUNT_WORD.match(w) or w in _NUMBER_WORDS or w in _CURRENCY_WORDS or w in _SCALES:
            continue
        out.add(stem(w))
    return out


# A word after a title's dot ("Dr. Okonkwo") opens no sentence: it is a name.
_AFTER_TITLE = r"(?<=\b(?:Dr|Mr|Ms|Mx)\.\s)|(?<=\bMrs\.\s)|(?<=\bProf\.\s)"
# "Day-to-day" opens with a capital and is no name.
_NAME_RE = re.compile(
    r"(?:(?<![.!?]\s)|" + _AFTER_TITLE + r")(?<!^)\b([A-Z][a-z]+(?:'s)?)\b(?!-[a-z])"
)
_OPENER_RE = re.compile(r"(?:^|(?<=[.!?]\s))([A-Z][a-z]+(?:'s)?)\b(?!-[a-z])")
_NOT_NAMES = (
    set(calendar.day_name)
    | {d + "s" for d in calendar.day_name}
    | set(calendar.month_name[1:])
    | {d.title() for d in _DAY_ABBREVIATIONS}
    | {"I", "OK", "Okay", "Yes", "Sure", "Only", "Just", "Internal", "External", "For", "Anything"}
    | {"Dr", "Mr", "Mrs", "Ms", "Mx", "Miss", "Prof"}
)


def _names(text: str, known: Collection[str] = ()) -> list[str]:
    """Capitalized words that are not sentence openers; an opener counts when it is one of
    the `known` names ("Pita's the chair, ..." after a proposal naming Pita)."""
    names = []
    for m in _NAME_RE.finditer(text.strip()):
        name = m.group(1).removesuffix("'s")
        if name not in _NOT_NAMES and name.lower() not in STOPWORDS:
            names.append(name)
    for m in _OPENER_RE.finditer(text.strip()):
        name = m.group(1).removesuffix("'s")
        if name in known:
            names.append(name)
    return sorted(set(names))


# A person a rule is about, in its own words: "answer Walt's invitations", "whatever goes
# for Helen", "invites from Kevin", "anything about Nora", "any time Fer reports something
# broken". Not one it routes through or sends with ("through Pauline", "with Pita's church
# group"): that is how, not whose.
_CASE_NAME = re.compile(
    r"(?<!\bwith )(?<!\bthrough )(?<!\bvia )(?<!\bby )(?<!\bof )"
    r"\b(?P<owner>[A-Z][a-z]+)'s (?!(?:\w+ )?(?:address|email|inbox|mailbox|gmail|number)\b)"
    r"(?P<noun>\w+)|"
    r"\b(?:for|from|about|(?<!even )(?i:whenever|when|if|(?:any|every|each) time|once)(?= [A-Z]))"
    r" (?P<name>[A-Z][a-z]+)\b(?!'s)"
)


# Whose things "these" are: "Tom posts these pretty often", "Okada-san schedules these every
# few months", "Andre's been sending these". One person (the verb is singular), so a name
# even where it opens the sentence; "Couples send these" is no one.
_CASE_SENDER = re.compile(
    r"\b(?P<name>[A-Z][a-z]+)(?:-(?:san|sama|kun|chan|sensei|ji))?"
    r"(?:'s been (?:sending|posting)| (?:seems to send|keeps (?:sending|posting)|has been "
    r"(?:sending|posting)|sends|posts|schedules|puts up|organi[sz]es|hosts|runs))\b"
    r"[^.?!]{0,30}?\bthese\b"
)


def case_people(rule: str) -> list[tuple[str, set[str]]]:
    """The people whose things a rule is about, each with the key words of what of theirs
    ("Sipho's school things": Sipho, {school}). Names only: a capital that opens a sentence
    counts only as the one who sends "these" ("Tom posts these pretty often")."""
    return [(name, set(nouns)) for name, nouns in _case_people(rule)]


@lru_cache(maxsize=4096)
def _case_people(rule: str) -> tuple[tuple[str, frozenset[str]], ...]:
    # (the gate asks this of every rule for every call)
    names = set(_names(rule))
    found = []
    for m in _CASE_NAME.finditer(rule):
        name = m.group("owner") or m.group("name")
        if name in names:
            found.append((stem(name.lower()), frozenset(_keys(m.group("noun") or ""))))
    for m in _CASE_SENDER.finditer(rule):
        name = m.group("name")
        if name not in _NOT_NAMES and name.lower() not in STOPWORDS:
            found.append((stem(name.lower()), frozenset()))
    return tuple(found)


def case_unmet(rule: str, facts: CallFacts) -> bool:
    """Does the rule name a person whose things it is about, when the call names neither
    that person nor what of theirs the rule is about ("answer Walt's invitations with a
    maybe", for an invitation from a Medicare agency)?"""
    people = _case_people(rule)
    if not people:
        return False
    text = facts.text()
    said = {stem(p.removesuffix("'s")) for w in words(text) for p in [w, *w.split("-")]}
    keys = _keys(text)
    return not any(name in said or nouns & keys for name, nouns in people)


@dataclass
class CallFacts:
    """What the gate knows about one call: built by the agent from the world and the request."""

    tool: str
    args: dict[str, object]
    request: str = ""
    entity_text: str = ""  # invitation / product / document / contact described in words
    amount: float | None = None
    currency: str = "USD"  # of `amount`; a limit the user stated is read in the same one
    quantity: int | None = None
    when: datetime | None = None
    recipients: list[str] = field(default_factory=list)  # names, relations, emails
    competing: list[str] = field(default_factory=list)  # other entities the call could pick
    # Their amounts, in the same order, when they have one (purchases: price x quantity).
    competing_amounts: list[float] = field(default_factory=list)
    # Several independent choices (a send picks a recipient AND a document): pairs of
    # (what was chosen, its alternatives). Empty: one choice, entity_text vs competing.
    choices: list[tuple[str, list[str]]] = field(default_factory=list)

    def choice_pairs(self) -> list[tuple[str, list[str]]]:
        if self.choices:
            return [(c, others) for c, others in self.choices if others]
        return [(self.entity_text, self.competing)] if self.competing else []

    today: date | None = None

    def text(self) -> str:
        return " ".join([self.request, self.entity_text, " ".join(self.recipients)])


@dataclass
class ScopeMatch:
    inside: bool | None  # None: cannot tell from the facts (treated as outside)
    diff: str


def _expand(stems: set[str]) -> set[str]:
    out = set(stems)
    for s in stems:
        for key, group in SYNONYMS.items():
            if s == stem(key) or s in {stem(g) for g in group}:
                out |= {stem(g) for g in group} | {stem(key)}
    return out


def _channel_of(facts: CallFacts) -> str | None:
    """The medium of a send when the facts name it (a `channel` argument, or the request
    asking for one: "text Sam the address", "send it by email"); None when unknown."""
    if facts.tool != "send":
        return None
    given = str(facts.args.get("channel", "")).lower()
    if given in _MEDIA:
        return _MEDIA[given]
    m = _MEDIUM_RE.search(normalize(facts.request))
    if m:
        return _MEDIA[next(g for g in m.groups() if g)]
    return None


_DAY_NAME_RE = re.compile(
    r"\b((?i:(?:mon|tues|wednes|thurs|fri|satur|sun)day))s?\b|\b(Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)\b(?!')"
)


def _days_named(text: str) -> set[int]:
    """The weekdays a text names ("Tuesday's plan", "Sat 12 Oct")."""
    return {_DAY_INDEX[(m.group(1) or m.group(2)).lower()[:3]] for m in _DAY_NAME_RE.finditer(text)}


_SIGNS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "INR": "₹"}


_STATED_CLOCK_RE = re.compile(r"\bat (\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)")


def _stated_clock(request: str) -> str | None:
    """The one clock time a request states with am or pm ("sent Saturday at 10:45pm")."""
    found = {
        _clock(h, m or None, ap, False) for h, m, ap in _STATED_CLOCK_RE.findall(request.lower())
    }
    return found.pop() if len(found) == 1 else None


def _money(value: float, currency: str) -> str:
    """An amount as the user reads it: "$15", "£22.99", "19500 MXN"."""
    sign = _SIGNS.get(currency.upper())
    number = f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{sign}{number}" if sign else f"{number} {currency.upper()}"


def _stated_amount(request: str) -> float | None:
    """The one amount of money the user's request states ("the Uber receipt, $46.20"), if
    it states exactly one; a call with no price of its own (sending a receipt) is judged
    on it."""
    found = {float((a or b).replace(",", "")) for a, b in MONEY_AMOUNT.findall(request)}
    return found.pop() if len(found) == 1 else None


_TOTAL = re.compile(r"\btotal\b(?:\s+(?:of|due|is|:))?\s*:?\s*", re.IGNORECASE)


def document_amount(text: str) -> float | None:
    """The amount a document is for: the one it calls the total ("Subtotal $1,345, GST
    $134.50, total $1,479.50"), else the only amount it states; None when it names none or
    several and no total."""
    totals = []
    for label in _TOTAL.finditer(text):
        amount = MONEY_AMOUNT.match(text, label.end())
        if amount:
            totals.append(float((amount.group(1) or amount.group(2)).replace(",", "")))
    if totals:
        return totals[-1]
    return _stated_amount(text)


# How much closer in meaning a call must be to what the user allowed than to what they handed
# back, for a limit whose words the call does not use ("dishwasher tabs" for "kitchen and
# household things, go ahead; anything medical I'd rather look at"). Set on the first corpus
# and the development personas (cosines of the offline MiniLM); checked on held-out ones.
MEANING_MARGIN = 0.15
# ... and it must be about the allowed side in its own right, not merely less unlike it than
# the other (a rule on another topic altogether is unlike both).
MEANING_FLOOR = 0.25

Meaning = Callable[[str, str], float]


def _closer_to_allowed(
    scope: Scope, facts: CallFacts, meaning: Meaning | None, name_said: bool = False
) -> bool:
    """Is the call clearly about what the user allowed rather than what they handed back?

    `name_said`: the call already uses the allowed side's words, so a name there is met.
    """
    if meaning is None or not scope.allowed_text or not scope.back_text:
        return False
    # A handed-back side that names nothing ("so check with me for those") or only repeats
    # the allowed side gives nothing to compare with.
    if not _keys(scope.back_text) - _KEY_VERBS - _keys(scope.allowed_text):
        return False
    # A name is an exact limit ("Portland markets"): a call elsewhere may mean much the same.
    names = _keys(scope.allowed_text) & _capitalized(scope.allowed_text)
    if not name_said and names & set(scope.categories):
        return False
    # The whole call, and the user's own words for it alone: the request often says the
    # case the way the reply did ("our integration partner"), where the item's title and
    # address only add words of their own.
    texts = [facts.text()]
    if facts.request.strip() and facts.request.strip() != texts[0].strip():
        texts.append(facts.request)
    for text in texts:
        try:
            allowed = meaning(text, scope.allowed_text)
            margin = allowed - meaning(text, scope.back_text)
        except Exception:  # a model failure leaves the limit unmet: fail closed
            return False
        if margin >= MEANING_MARGIN and allowed >= MEANING_FLOOR:
            return True
    return False


def _named_limit(
    matched: str | None, scope: Scope, facts: CallFacts, meaning: Meaning | None
) -> tuple[bool, str]:
    """The verdict on a named limit: held in words (`matched`), held in meaning, or not."""
    if matched:
        return True, matched
    if _closer_to_allowed(scope, facts, meaning):
        return True, f"means {scope.allowed_text!r} rather than {scope.back_text!r}"
    return False, f"not {scope.text!r}"


def _capitalized(text: str) -> set[str]:
    """Stems of the capitalized words of a text (names, and words that open a sentence)."""
    return {stem(w.lower().removesuffix("'s")) for w in re.findall(r"\b[A-Z][\w']+", text)}


_OUTSIDE_ORG = re.compile(
    r"\b(?:outside(?: of)?|leaving|beyond) (?:the |our |this )?([\w'-]+(?: [\w'-]+)?)",
    re.IGNORECASE,
)
_ORGANISATIONS = frozenset(
    stem(w)
    for w in "hospital clinic practice company firm office school college university building "
    "department agency studio lab council club church charity trust team business".split()
)
# Addresses anyone can have: a contact there says nothing of an organisation.
_FREE_MAIL = re.compile(
    r"@(?:gmail|googlemail|outlook|hotmail|live|yahoo|icloud|me|aol|proton|protonmail|gmx|"
    r"mail|yandex|zoho)\.",
)


def _outside_verdict(scope: Scope, facts: CallFacts) -> tuple[bool | None, str]:
    """Is the recipient outside every organisation the scope names?

    Inside: the recipient's name, role or address names it, or its address is at the domain
    of a contact who does ("Karen Liu, Fieldnote CFO, karen@fieldnote.io" makes fieldnote.io
    Fieldnote's). Outside: the organisation's domain is known and the recipient is not at
    it, nor names it. Otherwise unknown."""
    recipient = " ".join(facts.recipients)
    contacts = [*facts.recipients, *facts.competing]
    mine = {d.lower() for d in re.findall(r"@([\w.-]+)", recipient)}
    verdict: bool | None = True
    for org in scope.outside:
        parts = set(org.split())
        domains = {
            d.lower()
            for text in contacts
            if _names_org(parts, text) and not _FREE_MAIL.search(text.lower())
            for d in re.findall(r"@([\w.-]+)", text)
        }
        if _names_org(parts, recipient) or mine & domains:
            return False, f"inside {org}"
        if not domains or not mine:
            verdict = None
    return verdict, (f"outside {', '.join(scope.outside)}" if verdict else "")


def _names_org(parts: set[str], text: str) -> bool:
    """Does the text (a name, a role, an address) name every word of the organisation?"""
    return parts <= {stem(w) for w in re.findall(r"[a-z0-9]+", text.lower())}


def _limited_amount(
    scope: Scope, facts: CallFacts, amount: float | None
) -> tuple[float | None, str]:
    """The amount the scope's limit is about, and what it is called in a reason.

    "extra": the call's price less the cheapest cheaper option among the items it was
    chosen from (the largest difference; unknown without a cheaper one). "new": the price
    of the new item among them (the chosen one's own when it is the new one)."""
    if scope.amount_of == "extra":
        cheaper = [a for a in facts.competing_amounts if amount is not None and a < amount]
        if amount is None or not cheaper:
            return None, "difference"
        return amount - min(cheaper), "extra"
    if scope.amount_of == "new":
        if _NEW_WORD.search(facts.entity_text.lower()):
            return amount, "new price"
        new = [
            a
            for text, a in zip(facts.competing, facts.competing_amounts, strict=False)
            if _NEW_WORD.search(text.lower())
        ]
        return (max(new) if new else None), "new price"
    return amount, "amount"


_NEW_WORD = re.compile(r"\bnew\b|\bbrand-new\b")


def match_scope(scope: Scope, facts: CallFacts, meaning: Meaning | None = None) -> ScopeMatch:
    """Compare a call with a scope: every stated constraint must hold.

    A named limit (a place, a kind of thing) holds when the call uses its words, or, given a
    `meaning` similarity, when the call is clearly closer to the side the user allowed than
    to the side they handed back. Excluded words found in the call always veto.
    """
    checks: list[tuple[bool | None, str]] = []
    amount = facts.amount if facts.amount is not None else _stated_amount(facts.request)
    amount, what = _limited_amount(scope, facts, amount)
    label = "" if what == "amount" else f"{what} "  # "extra $161, agreed: up to $300"
    if scope.max_amount is not None:
        if amount is None:
            cap = _money(scope.max_amount, facts.currency)
            checks.append((None, f"agreed: up to {cap}; the {what} is unknown"))
        else:
            ok = amount <= scope.max_amount + 1e-9
            cap = _money(scope.max_amount, facts.currency)
            checks.append((ok, f"{label}{_money(amount, facts.currency)}, agreed: up to {cap}"))
    if scope.min_amount is not None:
        if amount is None:
            if what != "amount":  # a limit on another price that cannot be read: unmet
                floor = _money(scope.min_amount, facts.currency)
                checks.append((None, f"agreed: over {floor}; the {what} is unknown"))
        else:
            floor = _money(scope.min_amount, facts.currency)
            shown = f"{label}{_money(amount, facts.currency)}"
            checks.append((amount >= scope.min_amount, f"{shown}, agreed: over {floor}"))
    if scope.max_quantity is not None and facts.quantity is not None:
        checks.append(
            (
                facts.quantity <= scope.max_quantity,
                f"{facts.quantity}, agreed: up to {scope.max_quantity}",
            )
        )
    # A call with no time of its own (sending "the practice plan - Tue Aug 25") is on the
    # days its thing names.
    named_days = _days_named(f"{facts.entity_text} {facts.request}")
    timing = len(checks)  # where the day and hour checks start
    if scope.weekdays:
        names = ", ".join(calendar.day_abbr[d] for d in scope.weekdays)
        if facts.when is None and named_days:
            ok = named_days <= set(scope.weekdays)
            shown = ", ".join(calendar.day_abbr[d] for d in sorted(named_days))
            checks.append((ok, f"{shown}, agreed: {names}"))
        elif facts.when is None:
            checks.append((None, f"agreed: {names}; the day is unknown"))
        else:
            day = calendar.day_abbr[facts.when.weekday()]
            checks.append((facts.when.weekday() in scope.weekdays, f"{day}, agreed: {names}"))
    if scope.time_after or scope.time_before:
        # A call with no time of its own: the clock time the request states ("sent Saturday
        # at 10:45pm"); none, on a day the call's thing names, is a thing of that day (the
        # "Tue" practice plan is a weeknight one).
        hhmm = facts.when.strftime("%H:%M") if facts.when else _stated_clock(facts.request)
        if hhmm is None and scope.weekdays and named_days:
            pass
        elif hhmm is None:
            checks.append((None, "the time is unknown"))
        else:
            ok = (not scope.time_after or hhmm >= scope.time_after) and (
                not scope.time_before or hhmm <= scope.time_before
            )
            window = f"{scope.time_after or ''}-{scope.time_before or ''}"
            checks.append((ok, f"{hhmm}, agreed: {window}"))
    if scope.days_or_hours and len(checks) - timing == 2:
        # "Nights and weekends": a Saturday morning or a Tuesday night will do.
        (on_day, day_diff), (in_hours, hours_diff) = checks[timing:]
        either: bool | None = (
            True if True in (on_day, in_hours) else (None if None in (on_day, in_hours) else False)
        )
        checks[timing:] = [(either, f"{day_diff}; or {hours_diff}")]
    if scope.until is not None:
        today = facts.today
        checks.append(
            (
                None if today is None else today <= scope.until,
                f"agreed until {scope.until.isoformat()}",
            )
        )
    text_stems = {stem(w) for w in words(facts.text())}

    def found(key: str) -> bool:
        if " " in key:  # a name of several words: all of them
            return all(found(part) for part in key.split())
        return (
            key in text_stems
            # an acronym's plural keeps its s through stemming: "GPs" is a GP
            or (len(key) <= 4 and key.endswith("s") and key[:-1] in text_stems)
            or bool(_expand({key}) & text_stems)
            or bool(KINDS.get(key, frozenset()) & text_stems)
        )

    # A recipient outside the organisation the user named is what they allowed; the kinds
    # beside it ("Partners, customers, that crowd") are examples of it, not further limits.
    outside: bool | None = None
    if scope.outside and facts.tool == "send":
        outside, said = _outside_verdict(scope, facts)
        if outside is not None:
            checks.append((outside, said))
    # Each kind of limit must hold on its own: "Kevin's parties" needs Kevin and a party.
    # Within one kind, any listed value will do ("for Maya and Jordan", "tops and pants").
    # "For banks, Skatteetaten, that sort": a name listed beside kinds is one more item of
    # the list, so the name or a kind will do.
    people_listed = bool(scope.people and scope.categories) and {
        p.lower() for p in scope.people
    } <= _listed_names(scope.allowed_text)
    people_hit = [p for p in scope.people if stem(p.lower()) in text_stems]
    if scope.people and not (people_listed and not people_hit) and outside is None:
        checks.append(
            (True, f"matches '{', '.join(people_hit)}'")
            if people_hit
            else (False, f"not {scope.text!r}")
        )
    if scope.places:
        hit = [p for p in scope.places if all(stem(w) in text_stems for w in words(p))]
        # A place is a name: a call elsewhere may mean much the same ("family here in
        # Auckland" and a cousin in Sydney), so only its words hold it.
        checks.append(_named_limit(f"in {', '.join(hit)}" if hit else None, scope, facts, None))
    people_and_places = {stem(w) for p in [*scope.people, *scope.places] for w in words(p)}
    categories = {c for c in scope.categories if c not in people_and_places}
    # "Official bodies like the Council or the Association": a named example of the kind
    # is of that kind.
    examples = {
        stem(n.lower())
        for m in _EXAMPLES_RE.finditer(scope.allowed_text)
        for n in _names(m.group(0))
    }
    if categories and (examples & text_stems or (people_listed and people_hit)):
        categories = set()
    if outside is not None:
        categories = set()
    if categories:
        hit = sorted(k for k in categories if found(k))
        # "For our own parish, go for it. Other parishes ... run them past me": a word both
        # sides use decides nothing when no other limit tells the two sides apart.
        # (What the handed-back side is outside of, it does not name: "outside the club".)
        kept = _OUTSIDE_RE.sub(" ", normalize(scope.back_text or ""))
        shared = _keys(kept) & set(hit)
        if hit and set(hit) <= shared and len(checks) == 0 and not scope.people:
            checks.append(
                (None, f"both what you allowed and what you kept name '{', '.join(hit)}'")
            )
        else:
            matched = f"matches '{', '.join(hit)}'" if hit else None
            checks.append(_named_limit(matched, scope, facts, meaning))
    channel = _channel_of(facts)
    media = [c for c in scope.channels if c in _MEDIA]
    if media and channel is not None:
        checks.append((channel in media, f"by {channel}, agreed: {', '.join(media)}"))
    # What is handed back beside "outside X" is what is inside X ("Inside the company it
    # depends"): a recipient outside it has none of it, whatever its role's words.
    if scope.excluded and outside is not True:
        bad = sorted(k for k in scope.excluded if found(k) or k == channel)
        # "Gary's own invitations, accept freely. When it comes from Head Office ... check
        # with me": Gary calling a meeting in an office is Gary's. When what the user allowed
        # is named in the call's words, a handed-back word in it too is weighed by meaning.
        named_allowed = any(ok is True and diff.startswith("matches") for ok, diff in checks)
        if bad and named_allowed and _closer_to_allowed(scope, facts, meaning, name_said=True):
            checks.append((True, f"means {scope.allowed_text!r} though it says {', '.join(bad)}"))
        elif bad:
            checks.append((False, f"excluded: {', '.join(bad)}"))
    if not checks:
        return ScopeMatch(None, f"cannot check the scope {scope.text!r}")
    inside: bool | None = True
    diffs = []
    for verdict, diff in checks:
        diffs.append(diff)
        if verdict is False:
            inside = False
        elif verdict is None and inside is True:
            inside = None
    return ScopeMatch(inside, "; ".join(diffs))
