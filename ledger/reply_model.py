"""A learned second reading of replies the rules leave pending or read as a limit.

The rules classifier (`ledger.classifier`) reads a reply from its cue words. Acceptances in
everyday speech often carry none ("Legend. Set and forget.", "Mornings are a write-off for
me anyway."), so a proposal the user did accept stays pending. This module scores how
likely a reply accepts the proposal it answers: a softmax regression over sentence
embeddings (MiniLM in the agent) of the reply and the proposal, trained on the hand-labelled
batteries in `tests/data` (never on the benchmark corpus) by `scripts/train_reply_model.py`.

The classifier uses the score for a reply the rules leave pending, and asks it to be surer
when the reply has a negation, limit, contrast or hand-back word in it (see
`classify_reply`): it may turn a silence into an acceptance, never a refusal. It may also read
a limit the rules found as a plain acceptance, when it is MODEL_OVERRULE_LIMIT sure and the
reply has no hand-back, limit or refusal word ("Friday at 4 is exactly when I always forget.
Automate it.").

Features of a (proposal, reply) pair, both embeddings L2-normalised: the reply's vector, its
element-wise product with the proposal's, their cosine, a bias, and the reply's words and word
pairs (present or not) from a vocabulary of those seen at least GRAM_MIN_COUNT times in
training. Sentence embeddings blur "I'd rather" and "I'd only forget otherwise"; the words
keep them apart.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ledger.text import normalize

FloatArray = npt.NDArray[np.float32]
Embed = Callable[[list[str]], Sequence[FloatArray]]

LABELS = ("accept", "scoped", "reject", "revise", "pending")
# The act labels of the batteries, as the model learns them: both ways of leaving a
# proposal pending are one class.
LABEL_OF = {
    "accept": "accept",
    "scoped": "scoped",
    "reject": "reject",
    "revise": "revise",
    "implicit": "pending",
    "no_uptake": "pending",
}
WEIGHTS = Path(__file__).with_name("reply_model.npz")
# Training: full-batch gradient descent from zero weights, so the same embeddings give the
# same weights.
# L2 was chosen among 1e-3, 3e-3 and 1e-2 by 5-fold cross-validation on the training rows
# (never on the held-out batteries); GRAM_MIN_COUNT was not tuned.
L2 = 3e-3
STEPS = 1500
RATE = 0.5
GRAM_MIN_COUNT = 3
_WORD = re.compile(r"[a-z']+")


def grams(reply: str) -> set[str]:
    """The reply's words and pairs of adjacent words ("rather", "i'd_rather")."""
    tokens = _WORD.findall(normalize(reply))
    return set(tokens) | {f"{a}_{b}" for a, b in pairwise(tokens)}


def vocabulary(replies: Iterable[str]) -> list[str]:
    """The words and word pairs found in at least GRAM_MIN_COUNT replies, sorted."""
    counts = Counter(g for reply in replies for g in grams(reply))
    return sorted(g for g, n in counts.items() if n >= GRAM_MIN_COUNT)


def bags(replies: Sequence[str], vocab: Sequence[str] | Mapping[str, int]) -> Any:
    """One row per reply: 1.0 where the reply has the vocabulary's word or pair (`vocab`
    may be given already indexed, word -> column)."""
    index = vocab if isinstance(vocab, Mapping) else {g: i for i, g in enumerate(vocab)}
    out = np.zeros((len(replies), len(vocab)))
    for row, reply in enumerate(replies):
        for g in grams(reply):
            if g in index:
                out[row, index[g]] = 1.0
    return out


def features(
    reply_vecs: npt.NDArray[np.float32],
    proposal_vecs: npt.NDArray[np.float32],
    replies: Sequence[str] = (),
    vocab: Sequence[str] | Mapping[str, int] = (),
) -> Any:
    products = reply_vecs * proposal_vecs
    cos = products.sum(axis=1, keepdims=True)
    bias = np.ones((len(reply_vecs), 1), dtype=np.float32)
    dense = np.hstack([reply_vecs, products, cos, bias]).astype(np.float64)
    if not vocab:
        return dense
    return np.hstack([dense, bags(replies, vocab)])


def _softmax(z: Any) -> Any:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def train(x: Any, labels: Sequence[str]) -> Any:
    """Weights of a softmax regression of `labels` (names in LABELS) on features `x`."""
    y = np.eye(len(LABELS))[[LABELS.index(label) for label in labels]]
    w = np.zeros((x.shape[1], len(LABELS)))
    for _ in range(STEPS):
        grad = x.T @ (_softmax(x @ w) - y) / len(x) + L2 * w
        w -= RATE * grad
    return w


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class ReplyModel:
    """P(the reply accepts the proposal), from weights trained by scripts/train_reply_model.py."""

    def __init__(self, embed: Embed, weights: Path = WEIGHTS) -> None:
        with np.load(weights) as data:
            self.w = np.asarray(data["w"], dtype=np.float64)
            self.meta = json.loads(str(data["meta"]))
        if tuple(self.meta["labels"]) != LABELS:
            raise ValueError(f"{weights}: labels {self.meta['labels']} are not {list(LABELS)}")
        # indexed once here, not on every reply read
        self.vocab = {g: i for i, g in enumerate(self.meta.get("vocabulary", []))}
        self.embed = embed

    def probabilities(self, proposal: str, reply: str) -> dict[str, float]:
        reply_vec, proposal_vec = self.embed([reply, proposal])
        x = features(np.asarray([reply_vec]), np.asarray([proposal_vec]), [reply], self.vocab)
        p = _softmax(x @ self.w)[0]
        return {label: float(v) for label, v in zip(LABELS, p, strict=True)}

    def accept_probability(self, proposal: str, reply: str) -> float:
        return self.probabilities(proposal, reply)["accept"]
