"""Scope batteries: how a limited acceptance is read, and which later calls it covers.

A scope battery (JSON Lines; format in tests/data/README.md) holds episodes in which the
assistant proposes a standing arrangement and the user accepts only part of it, each with
two later calls: one inside the limit (the agent may act) and one outside it (it must ask).
Each episode goes through the same reading the agent's ledger writer and gate use: the
reply classifier (rules, meaning check, reply model), the scope parser, and the scope
matcher with MiniLM meaning. Counts only: `python -m scenarios.scope_battery FILE...`
prints, by kind of limit, how many replies were read as limited, how many inside calls
were allowed and how many outside calls would have run.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from agent.facts import call_facts as agent_call_facts
from ledger.classifier import Act, classify_reply
from ledger.scope import CallFacts, match_scope, parse_scope
from tools.runtime import ToolCall
from tools.world import Contact, Document, Invitation, Product, World

Similarity = Callable[[str, str], float]


def call_facts(action: str, side: dict[str, Any], today: date) -> CallFacts:
    """The facts of one later call, described by the agent's own `agent.facts.call_facts`
    from a world that holds the side's item."""
    item = side["item"]
    if action == "rsvp":
        world = World(
            invitations=[
                Invitation(id="inv", from_=item["from"], event=item["event"], when=item["when"])
            ],
            contacts=[Contact(name=item["from"], email="", relation=item.get("relation", ""))],
        )
        call = ToolCall("battery", "rsvp", {"invitation_id": "inv", "response": "yes"})
    elif action == "purchase":
        product = Product(
            id="item",
            title=item["title"],
            price=float(item["price"]),
            currency=item.get("currency", "USD"),
            attributes=item.get("attributes") or {},
        )
        world = World(products=[product])
        call = ToolCall("battery", "purchase", {"product_id": "item", "quantity": 1})
    elif action == "send":
        world = World(
            contacts=[
                Contact(name=item["to_name"], email=item["to_email"], relation=item["to_relation"])
            ],
            documents=[
                Document(id="doc", title=item["document_title"], body=item.get("document_body", ""))
            ],
        )
        call = ToolCall("battery", "send", {"to": item["to_email"], "document_id": "doc"})
    else:
        raise ValueError(f"unknown action {action!r}")
    return agent_call_facts(call, side["request"], world, today)


@dataclass
class Outcome:
    """One episode: how the reply was read, and whether each later call would run."""

    act: str
    inside_runs: bool
    outside_runs: bool


def read_episode(
    case: dict[str, Any], meaning: Similarity | None, acceptance: Similarity | None
) -> Outcome:
    """Read the reply as the ledger writer does, then match both later calls."""
    today = date.fromisoformat(case["today"])
    result = classify_reply(case["proposal"], case["reply"], meaning, acceptance)
    runs: dict[str, bool] = {}
    for side in ("inside", "outside"):
        if result.act is Act.accept:
            runs[side] = True
        elif result.act is Act.scoped and result.proposal is not None:
            scope = parse_scope(
                case["reply"], today, result.scope, result.proposal.text, case["proposal"], ""
            )
            verdict = match_scope(scope, call_facts(case["action"], case[side], today), meaning)
            runs[side] = verdict.inside is True
        else:
            runs[side] = False
    return Outcome(result.act.value, runs["inside"], runs["outside"])


@dataclass
class Counts:
    """Per kind of limit: episodes, replies read as limited or as plain yes, inside calls
    allowed, outside calls that would run (unauthorized)."""

    by_kind: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, kind: str, outcome: Outcome) -> None:
        row = self.by_kind.setdefault(kind, Counter())
        row["episodes"] += 1
        row["read_limited"] += outcome.act == Act.scoped.value
        row["read_plain_yes"] += outcome.act == Act.accept.value
        row["inside_allowed"] += outcome.inside_runs
        row["outside_run"] += outcome.outside_runs

    def total(self) -> Counter[str]:
        out: Counter[str] = Counter()
        for row in self.by_kind.values():
            out.update(row)
        return out


def run(lines: Iterable[str], meaning: Similarity | None, acceptance: Similarity | None) -> Counts:
    counts = Counts()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
            counts.add(case["kind"], read_episode(case, meaning, acceptance))
        except (KeyError, ValueError, TypeError) as exc:
            raise ValueError(f"line {n}: {exc!r}") from exc
    return counts


COLUMNS = ("episodes", "read_limited", "read_plain_yes", "inside_allowed", "outside_run")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scenarios.scope_battery",
        description="Count how scope batteries are read (counts only, no episode text).",
    )
    parser.add_argument("files", nargs="+", type=Path, help="scope battery .jsonl files")
    args = parser.parse_args(argv)
    from agent.embeddings import MiniLMEmbedder, embedding_cosine, reply_acceptance

    embedder = MiniLMEmbedder()
    meaning, acceptance = embedding_cosine(embedder), reply_acceptance(embedder)
    for path in args.files:
        try:
            counts = run(path.read_text().splitlines(), meaning, acceptance)
        except (OSError, ValueError) as exc:
            print(f"{path}: {exc}", file=sys.stderr)
            return 1
        print(path)
        print("  " + " ".join(f"{c:>15}" for c in ("kind", *COLUMNS)))
        for kind in sorted(counts.by_kind):
            row = counts.by_kind[kind]
            print("  " + " ".join(f"{v:>15}" for v in (kind, *(row[c] for c in COLUMNS))))
        total = counts.total()
        print("  " + " ".join(f"{v:>15}" for v in ("all", *(total[c] for c in COLUMNS))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
