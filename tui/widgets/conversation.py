"""The conversation pane: turns, Markdown replies, compact tool cards, session dividers, notes."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Literal, TypeVar

from rich.text import Text
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from tui.widgets.decision import Approval, DecisionCard
from tui.widgets.format import call_text, decision_badge, result_summary

if TYPE_CHECKING:
    from agent.context import ToolStep

NoteKind = Literal["info", "error", "command"]
W = TypeVar("W", bound=Widget)


class UserTurn(Static):
    """What the user said."""

    def __init__(self, text: str) -> None:
        super().__init__(Text(text), classes="user-turn")
        self.border_title = "you"


class AssistantTurn(Vertical):
    """The assistant's reply, rendered as Markdown."""

    def __init__(self, text: str) -> None:
        from textual.widgets import Markdown  # markdown-it loads with the first reply

        super().__init__(Markdown(text), classes="assistant-turn")
        self.text = text
        self.border_title = "assistant"


class ToolCard(Static):
    """One tool call on one or two lines: the call, what came back, the gate's word if any."""

    def __init__(self, step: ToolStep) -> None:
        line = Text("⚙ ", style="dim")
        if step.gate is not None:
            line.append_text(decision_badge(step.gate.decision))
            line.append(" ")
        line.append(call_text(step.call.name, step.call.args), style="bold")
        if step.result is not None:
            r = step.result
            line.append(
                f" → {result_summary(r.content, r.ok, r.error)}", style="" if r.ok else "red"
            )
        super().__init__(line, classes="tool-card")
        self.step = step


class SessionDivider(Static):
    """`── session 2 · 2026-05-18 ──`."""

    def __init__(self, number: int, day: date) -> None:
        super().__init__(f"session {number} · {day.isoformat()}", classes="session-divider")
        self.number = number
        self.day = day


class Note(Static):
    """A line from the app itself: command output, an error."""

    def __init__(self, text: str, kind: NoteKind = "info") -> None:
        super().__init__(Text(text), classes=f"note -{kind}")
        self.kind = kind


class Conversation(VerticalScroll):
    """Everything said and done, oldest first, kept scrolled to the newest."""

    def _add(self, widget: W) -> W:
        self.mount(widget)
        self.call_after_refresh(self.scroll_end, animate=False)
        return widget

    def add_user(self, text: str) -> UserTurn:
        return self._add(UserTurn(text))

    def add_reply(self, text: str) -> AssistantTurn:
        return self._add(AssistantTurn(text))

    def add_tool(self, step: ToolStep) -> ToolCard:
        return self._add(ToolCard(step))

    def add_approval(self, approval: Approval) -> DecisionCard:
        return self._add(DecisionCard(approval.gate, approval))

    def add_divider(self, number: int, day: date) -> SessionDivider:
        return self._add(SessionDivider(number, day))

    def add_note(self, text: str, kind: NoteKind = "info") -> Note:
        return self._add(Note(text, kind))
