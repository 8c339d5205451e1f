"""The Textual app: the chat screen. It shows and steers; the work is the agent's."""

from __future__ import annotations

import sys
from datetime import date
from typing import TYPE_CHECKING, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen

from tui.palette import ChatCommands
from tui.screens.chat import ChatScreen

if TYPE_CHECKING:
    from agent.settings import Settings


class GroundingApp(App[int]):
    """Chat with the assistant; the ledger and the gate are shown live."""

    CSS_PATH = "app.tcss"
    TITLE = "grounding"
    COMMANDS = App.COMMANDS | {ChatCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", id="quit", tooltip="Quit grounding", priority=True),
    ]

    def __init__(self, settings: Settings, today: date | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.today = today
        self.chat = ChatScreen(settings, today=today)

    def get_default_screen(self) -> Screen[None]:
        return self.chat

    def close_session(self, timeout: float = 60.0) -> list[str]:
        """After the app has stopped: let running work finish, then end and save the session.

        Ending the session runs the agent's `remember` step (memory and ledger), as the
        plain REPL does at the end of input. Returns one line per ledger change.
        """
        chat = self.chat
        if not chat.job_lock.acquire(timeout=timeout):
            return ["[session] still busy: not saved"]
        try:
            session, chat.session = chat.session, None
            if session is None:
                return []
            events = session.close()
        finally:
            chat.job_lock.release()
        return [f"[ledger] {e.entry_id} -> {e.arrangement.status}: {e.reason}" for e in events]


def make_app(settings: Settings, today: date | None = None) -> GroundingApp:
    """The one app factory, shared by the CLI and the tests (`today` fixes a new session's date)."""
    return GroundingApp(settings, today=today)


def run_app(settings: Settings, today: date | None = None) -> int:
    app = make_app(settings, today=today)
    result = app.run()
    if app.chat.job_lock.locked():
        print("[session] letting the assistant finish its turn…", file=sys.stderr)
    for line in app.close_session():
        print(line, file=sys.stderr)
    print("[session] saved", file=sys.stderr)
    return result or 0
