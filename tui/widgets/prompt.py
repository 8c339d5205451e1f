"""The prompt: an Input with history (up/down), multi-line paste and slash-command completion."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.suggester import Suggester
from textual.widgets import Input

NEWLINE = "↵"  # stands for a line break of pasted text inside the one-line Input
MEMORY_MODES = ("none", "history", "chunks", "facts")


@dataclass(frozen=True)
class SlashSpec:
    """One slash command: its name, argument usage, help line and fixed completions."""

    name: str
    usage: str
    help: str
    choices: tuple[str, ...] = ()


SLASH_COMMANDS: tuple[SlashSpec, ...] = (
    SlashSpec(
        "/new",
        "[+Nd]",
        "end this session (memory and ledger are written), start the next N days later",
        ("+14d", "+7d", "+1d"),
    ),
    SlashSpec("/gl", "on|off", "Grounding Layer on or off", ("on", "off")),
    SlashSpec("/memory", "MODE", "memory mode: none, history, chunks or facts", MEMORY_MODES),
    SlashSpec("/model", "NAME", "rebuild the session with another model", ("reference",)),
    SlashSpec("/ledger", "", "show the ledger panel and list the arrangements"),
    SlashSpec("/why", "", "explain the last gate decision with its evidence"),
    SlashSpec("/revoke", "ID", "revoke a ledger entry: it authorizes nothing any more"),
    SlashSpec("/confirm", "ID", "confirm a ledger entry: it authorizes matching actions"),
    SlashSpec("/export", "", "write the ledger as JSON and Markdown to the profile directory"),
    SlashSpec("/help", "", "list the commands and keys"),
    SlashSpec("/quit", "", "save the session and leave"),
)
_SPECS = {spec.name: spec for spec in SLASH_COMMANDS}
_NEEDS_ID = ("/revoke", "/confirm")


class SlashError(ValueError):
    """A slash command that cannot run as typed; the message says how to type it."""


@dataclass(frozen=True)
class SlashCommand:
    """A parsed, validated slash command."""

    name: str
    arg: str = ""
    days: int = 0  # for /new


def parse_slash(text: str) -> SlashCommand:
    """Parse and validate `/name [arg]`."""
    name, _, arg = text.strip().partition(" ")
    arg = arg.strip()
    if name not in _SPECS:
        raise SlashError(f"unknown command {name}; /help lists them")
    if name == "/new":
        from tui.plain import parse_days

        try:
            return SlashCommand(name, arg, parse_days(arg) if arg else 0)
        except ValueError as exc:
            raise SlashError(str(exc)) from exc
    if name == "/gl" and arg not in ("on", "off"):
        raise SlashError("use /gl on or /gl off")
    if name == "/memory" and arg not in MEMORY_MODES:
        raise SlashError("use /memory none|history|chunks|facts")
    if name == "/model" and not arg:
        raise SlashError("use /model NAME (a litellm model string, or reference)")
    if name in _NEEDS_ID and not arg:
        raise SlashError(f"use {name} ID (the ledger panel shows the ids)")
    return SlashCommand(name, arg)


def help_text() -> str:
    """The /help text: one line per command."""
    width = max(len(f"{s.name} {s.usage}") for s in SLASH_COMMANDS)
    lines = [f"{f'{s.name} {s.usage}'.strip():<{width}}  {s.help}" for s in SLASH_COMMANDS]
    return "\n".join(lines)


class SlashSuggester(Suggester):
    """Completes command names, then their arguments (ledger ids for /revoke and /confirm)."""

    def __init__(self, entry_ids: Callable[[], Sequence[str]] = tuple) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.entry_ids = entry_ids

    async def get_suggestion(self, value: str) -> str | None:
        if not value.startswith("/"):
            return None
        name, space, partial = value.partition(" ")
        if not space:
            for spec in SLASH_COMMANDS:
                if spec.name.startswith(name) and spec.name != name:
                    return spec.name + (" " if spec.usage else "")
            return None
        command = _SPECS.get(name)
        if command is None or " " in partial:
            return None
        choices = tuple(self.entry_ids()) if name in _NEEDS_ID else command.choices
        for choice in choices:
            if choice.startswith(partial) and choice != partial:
                return f"{name} {choice}"
        return None


class PromptInput(Input):
    """The message line. Enter sends; up/down walk the history; a pasted block keeps its lines."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "up",
            "history(-1)",
            "Previous",
            show=False,
            id="prompt.history_previous",
            tooltip="Recall the previous message or command",
        ),
        Binding(
            "down",
            "history(1)",
            "Next",
            show=False,
            id="prompt.history_next",
            tooltip="Recall the next message or command",
        ),
    ]

    @dataclass
    class Sent(Message):
        """The user sent a message or a slash command."""

        text: str

    def __init__(self, *, suggester: Suggester | None = None, **kwargs: object) -> None:
        super().__init__(suggester=suggester, **kwargs)  # type: ignore[arg-type]
        self.history: list[str] = []
        self._index: int | None = None
        self._draft = ""

    @property
    def text(self) -> str:
        """The message as typed, with pasted line breaks restored."""
        return self.value.replace(NEWLINE, "\n")

    def on_paste(self, event: events.Paste) -> None:
        """Keep every line of a multi-line paste (Input alone keeps only the first)."""
        text = event.text.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
        if "\n" not in text:
            return  # Input's own handler inserts a single line
        event.prevent_default()
        event.stop()
        self.insert_text_at_cursor(text.replace("\n", NEWLINE))

    async def action_submit(self) -> None:
        text = self.text.strip()
        if not text:
            return
        if not self.history or self.history[-1] != text:
            self.history.append(text)
        self._index = None
        self._draft = ""
        self.clear()
        self.post_message(self.Sent(text))

    def action_history(self, step: int) -> None:
        if not self.history:
            return
        if self._index is None:
            if step > 0:
                return
            self._draft = self.value
            index = len(self.history) - 1
        else:
            index = self._index + step
        if index < 0:
            index = 0
        if index >= len(self.history):
            self._index = None
            self.value = self._draft
        else:
            self._index = index
            self.value = self.history[index].replace("\n", NEWLINE)
        self.cursor_position = len(self.value)
