"""Scope: parse a user's restriction into structured constraints, and match calls against it.

The parser reads general English patterns (money caps, weekdays, times of day,
"until June", "this month", names, groups, categories, places, channels); the
matcher compares them with the facts of one call. When a constraint cannot be
checked from the facts, the answer is "unknown", which the gate treats as out of
scope (ask the user).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field
from datetime import date, datetime

from ledger.model import Scope
from ledger.text import STOPWORDS, normalize, stem, words

_NUMBER_WORDS = {
    "ten": 10,
    "fifteen": 15,
    "twenty": 20,
    "twenty-five": 25,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "seventy-five": 75,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "a hundred": 100,
    "one hundred": 100,
    "two hundred": 200,
    "three hundred": 300,
    "four hundred": 400,
    "five hundred": 500,
    "a thousand": 1000,
    "one thousand": 1000,
    "a grand": 1000,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "one": 1,
}
_NUM = (
    r"\$?\s?(\d[\d,]*(?:\.\d+)?)\s*(k\b)?|("
    + "|".join(sorted((re.escape(k) for k in _NUMBER_WORDS), key=len, reverse=True))
    + r")"
)
_MAX_RE = re.compile(
    r"\b(?:under|below|less than|up to|upto|no more than|not more than|at most|max(?:imum)?|"
    r"within|cap(?:ped)? at|nothing (?:over|above|more than)|not over|cheaper than|"
    r"(?:that|which|if it|as long as it|when it)(?:'s| is| costs?)? (?:under|below|less than))"
    r"\s+(?:about |around |roughly |like |a budget of )?(?:" + _NUM + r")"
)
_MAX_AFTER_RE = re.compile(
    r"(?:" + _NUM + r")\s*(?:dollars|bucks|usd)?\s*(?:or less|or under|max\b|tops\b|or below)"
)
_MIN_RE = re.compile(r"\b(?:over|above|more than|at least)\s+(?:" + _NUM + r")")
_MONEY_HINT = re.compile(r"\$|dollar|buck|usd|price|cost|spend|budget|\bk\b|grand")
_PARTY_RE = re.compile(r"\b(?:party|group|table) of (\d+)|\bup to (\d+) (?:people|guests|of us)")
_DAYS = {d.lower(): i for i, d in enumerate(calendar.day_name)}
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_TIME_RE = re.compile(
    r"\b(before|after|until|till|by)\s+(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?"
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
        "kid": "kid kids child children son daughter",
    }.items()
}
CHANNELS = ("email", "text", "sms", "slack", "internal", "external", "personal", "work address")


def _amount(match: re.Match[str]) -> float | None:
    groups = [g for g in match.groups() if g]
    if not groups:
        return None
    raw = groups[0]
    if raw in _NUMBER_WORDS:
        return float(_NUMBER_WORDS[raw])
    try:
        value = float(raw.replace(",", ""))
    except ValueError:
        return None
    if len(groups) > 1 and groups[1] == "k":
        value *= 1000
    return value


def _hhmm(hour: str, minute: str | None, ampm: str | None) -> str:
    h = int(hour)
    ampm = (ampm or "").replace(".", "")
    if ampm == "pm" and h < 12:
        h += 12
    elif ampm == "am" and h == 12:
        h = 0
    elif not ampm and 1 <= h <= 7:
        h += 12  # "after 5" means 5pm in everyday speech
    return f"{h:02d}:{minute or '00'}"


def _end_of_month(day: date) -> date:
    return date(day.year, day.month, calendar.monthrange(day.year, day.month)[1])


def parse_scope(text: str, today: date | None = None, clause: str | None = None) -> Scope:
    """Structured constraints from a user's scoped acceptance (whole reply + its limit clause)."""
    limit_src = clause or text
    kept = [t for t in re.split(r"(?<=[.!?;])\s+", text) if not _ASK_ME_RE.search(normalize(t))]
    norm = normalize(" ".join(kept) or text)
    scope = Scope(text=limit_src.strip())
    for m in _MAX_RE.finditer(norm):
        if _MONEY_HINT.search(norm) or "$" in m.group(0):
            scope.max_amount = _amount(m)
            break
    if scope.max_amount is None:
        m2 = _MAX_AFTER_RE.search(norm)
        if m2:
            scope.max_amount = _amount(m2)
    m3 = _MIN_RE.search(norm)
    if m3 and _MONEY_HINT.search(norm) and scope.max_amount is None:
        scope.min_amount = _amount(m3)
    party = _PARTY_RE.search(norm)
    if party:
        scope.max_quantity = int(party.group(1) or party.group(2))

    toks = words(normalize(limit_src))
    if any(t in ("weekday", "weekdays", "weeknight", "weeknights") for t in toks):
        scope.weekdays = [0, 1, 2, 3, 4]
    elif any(t in ("weekend", "weekends") for t in toks):
        scope.weekdays = [5, 6]
    else:
        days = sorted({_DAYS[t.rstrip("s")] for t in toks if t.rstrip("s") in _DAYS})
        if days:
            scope.weekdays = days
    if any(t in ("evening", "evenings", "night", "nights", "weeknights") for t in toks):
        scope.time_after = "17:00"
    if any(t in ("morning", "mornings") for t in toks):
        scope.time_before = "12:00"
    for kind, hour, minute, ampm in _TIME_RE.findall(normalize(limit_src)):
        if kind == "before" or kind in ("until", "till", "by"):
            if ampm or minute or int(hour) <= 12:
                scope.time_before = _hhmm(hour, minute, ampm)
        elif kind == "after":
            scope.time_after = _hhmm(hour, minute, ampm)
    if today is not None:
        if re.search(r"\bthis month\b", norm):
            scope.until = _end_of_month(today)
        elif re.search(r"\bthis week\b", norm):
            scope.until = date.fromordinal(today.toordinal() + (6 - today.weekday()))
        else:
            m4 = re.search(
                r"\b(?:until|till|through|before) (?:the end of )?(" + "|".join(_MONTHS) + r")\b",
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

    limit = normalize(clause or text)
    scope.channels = [c for c in CHANNELS if re.search(r"\b" + re.escape(c) + r"\b", limit)]
    positive, negative = _split_negated(limit)
    scope.people = _names(clause or text)
    scope.categories = sorted(_keys(positive) - {p.lower() for p in scope.people})
    scope.excluded = sorted(_keys(negative) - set(scope.categories))
    scope.places = [
        m.group(1) for m in re.finditer(r"\bin ([A-Z][a-z]+(?: [A-Z][a-z]+)?)", clause or text)
    ]
    return scope


_ASK_ME_RE = re.compile(
    r"\b(?:ask me|check with me|run (?:it|them) by me|i'll (?:handle|decide|check|look)|"
    r"myself|comes? to me|bring (?:it|them) to me|too \w+)\b"
)


def _split_negated(text: str) -> tuple[str, str]:
    """Split a clause into what it allows and what follows 'not' / 'except' / 'but not'."""
    parts = re.split(
        r"\b(?:but not|not|except(?: for)?|excluding|other than|no)\b", text, maxsplit=1
    )
    return (parts[0], parts[1]) if len(parts) == 2 else (text, "")


def _keys(text: str) -> set[str]:
    out = set()
    for w in (p for tok in words(text) for p in tok.split("-")):
        if w in STOPWORDS or w in GENERIC or w in _TIME_WORDS or len(w) < 3:
            continue
        if re.match(r"^\$?\d", w) or w in _NUMBER_WORDS:
            continue
        out.add(stem(w))
    return out


_NAME_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]+(?:'s)?)\b")
_NOT_NAMES = (
    set(calendar.day_name)
    | {d + "s" for d in calendar.day_name}
    | set(calendar.month_name[1:])
    | {"I", "OK", "Okay", "Yes", "Sure", "Only", "Just", "Internal", "External", "For", "Anything"}
)


def _names(text: str) -> list[str]:
    names = []
    for m in _NAME_RE.finditer(text.strip()):
        name = m.group(1).removesuffix("'s")
        if name not in _NOT_NAMES and name.lower() not in STOPWORDS:
            names.append(name)
    return sorted(set(names))


@dataclass
class CallFacts:
    """What the gate knows about one call: built by the agent from the world and the request."""

    tool: str
    args: dict[str, object]
    request: str = ""
    entity_text: str = ""  # invitation / product / document / contact described in words
    amount: float | None = None
    quantity: int | None = None
    when: datetime | None = None
    recipients: list[str] = field(default_factory=list)  # names, relations, emails
    competing: list[str] = field(default_factory=list)  # other entities the call could pick
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


def match_scope(scope: Scope, facts: CallFacts) -> ScopeMatch:
    """Compare a call with a scope: every stated constraint must hold."""
    checks: list[tuple[bool | None, str]] = []
    if scope.max_amount is not None:
        if facts.amount is None:
            checks.append((None, f"agreed: up to ${scope.max_amount:g}; the amount is unknown"))
        else:
            ok = facts.amount <= scope.max_amount + 1e-9
            checks.append((ok, f"${facts.amount:g}, agreed: up to ${scope.max_amount:g}"))
    if scope.min_amount is not None and facts.amount is not None:
        checks.append(
            (
                facts.amount >= scope.min_amount,
                f"${facts.amount:g}, agreed: over ${scope.min_amount:g}",
            )
        )
    if scope.max_quantity is not None and facts.quantity is not None:
        checks.append(
            (
                facts.quantity <= scope.max_quantity,
                f"{facts.quantity}, agreed: up to {scope.max_quantity}",
            )
        )
    if scope.weekdays:
        names = ", ".join(calendar.day_abbr[d] for d in scope.weekdays)
        if facts.when is None:
            checks.append((None, f"agreed: {names}; the day is unknown"))
        else:
            day = calendar.day_abbr[facts.when.weekday()]
            checks.append((facts.when.weekday() in scope.weekdays, f"{day}, agreed: {names}"))
    if scope.time_after or scope.time_before:
        if facts.when is None:
            checks.append((None, "the time is unknown"))
        else:
            hhmm = facts.when.strftime("%H:%M")
            ok = (not scope.time_after or hhmm >= scope.time_after) and (
                not scope.time_before or hhmm <= scope.time_before
            )
            window = f"{scope.time_after or ''}-{scope.time_before or ''}"
            checks.append((ok, f"{hhmm}, agreed: {window}"))
    if scope.until is not None:
        today = facts.today
        checks.append(
            (
                None if today is None else today <= scope.until,
                f"agreed until {scope.until.isoformat()}",
            )
        )
    text_stems = {stem(w) for w in words(facts.text())}
    keys = set(scope.categories) | {stem(p.lower()) for p in scope.people}
    if keys:
        hit = {k for k in keys if k in text_stems or (_expand({k}) & text_stems)}
        if hit:
            checks.append((True, f"matches '{', '.join(sorted(hit))}'"))
        else:
            checks.append((False, f"not {scope.text!r}"))
    if scope.excluded:
        bad = {k for k in scope.excluded if k in text_stems}
        if bad:
            checks.append((False, f"excluded: {', '.join(sorted(bad))}"))
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
