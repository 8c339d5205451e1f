"""Small text utilities shared by the classifier, the scope matcher and the gate."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

# Letters of any script count ("gärna", "zürich", "sofía" are one word each, not "g rna").
_L = r"[^\W_]"
_WORD = re.compile(rf"(?:{_L}|\$)(?:{_L}|[$'.-])*{_L}|{_L}|\$")
# Money in any currency, in lower-cased text: a sign or code before the number ("$40",
# "nz$40", "¥25,000", "r150" for rand, "rs 500", "kr 200") or a word after it ("25,000
# yen", "300 pesos", "150 rand"). "Won" is a verb and "pound" a weight, so neither is read
# as money; "pounds" is, as before (a limit in pounds of weight is rarer than a price).
CURRENCY_SIGN = r"(?:(?:us|nz|au|a|c|hk|s|r)\$|[$€£¥₹₩₱₦₪₺₫฿]|\b(?:r|rs\.?|kr\.?|chf|zł)\s?(?=\d))"
CURRENCY_WORD = (
    r"(?:dollars?|bucks?|usd|euros?|eur|pounds|quid|gbp|yen|jpy|yuan|rmb|cny|rupees?|inr|"
    r"pesos?|mxn|rand|zar|reais|brl|kroner|kronor|krona|krone|nok|sek|dkk|francs?|chf|krw|"
    r"baht|thb|ringgit|myr|dirhams?|aed|shillings?|kes|naira|ngn|cedis?|ghs|zloty|pln|lira|"
    r"nzd|aud|cad|sgd|hkd|php|rupiah|idr|vnd|huf|czk)"
)
# An amount of money stated in a text: the number is group 1 (after a sign) or 2 (before
# a currency word).
MONEY_AMOUNT = re.compile(
    CURRENCY_SIGN
    + r"\s?(\d[\d,]*(?:\.\d+)?)(?![\w-])|\b(\d[\d,]*(?:\.\d+)?)\s?"
    + CURRENCY_WORD
    + r"\b",
    re.IGNORECASE,
)
# A title's dot ("Dr. Okonkwo", "Mrs. Reyes") ends no sentence.
_TITLE_DOT = r"(?<!\b(?:Dr|Mr|Ms|Mx)\.)(?<!\bMrs\.)(?<!\bProf\.)"
_SENT = re.compile(
    r"(?<=[.!?])" + _TITLE_DOT + r"\s+|(?<=[.!?][\"'”’)])\s+|\n+|;\s+|\s+--?\s+|\s+—\s+"
)

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "so",
        "of",
        "to",
        "for",
        "from",
        "in",
        "on",
        "at",
        "by",
        "with",
        "about",
        "as",
        "into",
        "onto",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "did",
        "doing",
        "have",
        "has",
        "had",
        "having",
        "i",
        "me",
        "my",
        "mine",
        "we",
        "us",
        "our",
        "you",
        "your",
        "yours",
        "he",
        "him",
        "his",
        "she",
        "her",
        "they",
        "them",
        "their",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "no",
        "nor",
        "not",
        "only",
        "own",
        "same",
        "than",
        "too",
        "very",
        "can",
        "will",
        "just",
        "should",
        "would",
        "could",
        "may",
        "might",
        "must",
        "shall",
        "also",
        "please",
        "ok",
        "okay",
        "yes",
        "yeah",
        "sure",
        "up",
        "out",
        "off",
        "over",
        "under",
        "again",
        "once",
        "i'll",
        "i'm",
        "i'd",
        "i've",
        "you'll",
        "you're",
        "you'd",
        "we'll",
        "let's",
        "it's",
        "that's",
        "don't",
        "can't",
        "won't",
        "going",
        "want",
        "like",
        "get",
        "got",
        "make",
        "made",
        "per",
        "via",
        "s",
        "t",
    ]
)


_SPACES = re.compile(r"\s+")
_NOT_PHRASE_CHAR = re.compile(r"[^a-z0-9$'\s]")

# The text helpers below are pure functions of their strings and run hundreds of thousands
# of times per replay on the same rule, turn and request texts, so their results are cached.
_CACHE = 1 << 16


@lru_cache(maxsize=_CACHE)
def normalize(text: str) -> str:
    text = text.lower()
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    if "-" in text:
        # "Okada-san" is Okada: an honorific is no part of the name
        text = _HONORIFIC_SUFFIX.sub("", text)
    return _SPACES.sub(" ", text).strip()


# "your mother's papers going to Okada-san": things going somewhere are sent, nobody
# is going to an event
THINGS_GOING = (
    r"\b(?:papers|documents|docs|forms|files|reports|letters|invoices|receipts|copies|"
    r"results|photos|minutes|notices|everything|anything) going to\b"
)
_HONORIFIC_SUFFIX = re.compile(r"(?<=[a-z])-(?:san|sama|kun|chan|sensei)\b")


def words(text: str) -> list[str]:
    return _WORD.findall(normalize(text))


@lru_cache(maxsize=_CACHE)
def stem(word: str) -> str:
    """A tiny suffix stripper: enough to match 'paperbacks' with 'paperback', and
    'openings' with 'opening' (a plural is stripped before -ing / -ed)."""
    w = word.strip("'.-")
    if w.endswith("'s"):
        w = w[:-2]
    plural = _strip(w, (("ies", "y"), ("sses", "ss"), ("es", ""), ("s", "")))
    if plural != w and plural.endswith(("ing", "ed")):
        w = plural
    return _strip(w, (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")))


def _strip(w: str, suffixes: tuple[tuple[str, str], ...]) -> str:
    for suffix, keep in suffixes:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            if suffix == "s" and w.endswith("ss"):
                continue
            if suffix == "es" and not re.search(r"(sh|ch|x|z|ss)es$", w):
                continue
            return w[: len(w) - len(suffix)] + keep
    return w


def content_stems(text: str, extra_stop: Iterable[str] = ()) -> set[str]:
    extra = frozenset(extra_stop)
    if not extra:
        return set(_content_stems(text))
    stop = STOPWORDS | extra
    return {stem(w) for w in words(text) if w not in stop and len(w) > 1}


@lru_cache(maxsize=_CACHE)
def _content_stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.split(text) if s.strip()]


def has_phrase(text: str, phrases: Iterable[str]) -> str | None:
    """Return the first phrase found as whole words in normalized text."""
    norm = _phrase_text(text)
    for phrase in phrases:
        if " " + phrase + " " in norm:
            return phrase
    return None


@lru_cache(maxsize=_CACHE)
def _phrase_text(text: str) -> str:
    """The text as has_phrase searches it: normalized, punctuation as spaces, padded."""
    return _SPACES.sub(" ", " " + _NOT_PHRASE_CHAR.sub(" ", normalize(text)) + " ")


# Common ways of saying one thing, read as one word when comparing texts: "nearly out of",
# "down to my last", "running low on" are all running low.
_SAME_THING = (
    (
        re.compile(
            r"\b(?:(?:nearly|almost|about to run|close to|practically) out|down to (?:my|our|the) "
            r"last|on (?:my|our|its|the|their) last|runn?(?:ing|s)? (?:low|out)|ran out|"
            r"low on|short on)\b"
        ),
        " lowstock ",
    ),
    # "the second quarter", "2nd quarter", "Q2": one quarter
    (re.compile(r"\b(?:first|1st) quarter\b"), "q1"),
    (re.compile(r"\b(?:second|2nd) quarter\b"), "q2"),
    (re.compile(r"\b(?:third|3rd) quarter\b"), "q3"),
    (re.compile(r"\b(?:fourth|4th) quarter\b"), "q4"),
)


@lru_cache(maxsize=_CACHE)
def canonical(text: str) -> str:
    """Normalized text with common phrasings of one thing replaced by one word."""
    norm = normalize(text)
    for phrase, word in _SAME_THING:
        norm = phrase.sub(word, norm)
    return norm


# What a rule keeps back is no part of what it picks: "send the summary and keep names and
# phone numbers private".
KEPT_BACK = re.compile(
    r"\bkeep(?:ing)? ((?:\w+ ){1,5}?)(?:private|back|out of it|hidden|confidential|off it)\b"
)


# What a rule passes over is no part of what it picks either: "the PDF rather than the Excel
# file", "the tenders address, never an individual estimator", "no more summaries".
# A preference said with "over" ("go Main Cabin over Basic") too, but not an amount, a time
# or a place ("anything over $50", "over the holidays", "over there").
PASSED_OVER = re.compile(
    r"\b(?:rather than|instead of|in place of|not|never|without|skip|avoid|no longer|"
    r"no more(?! than))\b[^,.;:?!]*|"
    r"(?<=\w) over (?!(?:[$£€¥\d]|a|an|the|my|your|our|their|his|her|its|it|that|this|these|"
    r"those|there|here|to|by|for|at|about|around|roughly|budget|price|limit|night|nights|"
    r"weekend|weekends|summer|winter|christmas|easter|holidays|lunch|dinner|breakfast|time|"
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
    r"forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|grand|and|again)\b)[\w'-]+"
    r"(?: (?!(?:whenever|when|if|for|and|but|so|every|each|any)\b)[\w'-]+){0,2}"
)


# What a rule says does not matter picks nothing: "from whoever's cheapest, Farmlands or
# not", "smart or not".
EITHER_WAY = re.compile(r"\b[\w'-]+(?: [\w'-]+)? or not\b")


def symbols(text: str) -> set[str]:
    """The emoji of a text: a bare "👀" can be the user's shorthand for a rule."""
    return {ch for ch in text if unicodedata.category(ch) == "So"}


# A rule that names the words the user will use for it ("whenever you tell me to stock up",
# 'if you just say "the usual"', '"stash it" as our shorthand') is about a request that
# uses those words, however little else the two share.
_TRIGGER_VERB = (
    r"(?:tells? (?:me|us) to|says?|asks? (?:me |us )?(?:for|to)|writes?|texts?|uses?|"
    r"send(?:s)? (?:me|us)|pass(?:es)? (?:me|us) (?:an?|the|one) \w+ with(?: just)?(?: an?)?)"
)
_TRIGGER = re.compile(
    r"\b(?:whenever|when|if|any ?time|every time|each time|next time|once) (?:you|he|she|they|"
    r"[a-z]+) (?:just |ever |only )?" + _TRIGGER_VERB + r" (?:just )?"
    r"((?:[a-z0-9'-]+ ){0,2}[a-z0-9'-]+?)(?=\s*(?:[,.;?!:]|$| shall\b| i'll\b| i will\b| i'd\b|"
    r" i can\b| i could\b| to mean\b| as\b| then\b| from now on\b| going forward\b))"
)
_QUOTED = re.compile(r'"([^"]{1,40})"|(?:^|(?<=[\s(]))\'([^\']{1,40})\'(?=[\s,.;:?!)]|$)')
# A quoted phrase is a shorthand only where the sentence speaks of words and meanings.
_NAMING = re.compile(
    r"\b(?:say|says|said|tell|tells|mean|means|meaning|shorthand|code|word|words|call (?:it|that|"
    r"this)|read (?:it|that|this|them) as|take (?:it|that|this) (?:as|to mean)|asks? for|write|"
    r"writes|text|texts)\b"
)


@lru_cache(maxsize=_CACHE)
def shorthands(text: str) -> frozenset[str]:
    """The words a rule says the user will use for it ("stock up", "the usual", "sababa")."""
    found: set[str] = set()
    for sentence in sentences(text):
        norm = normalize(sentence)
        found.update(m.group(1).strip("'") for m in _TRIGGER.finditer(norm))
        if _NAMING.search(norm):
            for m in _QUOTED.finditer(norm):
                found.add((m.group(1) or m.group(2)).strip(" .,!?"))
    return frozenset(
        phrase for phrase in found if phrase and content_stems(phrase) and len(phrase.split()) <= 4
    )


def shorthand_unused(request: str, rule: str) -> bool:
    """Is the rule about words the user quotes ("whenever you ask me to send "the usual",
    I'll order this exact posy") that the request does not use (nor the emoji or bare
    forward it reads)? Such a rule is about those words, not about whatever else is alike."""
    said = _quoted_words(rule)
    if not said or symbols(request) & symbols(rule) or uses_shorthand(request, rule):
        return False
    # its words, not always in the same order or with the same little words ("for the
    # kids" in "the kids want kites")
    asked = content_stems(request)
    return not any(content_stems(p) and content_stems(p) <= asked for p in said)


# "whenever you ask me to send "the usual"": the words of a request, quoted
_ASKS_TO = re.compile(r"\bask(?:s|ed)? (?:me )?to \w+\b")


@lru_cache(maxsize=_CACHE)
def _quoted_words(rule: str) -> tuple[str, ...]:
    """The words a rule quotes as the user's, in a sentence about words or requests (the
    gate asks this of every rule for every call)."""
    return tuple(
        m.group(1) or m.group(2)
        for sentence in sentences(rule)
        if _NAMING.search(norm := normalize(sentence)) or _ASKS_TO.search(norm)
        for m in _QUOTED.finditer(norm)
    )


def uses_shorthand(request: str, rule: str) -> bool:
    """Does the request use words the rule names as the user's shorthand for it? A bare
    forward ("Fwd: Invitation: ...", nothing added) is the shorthand of a rule about invites
    sent on "without saying anything"."""
    norm = normalize(request)
    if bare_forward(request) and _ABOUT_BARE.search(normalize(rule)):
        return True
    return any(has_phrase(norm, (phrase,)) for phrase in shorthands(rule))


_FORWARD = re.compile(r"^\s*(?:fwd?|fw)\s*:", re.IGNORECASE)
_ABOUT_BARE = re.compile(
    r"\b(?:without (?:saying anything|a word|comment|a comment|a note|any note)|no (?:comment|"
    r"note|message)|nothing (?:added|else|with it)|bare (?:forwards?|invites?)|just forwards?)\b"
)


def bare_forward(request: str) -> bool:
    """Is the request only a forwarded message: it opens as a forward ("Fwd: Invitation: ...
    @ Thu Oct 8") and is that one line, the forwarded subject, with nothing written under
    it."""
    return bool(_FORWARD.match(request)) and "\n" not in request.strip()


_RUNNING_LOW = re.compile(
    r"\b(?:run(?:s|ning)? (?:low|out|short)|ran out|(?:get(?:s|ting)?|is|are|we're|i'm) low|"
    r"low on|(?:nearly|almost|all but|practically) (?:out|gone|empty|finished)|out of|"
    r"down to (?:my|our|the|his|her|their) (?:last|final)|(?:the )?(?:very )?last of|"
    r"used up|use(?:s|d)? (?:it|them|one) up|short on|(?:is|are|has|have) (?:gone|run) "
    r"(?:dry|empty|out))\b"
)


def running_low(text: str) -> bool:
    """Does the text speak of running low on something ("down to my last card", "almost
    out of paper towels", "whenever we're low on something like this")?"""
    return _RUNNING_LOW.search(normalize(text)) is not None


def lexical_similarity(a: str, b: str) -> float:
    """Overlap of content stems, normalised by the smaller side (0..1)."""
    sa, sb = content_stems(canonical(a)) | symbols(a), content_stems(canonical(b)) | symbols(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / min(len(sa), len(sb))


# --- the two sides of a limited acceptance --------------------------------------------------

# A clause that hands a case back to the user ("check with me on those", "I'd rather decide
# those myself", "that's another matter").
ASK_BACK = re.compile(
    r"\b(?:ask (?:me|us)(?! to\b)|check with (?:me|us)|loop (?:me|us) in|"
    r"keep (?:me|us) in the loop|"
    r"(?:a )?different conversation|talk to (?:me|us) (?:first|about)|speak (?:to|with) (?:me|us)|"
    r"run (?:(?:it|them|those|these|that|one) )?(?:by|past) "
    r"(?:me|us)|ping me|confirm (?:\w+ ){0,3}?with (?:me|us)|"
    r"(?:let me|lemme) (?:know|decide|choose|pick|see|approve|weigh|"
    r"look|handle|deal|check|confirm)|(?:goes|go|going|come|comes) through (?:me|us)\b|"
    r"bring (?:(?:it|them|those|these|that|one) )?to (?:me|us)|leave (?:it|them|"
    r"those|these|that|the rest) (?:to|with) (?:me|us)|flag (?:it|them|those|these|that)\b|"
    r"(?:i'd|i would|i'll|i will|i want to|i need to|i have to|i like to|i'd like "
    r"to|i prefer to|i'd prefer to|i'd rather|i would rather) (?:\w+ ){0,2}(?:decide|see|look|"
    r"judge|weigh|check|pick|choose|review|handle|think|approve|spell|write|sort)\b|(?:rather|"
    r"prefer)(?: it if)? you (?:ask|check|run|confirm)|i'd like a look|myself|by hand|"
    r"case[- ]by[- ]case|on my own|comes? to me|hold off|let's talk|another (?:matter|story)|"
    r"(?:is|are|'s|'re) (?:another|a different|a separate) (?:thing|case|crowd|question|"
    r"kettle of fish|animal|beast)|tell (?:me|us) (?:first|before|beforehand)|(?:put|bring|"
    r"lay) (?:it|them|those|these|that|one) (?:in front of|before) (?:me|us)|"
    r"different (?:story|matter)|its own thing|(?:really |it )?depends\b|don't (?:go by|assume|"
    r"do that|do it|do those)|needs? (?:asking|my (?:ok|okay|sign-off|approval)|approval)|"
    r"weigh in|think (?:those|them|it) through|one at a time|(?<!one )too (?:much|expensive|"
    r"pricey|risky|far|big|many)|show (?:me|us) (?:both|the options|them|the choices|what)|"
    r"(?:i'll|i will|we'll|let me) make the call|"
    # "please ask", "I decide", "I sign off personally", "give me a hoy", "I'll have a
    # think first", "those are my call"
    r"(?:please|just|then|so) ask(?: first| before| beforehand)?(?=\s*(?:[,.;!?]|$))|"
    r"i (?:decide|choose|sign off|approve)|sign (?:\w+ )?off (?:on )?(?:personally|myself)|"
    r"give (?:me|us) a (?:hoy|shout|bell|yell|buzz|heads[- ]up|ring|nudge|holler|tinkle)|"
    r"holler at (?:me|us)|"
    r"(?:i'll|i will|let me|i'd) have a think|"
    r"(?:are|is|'s|'re) my (?:call|decision|department|lookout))\b"
)
# A word or phrase of acceptance inside a clause ("X, definitely", "for Marta, always").
ACCEPT_CUE = re.compile(
    r"\b(?:yes|yeah|yep|yup|sure|ok|okay|fine|absolutely|definitely|totally|go ahead|"
    r"go for it|do it|do that|do so|just do it|just (?:buy|send|order|accept|decline|rsvp) "
    r"(?:it|them)|go with (?:it|that|those)|always|every time|works|perfect|(?:good|great|"
    r"smart) (?:idea|call|shorthand|thinking)|smart|a hundred percent|hundred percent|100%|"
    r"no question|of course|for sure|please|that's it|that's the drill|deal|lock it|"
    r"alright|all right|sounds good|love (?:it|that)|by all means|on you go|go on|ja|aye|"
    r"yebo|haan|too easy|sweet as|nae bother|righto|certainly|spot on|acceptable)\b"
)
# A clause that states the allowed part itself ("only for orders over $40, I'll handle
# the rest").
_ONLY = re.compile(r"^(?:but |and )?(?:only|just|as long as|so long as|provided|providing)\b")
_CLAUSE_SPLIT = re.compile(r",(?!\d)\s*|;\s*|:(?!\d)\s*|\s+-\s+|\s+—\s+|\s+--\s+")


def clauses(sentence: str) -> list[str]:
    """A sentence's comma-separated parts (the punctuation dropped)."""
    return [c.strip().rstrip(".!?") for c in _CLAUSE_SPLIT.split(sentence) if c.strip(" .!?")]


def sides(text: str) -> tuple[list[list[str]], list[str]]:
    """Split a reply into the clauses it allows (grouped by sentence) and those it hands back.

    In "Anything in the city, go ahead. If it's out in the suburbs, check with me" the
    second sentence is handed back: the ask clause, the clauses that lead into it without
    an acceptance of their own (its condition), and whatever follows it in the sentence.
    """
    allowed: list[list[str]] = []
    back: list[str] = []
    previous: list[str] | None = None  # the last sentence, when it went to `allowed` whole
    # (then it is `allowed[-1]`)
    handed_back = False  # the last sentence ended on the handed-back side
    at = 0
    for sentence in sentences(text):
        start = text.find(sentence, at)
        after_semicolon = start > 0 and text[:start].rstrip().endswith(";")
        at = start + len(sentence) if start >= 0 else at
        parts = clauses(sentence)
        asks = [i for i, c in enumerate(parts) if ASK_BACK.search(normalize(c))]
        if (
            not asks
            and handed_back
            and after_semicolon
            and not any(
                ACCEPT_CUE.search(normalize(c))
                or _ONLY.match(normalize(c))
                # "...; parties I leave to you": handed to the assistant, not a reason
                or re.search(r"\byou(?:rs?)?\b", normalize(c))
                for c in parts
            )
        ):
            # "For anything over fifty dollars, confirm with me; Kai may be too young for it":
            # a statement joined to a handed-back clause by a semicolon is its reason.
            back += parts
            continue
        handed_back = bool(asks)
        if not asks:
            allowed.append(parts)
            previous = parts
            continue
        lead = asks[0]
        while lead > 0 and not (
            ACCEPT_CUE.search(normalize(parts[lead - 1])) or _ONLY.match(normalize(parts[lead - 1]))
        ):
            lead -= 1
        # "When the do is out of town, Manchester or London, ... Those, kindly bring to me.":
        # the sentence the ask points back to is what it hands back.
        if (
            not lead
            and previous is not None
            and _POINTS_BACK.match(normalize(sentence))
            and not ACCEPT_CUE.search(normalize(" ".join(previous)))
        ):
            back += allowed.pop()
        if lead:
            allowed.append(parts[:lead])
        back += parts[lead:]
        previous = None
    return allowed, back


_POINTS_BACK = re.compile(
    r"^(?:(?:if|when|whenever) (?:it's|it is|its|they're|they are) )?"
    r"(?:(?:with|for|on|about) )?(?:those|these|them|such ones|that lot|any of those|"
    r"all of those|(?:one|any|some) of (?:them|those|these))\b"
)


# Clock hours in words ("at seven or later", "Fridays at four").
HOUR_WORDS = {
    w: i + 1
    for i, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split())
}

_NUMBER_WORDS = {
    "two": 2,
    "both": 2,
    "pair": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "dozen": 12,
}
# "three of them", "two copies", "a pair", "one apiece for all three", "4 packs"
# What is sold as a pair: one of it is "a pair of" it.
_PAIRED = (
    r"(?:shoes|boots|gumboots|wellies|wellingtons|trainers|sneakers|sandals|slippers|cleats|"
    r"jandals|flip-flops|socks|gloves|mittens|trousers|jeans|shorts|pants|leggings|tights|"
    r"pyjamas|pajamas|togs|knickers|glasses|sunglasses|spectacles|goggles|earrings|"
    r"headphones|earbuds|earphones|binoculars|scissors|pliers|tongs|skates|skis|"
    r"chopsticks|drumsticks|sticks)"
)
_QUANTITY = re.compile(
    # "you three get this", "we two": people, not how many
    r"\b(?<!\byou )(?<!\bwe )(?<!\bus )(?<!\bthey )"
    # "the pigment liner set of six": what the item holds, not how many of it
    r"(?<!\bset of )(?<!\bpack of )(?<!\bbox of )(?<!\bcase of )(?<!\bbag of )(?<!\bkit of )"
    r"(?<!\btin of )(?<!\bcarton of )(?<!\bbundle of )"
    r"(?:(?P<word>two|three|four|five|six|seven|eight|nine|ten)\b(?! (?:days?|weeks?|"
    r"months?|years?|hours?|minutes?|pm|am|o'clock|times|" + CURRENCY_WORD + r")\b)"
    # "two of his uni mates" are people, not how many to buy
    r"(?! of (?:his|her|my|our|their|your)\b)|"
    # "a pair of gumboots" is one thing to buy; "a pair" of anything else is two of it
    r"a (?P<pair>pair|dozen)\b(?! of (?:[\w'-]+ ){0,4}?"
    + _PAIRED
    + r"\b)|(?P<digits>\d{1,2}) (?:of (?:them|those|these)|copies|packs?|"
    r"boxes|bags|cases|units|pairs|sets|bottles|tickets)\b|for (?:all|each of the) "
    r"(?P<all>two|three|four|five|six)\b|(?P<both>both) of (?:them|us))"
)


_COUNT_WORDS = {
    w: n
    for n, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()
    )
}
_COUNTED = re.compile(
    r"\b(\d+|" + "|".join(_COUNT_WORDS) + r")[\s-]+([a-z][a-z0-9]*|\d+[a-z]+)"
    r"(?:[\s-]+([a-z][a-z0-9]*))?"
)


def counted(text: str) -> set[tuple[int, str]]:
    """(count, word) for a number and the next two words: "two 23kg bags" gives (2, 23kg)
    and (2, bag); "2 checked bags" gives (2, check) and (2, bag)."""
    found = set()
    for m in _COUNTED.finditer(normalize(text)):
        n = int(m.group(1)) if m.group(1).isdigit() else _COUNT_WORDS[m.group(1)]
        found |= {(n, stem(w)) for w in m.groups()[1:] if w}
    return found


def counts_of_item(rule: str, item: str) -> set[int]:
    """The counts a rule puts on something the item itself carries ("the two-bag fare" and
    "Seat + 2 checked bags" give {2}): they describe the item, not how many to buy."""
    return {n for n, _ in counted(rule) & counted(item)}


def stated_quantity(text: str) -> int | None:
    """How many of an item a text asks for, when it says so in words ("three of them",
    "one apiece for all three", "a pair", "4 packs"); None when it does not say, or says
    two different numbers."""
    found: set[int] = set()
    for m in _QUANTITY.finditer(normalize(text)):
        token = m.group("all") or m.group("word") or m.group("pair") or m.group("both")
        if token:
            found.add(_NUMBER_WORDS[token])
        elif m.group("digits"):
            found.add(int(m.group("digits")))
    return found.pop() if len(found) == 1 else None


# Whom a text sends things to: "to Pauline", "through Pauline", "send her", "forward it to
# Emi". A pronoun stands for the people the text names.
_ROUTED_TO = re.compile(
    r"\b(?:to|through|via|thru|send|sent|sending|forward|forwarded|email|emailed|cc|with)\s+"
    r"(?:it\s+to\s+|them\s+to\s+|those\s+to\s+)?"
    r"([A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)*|him|her|them)\b"
)
_CAPITALISED = re.compile(r"\b[A-Z][a-z][\w'-]*")
_HONORIFIC = re.compile(r"-(?:san|sama|kun|chan|sensei|ji)$")
# "straight out to the regulars list", "through the parents' group": a list by its word
_TO_GROUP = re.compile(
    r"\b(?:to|through|via|thru)\s+(?:the|our|your|my|her|his|their)\s+([\w'-]+)\s+"
    r"(?:list|mailing list|email list|group|group chat|inbox|channel|thread)\b",
    re.IGNORECASE,
)
_NOT_TO = re.compile(
    r"\b(?:rather than|instead of|not|never|except)\s+(?:to\s+|via\s+|through\s+)?"
    r"(?:[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)*|[\w.+-]+@[\w.-]+)"
)
_THERE = re.compile(
    r"\b(?:send|sent|route|routed|forward|forwarded|go|goes|file)\w* "
    r"(?:\w+ ){0,3}?there\b"
)
_POSSESSIVE_NAME = re.compile(r"\b[A-Z][a-z][\w-]*'s\b")
_MAILBOX = re.compile(r"([\w.+-]+)@(?:[\w-]+(?:\.[\w-]+)+)?")


def addressees(text: str, refer: str = "") -> tuple[set[str], set[str]]:
    """Who a rule sends to, from its own words: (name words, mailbox local parts).

    Mailboxes come from addresses written out ("pauline@ngcpa.com") or shortened
    ("through casework@"); names from "to / through / send <Name>", and for "send her"
    the names mentioned at all in `refer` (the whole turn; default: the text itself).
    """
    # "rather than to Arlene", "not to Beatrice": the one it no longer goes to.
    text = _NOT_TO.sub(" ", text)
    mailboxes = {m.group(1).lower() for m in _MAILBOX.finditer(text)}
    names: set[str] = set()
    pronoun = False
    plural = True  # only "them": a guest list, whose names a possessive does not give
    for match in _ROUTED_TO.finditer(text):
        target = match.group(1)
        if target in ("him", "her", "them"):
            pronoun = True
            plural = plural and target == "them"
            continue
        # "through Okada-san": an honorific is no part of the name
        names |= {_HONORIFIC.sub("", w.lower().removesuffix("'s")) for w in target.split()}
    names |= {m.group(1).lower().rstrip("'").removesuffix("'s") for m in _TO_GROUP.finditer(text)}
    if _THERE.search(text) and not mailboxes and refer:
        # "route repair reports there": where the turn said it sent the first one
        mailboxes = {m.group(1).lower() for m in _MAILBOX.finditer(_NOT_TO.sub(" ", refer))}
    if pronoun and not names:
        said = refer or text
        if plural:
            # "send them the sheet with Fer's number": whose number it is says nothing of
            # whom "them" means
            said = _POSSESSIVE_NAME.sub(" ", said)
        names = {w.lower().removesuffix("'s") for w in _CAPITALISED.findall(said)}
    return names, mailboxes


def addressed_in(rule_text: str, candidate: str, refer: str = "") -> int:
    """How a rule's own words name a contact described as "Name relation email": 2 by its
    mailbox, 1 by name, 0 not at all (`refer`: see `addressees`)."""
    local = {m.group(1).lower() for m in _MAILBOX.finditer(candidate)}
    if not local:  # not a contact (a document, an item): naming a recipient says nothing
        return 0
    names, mailboxes = addressees(rule_text, refer)
    if local & mailboxes:
        return 2
    own = {w.lower().removesuffix("'s") for w in _CAPITALISED.findall(candidate)}
    # a list's own mailbox names it too ("regulars@" for "the regulars list")
    own |= {part for box in local for part in re.split(r"[._+-]", box) if len(part) > 2}
    return 1 if own & names else 0


def routed_by_name(rule: str, turn: str, old_turn: str) -> str:
    """A revising rule that sends "to him" / "to her", with the person said by name when its
    turn names exactly one person the turn of the rule it replaced did not: "Takeshi has
    offered to take over the paperwork so Emi can have a rest. From now on, send the
    statements to him instead", after "Would you like me to send Emi each statement?",
    sends to Takeshi. Only whom the old turn sent to is ruled out: "send things to her
    directly, not through Lorraine", after "shall I send Samira's post through Lorraine?",
    may well mean Samira."""
    if not _ROUTED_PRONOUN.search(rule):
        return rule
    old, _ = addressees(old_turn)
    if not old:
        return rule
    new = sorted(
        {w for w in _NAME_WORD.findall(turn) if w.lower() not in old | STOPWORDS | _NOT_A_NAME}
    )
    if len(new) != 1:
        return rule
    return _ROUTED_PRONOUN.sub(lambda m: f"{m.group(1)} {new[0]}", rule)


_ROUTED_PRONOUN = re.compile(r"\b(to|through|via)\s+(?:him|her)\b")
_NAME_WORD = re.compile(r"\b[A-Z][a-z][\w-]*")
# Capitalised words that open a sentence of a rule but name no one.
_NOT_A_NAME = frozenset(
    "from going send sending forward please then now also instead let make put starting "
    "changing change new small stop after since because".split()
)


def them_named(rule: str, turn: str) -> str:
    """A rule that passes over "them", with what "them" are when the sentence before names
    them with "those" or "these": "I read the fine print on those protection plans and they
    cover almost nothing. Going forward, skip them and just buy the thing itself." skips
    the protection plans."""
    m = _SKIP_THEM.search(rule)
    if m is None:
        return rule
    before = turn.split(rule, 1)[0] if rule in turn else ""
    named = _THOSE_THINGS.findall(before)
    if not named:
        return rule
    return rule[: m.start(2)] + named[-1] + rule[m.end(2) :]


_SKIP_THEM = re.compile(
    r"\b(skip|skipping|drop|avoid|without|not|never|no more of|leave out|stop buying)\s+(them)\b",
    re.I,
)
_THOSE_THINGS = re.compile(r"\b(?:[Tt]hose|[Tt]hese)\s+((?:[a-z][\w-]*\s+)?[a-z][\w-]*s)\b")


# Deciding later, beside a maybe ("put me down as a maybe and I'll decide on the day"), is
# what a maybe is for, not a rule to ask first. Not when the rule only points back at what
# it is about ("Stop turning them down. Mark me as maybe and I'll decide"): its case is
# the replaced rule's, which the words alone do not carry, so it still asks.
POINTS_BACK_ONLY = re.compile(r"\b(?:them|those|these)\b")
DECIDE_LATER = re.compile(
    r"\b(?:i'll|i will|i'd rather|i would rather|let me|i want to|i'd like to|i can)\s+"
    r"(?:\w+\s+){0,2}?(?:decide|firm (?:it|them) up|confirm)\b"
)
