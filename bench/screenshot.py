"""Render the chat screen after a short real session to an SVG (docs/img/chat.svg).

A temp profile, a fixed date, the offline reference policy: the assistant RSVPs and
proposes a standing rule, the user changes the subject, the session ends 14 days pass,
and a new invitation arrives. The screen then shows the ledger and the gate live.

Usage: .venv/bin/python bench/screenshot.py [OUT.svg] [WIDTHxHEIGHT]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from datetime import date
from pathlib import Path

SCRIPT = [
    "Marta invited me to her studio open house. Please RSVP yes.",
    "How long do I boil an egg?",
    "/new +14d",
    "Sam invited me to board game night.",
]


async def shoot(out: Path, size: tuple[int, int]) -> None:
    from agent.settings import load_settings
    from tui.app import make_app
    from tui.widgets.prompt import PromptInput

    app = make_app(load_settings({"memory": "chunks"}), today=date(2026, 5, 4))
    async with app.run_test(size=size) as pilot:
        chat = app.chat

        async def settle() -> None:
            while chat.busy and chat.load_error is None:
                await pilot.pause(0.05)
            await pilot.pause()

        await settle()
        prompt = chat.query_one(PromptInput)
        for text in SCRIPT:
            prompt.value = text
            await pilot.press("enter")
            await settle()
        app.clear_notifications()
        prompt.cursor_blink = False
        if any(a.pending for a in chat.approvals):
            await pilot.press("ctrl+o")
        await pilot.pause()
        out.parent.mkdir(parents=True, exist_ok=True)
        app.save_screenshot(filename=out.name, path=str(out.parent))
    app.close_session()


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/img/chat.svg")
    width, height = (int(n) for n in (sys.argv[2] if len(sys.argv) > 2 else "140x42").split("x"))
    with tempfile.TemporaryDirectory() as home:
        os.environ["GROUNDING_HOME"] = home
        import agent  # noqa: F401  (offline switches)

        asyncio.run(shoot(out, (width, height)))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
