"""Text helpers shared by the widgets: status and decision badges, calls, results, quotes."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.text import Text

if TYPE_CHECKING:
    from ledger.model import Evidence

STATUS_STYLE = {
    "pending": "bold black on yellow",
    "confirmed": "bold black on green",
    "scoped": "bold black on cyan",
    "revised": "bold white on blue",
    "rejected": "bold white on red",
}
DECISION_STYLE = {
    "allow": "bold black on green",
    "confirm": "bold black on yellow",
    "follow_revision": "bold white on blue",
    "out_of_scope": "bold white on magenta",
    "error": "bold white on red",
}
OUTCOME_TEXT = {
    "pending": "waiting for your answer",
    "once": "approved once",
    "standing": "approved and made standing",
    "declined": "declined",
}


def badge(label: str, style: str) -> Text:
    """A coloured label such as ` pending `."""
    return Text(f" {label} ", style=style)


def status_badge(status: str) -> Text:
    return badge(status, STATUS_STYLE.get(status, "reverse"))


def decision_badge(decision: str) -> Text:
    return badge(decision, DECISION_STYLE.get(decision, "reverse"))


def call_text(tool: str, args: dict[str, Any]) -> str:
    """`rsvp(invitation_id=inv-sam-games, response=yes)`."""
    inner = ", ".join(f"{k}={_short(v)}" for k, v in args.items())
    return f"{tool}({inner})"


def _short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def result_summary(content: str, ok: bool = True, error: str | None = None) -> str:
    """One line for a tool result: its status, or what it found, or the error."""
    if not ok:
        return f"error: {_short(error or content, 80)}"
    try:
        data = json.loads(content)
    except ValueError:
        return _short(content, 80)
    if not isinstance(data, dict):
        return _short(content, 80)
    if "status" in data:
        return str(data["status"])
    for key, value in data.items():
        if isinstance(value, list):
            return f"{len(value)} {key}"
    return _short(content, 80)


def quote_text(evidence: Evidence) -> str:
    """`2026-05-04 · user: "text"`."""
    text = " ".join(evidence.text.split())
    return f'{evidence.session_date.isoformat()} · {evidence.speaker}: "{text}"'
