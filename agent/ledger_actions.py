"""What the user does to the ledger by hand (from the TUI): confirm, revoke, make standing, export.

Each change is a user-authored ledger event: the new state of the arrangement, with
a synthetic user turn ("[TUI] confirmed a3") as its evidence, written with
``writer="tui"``. The front end only shows and steers; the rules live here.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from ledger.export import export_json, export_markdown
from ledger.model import ActionType, Arrangement, Evidence, GateResult, Kind, Proposer, Status
from ledger.store import Change, LedgerEvent, LedgerStore

__all__ = [
    "WRITER",
    "LedgerActionError",
    "confirm_entry",
    "export_ledger",
    "make_standing",
    "revoke_entry",
    "tui_evidence",
]

WRITER = "tui"
TUI_SESSION = "tui"


class LedgerActionError(ValueError):
    """The change makes no sense (no such entry, already in that status)."""


def tui_evidence(text: str, day: date) -> Evidence:
    """A synthetic user turn quoting what the user did in the TUI."""
    return Evidence(
        session_id=TUI_SESSION, session_date=day, turn_index=0, speaker="user", text=text
    )


def _entry(store: LedgerStore, entry_id: str) -> Arrangement:
    entry = store.get(entry_id.strip())
    if entry is None:
        raise LedgerActionError(f"no ledger entry {entry_id!r}; /ledger lists them")
    return entry


def _set_status(
    store: LedgerStore, entry_id: str, day: date, status: Status, verb: str, reason: str
) -> LedgerEvent:
    entry = _entry(store, entry_id)
    if entry.status == status:
        raise LedgerActionError(f"{entry.id} is already {status.value}")
    evidence = tui_evidence(f"[TUI] {verb} {entry.id}", day)
    updated = entry.model_copy(
        update={"status": status, "updated_at": day, "evidence": [*entry.evidence, evidence]}
    )
    (event,) = store.apply([Change(updated, reason, [evidence])], writer=WRITER)
    return event


def confirm_entry(store: LedgerStore, entry_id: str, day: date) -> LedgerEvent:
    """Mark an arrangement confirmed by the user (it now authorizes matching calls)."""
    return _set_status(
        store, entry_id, day, Status.confirmed, "confirmed", "the user confirmed it in the TUI"
    )


def revoke_entry(store: LedgerStore, entry_id: str, day: date) -> LedgerEvent:
    """Mark an arrangement rejected by the user (it authorizes nothing any more)."""
    return _set_status(
        store, entry_id, day, Status.rejected, "revoked", "the user revoked it in the TUI"
    )


def _standing_text(tool: str, args: dict[str, Any]) -> str:
    if tool == "rsvp":
        response = args.get("response", "yes")
        return f"RSVP {response} to invitations like this one without asking"
    if tool == "purchase":
        return "Buy items like this one without asking"
    if tool == "send":
        return "Send documents like this one without asking"
    return f"Go ahead with {tool} calls like this one without asking"


def make_standing(
    store: LedgerStore, decision: GateResult, day: date, request: str = ""
) -> LedgerEvent:
    """Turn an approved, blocked call into a standing arrangement.

    The entry the gate cited is confirmed; when there is none (or it is already
    confirmed, e.g. an ask-first rule), a new user-proposed, confirmed arrangement
    for this kind of call is created.
    """
    entry = store.get(decision.entry_id) if decision.entry_id else None
    if entry is not None and entry.status != Status.confirmed:
        return confirm_entry(store, entry.id, day)
    call = ", ".join(f"{k}={v}" for k, v in decision.args.items())
    evidence = tui_evidence(f"[TUI] approved {decision.tool}({call}) and made it standing", day)
    try:
        action = ActionType(decision.tool)
    except ValueError:
        action = ActionType.other
    arrangement = Arrangement(
        id=store.new_id(),
        kind=Kind.delegation,
        proposer=Proposer.user,
        action_type=action,
        content=_standing_text(decision.tool, decision.args),
        status=Status.confirmed,
        evidence=[evidence],
        context=request,
        created_at=day,
        updated_at=day,
    )
    (event,) = store.apply(
        [Change(arrangement, "the user approved a blocked call and made it standing", [evidence])],
        writer=WRITER,
    )
    return event


def export_ledger(store: LedgerStore, directory: Path) -> tuple[Path, Path]:
    """Write ``ledger.json`` (arrangements and event log) and ``ledger.md`` to ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    entries = store.all()
    json_path = directory / "ledger.json"
    md_path = directory / "ledger.md"
    json_path.write_text(export_json(entries, store.events()), encoding="utf-8")
    md_path.write_text(export_markdown(entries), encoding="utf-8")
    return json_path, md_path
