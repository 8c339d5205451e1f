"""SVG snapshots of the chat screen: a populated ledger, an approval card, the 80x24 layout.

Deterministic: a temp GROUNDING_HOME, a fixed session date, a seeded ledger and synthetic
turns (the screen's rendering is under test here, not the reference policy's wording).
Update with `pytest tests/test_tui_snapshots.py --snapshot-update` and review the SVGs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from agent.context import ToolStep
from agent.factory import TurnResult
from tests.test_tui_chat import (
    DAY1,
    MARTA,
    blocked_turn,
    chat_of,
    hand_turn,
    seed_ledger,
    settings,
    settle,
)
from tools.runtime import ToolCall, ToolResult
from tui.app import make_app

SnapCompare = Callable[..., bool]


def allowed_turn() -> TurnResult:
    from ledger.model import Decision, GateResult

    args = {"invitation_id": "inv-marta-openhouse", "response": "yes"}
    listing = json.dumps({"invitations": [{"id": "inv-marta-openhouse"}, {"id": "inv-sam"}]})
    recorded = json.dumps({"status": "recorded", "tool": "rsvp", "response": "yes"})
    gate = GateResult(
        decision=Decision.allow, reason="you asked for this in your request", tool="rsvp", args=args
    )
    return TurnResult(
        request=MARTA,
        reply="Done: RSVPed **yes** to `inv-marta-openhouse`.\n\n"
        "Want me to RSVP yes to invitations like this whenever you're free from now on?",
        steps=[
            ToolStep(
                ToolCall("call_0", "list_invitations", {}),
                ToolResult("call_0", "list_invitations", True, listing),
            ),
            ToolStep(
                ToolCall("call_1", "rsvp", args), ToolResult("call_1", "rsvp", True, recorded), gate
            ),
        ],
        recalled=[],
        ledger_ids=[],
    )


async def _ready(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    pilot.app.query_one("#prompt").cursor_blink = False  # a blinking cursor is not stable


def test_chat_screen_with_a_populated_ledger(snap_compare: SnapCompare) -> None:
    seed_ledger()
    app = make_app(settings(), today=DAY1)

    async def run_before(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        await hand_turn(pilot, allowed_turn())
        table = chat_of(pilot).query_one("#ledger-table")
        table.focus()
        await pilot.press("down", "down", "down", "enter")  # a4: revised by a5
        await pilot.pause()

    try:
        assert snap_compare(app, terminal_size=(140, 40), run_before=run_before)
    finally:
        app.close_session()


def test_approval_card(snap_compare: SnapCompare) -> None:
    seed_ledger()
    app = make_app(settings(), today=DAY1)

    async def run_before(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        await hand_turn(pilot, blocked_turn("a1"))
        pilot.app.clear_notifications()
        await pilot.press("ctrl+o")
        await pilot.pause()

    try:
        assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)
    finally:
        app.close_session()


def test_ledger_panel_at_80x24(snap_compare: SnapCompare) -> None:
    seed_ledger()
    app = make_app(settings(), today=DAY1)

    async def run_before(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+l", "enter")
        await pilot.pause()

    try:
        assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
    finally:
        app.close_session()
