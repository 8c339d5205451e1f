"""The gate, memory and actions panels."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from tui.widgets.decision import Approval, DecisionCard
from tui.widgets.format import call_text, decision_badge

if TYPE_CHECKING:
    from agent.memory import MemoryItem
    from ledger.model import GateResult
    from tools.runtime import ActionRecord


class GatePanel(VerticalScroll):
    """Every gate decision of this run, newest last; blocked calls wait for an answer here too."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = "Gate"
        self.count = 0

    def compose(self) -> ComposeResult:
        yield Static("No gate decisions yet.", id="gate-empty", classes="hint")

    def _seen(self) -> None:
        self.count += 1
        self.query_one("#gate-empty").display = False
        self.call_after_refresh(self.scroll_end, animate=False)

    def add_decision(self, gate: GateResult, approval: Approval | None = None) -> DecisionCard:
        self._seen()
        card = DecisionCard(gate, approval, compact=True)
        self.mount(card)
        return card

    def add_error(self, where: str, message: str) -> Static:
        self._seen()
        text = Text.assemble(decision_badge("error"), " ", (where, "bold"), f"\n{message}")
        card = Static(text, classes="decision-card -error")
        self.mount(card)
        return card

    def add_divider(self, number: int, day: date) -> None:
        self.mount(Static(f"session {number} · {day.isoformat()}", classes="session-divider"))


class MemoryPanel(VerticalScroll):
    """What recall returned for the last turn."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = "Memory"

    def compose(self) -> ComposeResult:
        yield Static("Nothing recalled yet.", id="memory-text", classes="hint")

    def show(self, items: Sequence[MemoryItem], request: str, mode: str) -> None:
        text = Text()
        text.append(f"memory {mode} · recalled for: ", style="dim")
        text.append(f"{request}\n", style="italic")
        if not items:
            text.append("nothing recalled", style="dim")
        for n, item in enumerate(items, 1):
            score = f" · {item.score:.2f}" if item.score is not None else ""
            text.append(
                f"\n{n}. {item.session_date.isoformat()} · {', '.join(item.speakers)}"
                f" · {item.kind}{score}\n",
                style="bold",
            )
            text.append(item.text.strip() + "\n")
        static = self.query_one("#memory-text", Static)
        static.remove_class("hint")
        static.update(text)

    def clear_items(self, note: str) -> None:
        static = self.query_one("#memory-text", Static)
        static.add_class("hint")
        static.update(note)


class ActionsPanel(Vertical):
    """The simulated side-effecting calls executed so far (nothing leaves the machine)."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = "Actions"

    def compose(self) -> ComposeResult:
        table: DataTable[str] = DataTable(id="actions-table", cursor_type="row")
        table.add_column("#", key="seq")
        table.add_column("call", key="call")
        table.add_column("result", key="result")
        yield table
        yield Static("No actions executed yet.", id="actions-empty", classes="hint")

    def on_mount(self) -> None:
        self.query_one("#actions-table").display = False

    def show(self, records: Sequence[ActionRecord]) -> None:
        table = self.query_one("#actions-table", DataTable)
        table.clear()
        for r in records:
            table.add_row(str(r.seq), call_text(r.tool, r.args), str(r.result.get("status", "")))
        table.display = bool(records)
        self.query_one("#actions-empty").display = not records
        if records:
            table.move_cursor(row=len(records) - 1)
