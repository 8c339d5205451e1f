"""A learned second reading of replies the rules leave pending.

The rules classifier (`ledger.classifier`) reads a reply from its cue words. Acceptances in
everyday speech often carry none ("Legend. Set and forget.", "Mornings are a write-off for
me anyway."), so a proposal the user did accept stays pending. This module scores how
likely a reply accepts the proposal it answers: a softmax regression over sentence
embeddings (MiniLM in the agent) of the reply and the proposal, trained on the hand-labelled
batteries in `tests/data` (never on the benchmark corpus) by `scripts/train_reply_model.py`.

The classifier uses the score only for a reply the rules leave pending, and only when the
reply has no negation, limit, contrast or hand-back in it (see `classify_reply`): the model
cannot tell "yes" from "no" well, so it may turn a silence into an acceptance, never a
refusal or a limit into one.

Features of a (proposal, reply) pair, both embeddings L2-normalised: the reply's vector, its
element-wise product with the proposal's, their cosine, and a bias.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

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
L2 = 1e-3
STEPS = 1500
RATE = 0.5


def features(reply_vecs: npt.NDArray[np.float32], proposal_vecs: npt.NDArray[np.float32]) -> Any:
    products = reply_vecs * proposal_vecs
    cos = products.sum(axis=1, keepdims=True)
    bias = np.ones((len(reply_vecs), 1), dtype=np.float32)
    return np.hstack([reply_vecs, products, cos, bias]).astype(np.float64)


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
        self.embed = embed

    def probabilities(self, proposal: str, reply: str) -> dict[str, float]:
        reply_vec, proposal_vec = self.embed([reply, proposal])
        x = features(np.asarray([reply_vec]), np.asarray([proposal_vec]))
        p = _softmax(x @ self.w)[0]
        return {label: float(v) for label, v in zip(LABELS, p, strict=True)}

    def accept_probability(self, proposal: str, reply: str) -> float:
        return self.probabilities(proposal, reply)["accept"]
