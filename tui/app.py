"""The Textual app: the chat screen. It shows and steers; the work is the agent's."""

from __future__ import annotations

from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Input, Static

from agent.settings import Settings


class GroundingApp(App[int]):
    """Chat with the assistant; the ledger and the gate are shown live."""

    CSS_PATH = "app.tcss"
    TITLE = "grounding"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", id="quit", tooltip="Quit grounding", priority=True),
    ]

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self.settings = settings

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with VerticalScroll(id="conversation"):
            yield Static("Say hello to your assistant.", id="welcome", classes="hint")
        yield Input(placeholder="Message (/help for commands)", id="prompt")
        yield Footer()

    def on_mount(self) -> None:
        s = self.settings
        self.sub_title = (
            f"model {s.model} · memory {s.memory} · GL {'on' if s.gl else 'off'} · "
            f"profile {s.profile}"
        )
        self.query_one("#prompt", Input).focus()


def make_app(settings: Settings) -> GroundingApp:
    """The one app factory, shared by the CLI and the tests."""
    return GroundingApp(settings)


def run_app(settings: Settings) -> int:
    result = make_app(settings).run()
    return result or 0
