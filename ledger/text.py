"""Small text utilities shared by the classifier, the scope matcher and the gate."""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"[a-z0-9$][a-z0-9$'.-]*[a-z0-9]|[a-z0-9$]")
_SENT = re.compile(r"(?<=[.!?])\s+|\n+|;\s+|\s+--?\s+|\s+—\s+")

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


def normalize(text: str) -> str:
    text = text.lower()
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    return re.sub(r"\s+", " ", text).strip()


def words(text: str) -> list[str]:
    return _WORD.findall(normalize(text))


def stem(word: str) -> str:
    """A tiny suffix stripper: enough to match 'paperbacks' with 'paperback'."""
    w = word.strip("'.-")
    if w.endswith("'s"):
        w = w[:-2]
    for suffix, keep in (
        ("ies", "y"),
        ("sses", "ss"),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
    ):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            if suffix == "s" and w.endswith("ss"):
                continue
            if suffix == "es" and not re.search(r"(sh|ch|x|z|ss)es$", w):
                continue
            return w[: len(w) - len(suffix)] + keep
    return w


def content_stems(text: str, extra_stop: Iterable[str] = ()) -> set[str]:
    stop = STOPWORDS | set(extra_stop)
    return {stem(w) for w in words(text) if w not in stop and len(w) > 1}


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.split(text) if s.strip()]


def has_phrase(text: str, phrases: Iterable[str]) -> str | None:
    """Return the first phrase found as whole words in normalized text."""
    norm = " " + re.sub(r"[^a-z0-9$'\s]", " ", normalize(text)) + " "
    norm = re.sub(r"\s+", " ", norm)
    for phrase in phrases:
        if " " + phrase + " " in norm:
            return phrase
    return None


def lexical_similarity(a: str, b: str) -> float:
    """Overlap of content stems, normalised by the smaller side (0..1)."""
    sa, sb = content_stems(a), content_stems(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / min(len(sa), len(sb))
