"""Export the ledger as JSON (stable, for machines) and Markdown (for people)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ledger.model import Arrangement, Evidence
from ledger.store import LedgerEvent

__all__ = ["export_json", "export_markdown", "quote_line"]

FORMAT = "grounding-ledger/1"


def export_json(
    arrangements: Iterable[Arrangement], events: Iterable[LedgerEvent] | None = None
) -> str:
    """The arrangements (and, if given, the event log) as JSON: sorted keys, ISO dates.

    The same ledger always exports to the same text, so exports can be diffed.
    """
    doc: dict[str, Any] = {
        "format": FORMAT,
        "arrangements": [a.model_dump(mode="json") for a in arrangements],
    }
    if events is not None:
        doc["events"] = [e.model_dump(mode="json") for e in events]
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def quote_line(evidence: Evidence) -> str:
    """One evidence quote: ``> [2026-03-04 · session s3 · user] text``."""
    text = " ".join(evidence.text.split())
    return (
        f"> [{evidence.session_date.isoformat()} · session {evidence.session_id} · "
        f"{evidence.speaker}] {text}"
    )


def _cell(value: object) -> str:
    """Text safe inside a Markdown table cell: one line, pipes escaped."""
    return " ".join(str(value).split()).replace("|", "\\|")


def export_markdown(arrangements: Sequence[Arrangement]) -> str:
    """A table of the arrangements, then each entry's evidence as quotes."""
    lines = ["# Ledger", ""]
    if not arrangements:
        lines.append("_No arrangements._")
        return "\n".join(lines) + "\n"
    lines += [
        "| id | status | proposer | action | rule | scope |",
        "|----|--------|----------|--------|------|-------|",
    ]
    for a in arrangements:
        scope = a.scope.text if a.scope is not None else ""
        row = [a.id, a.status.value, a.proposer.value, a.action_type.value, a.content, scope]
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    for a in arrangements:
        lines += ["", f"## {a.id} · {a.status.value}", "", _cell(a.content)]
        links = []
        if a.previous:
            links.append(f"revises {a.previous}")
        if a.superseded_by:
            links.append(f"superseded by {a.superseded_by}")
        if links:
            lines += ["", "_" + "; ".join(links) + "_"]
        lines.append("")
        if a.evidence:
            for e in a.evidence:
                lines += [quote_line(e), ""]
            lines.pop()
        else:
            lines.append("_No evidence recorded._")
    return "\n".join(lines) + "\n"
