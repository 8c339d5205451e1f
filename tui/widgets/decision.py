"""A gate decision as a card; a blocked call's card is an approval card answered with y / a / n."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Static

from tui.widgets.format import OUTCOME_TEXT, call_text, decision_badge, quote_text

if TYPE_CHECKING:
    from ledger.model import GateResult

Outcome = Literal["pending", "once", "standing", "declined"]
Choice = Literal["once", "standing", "declined"]


@dataclass
class Approval:
    """A call the gate blocked, waiting for the user's answer."""

    number: int
    gate: GateResult
    request: str
    outcome: Outcome = "pending"

    @property
    def pending(self) -> bool:
        return self.outcome == "pending"


class DecisionCard(Vertical, can_focus=True):
    """One gate decision: badge, call, reason, entry and evidence; buttons if it waits for you."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "y",
            "answer('once')",
            "Approve once",
            id="approval.once",
            tooltip="Run exactly this call, this once",
        ),
        Binding(
            "a",
            "answer('standing')",
            "Approve + standing",
            id="approval.standing",
            tooltip="Run this call and make it a standing arrangement in the ledger",
        ),
        Binding(
            "n",
            "answer('declined')",
            "Decline",
            id="approval.decline",
            tooltip="Do not run this call",
        ),
    ]

    @dataclass
    class Answered(Message):
        """The user answered an approval card."""

        approval: Approval
        choice: Choice

    def __init__(
        self,
        gate: GateResult,
        approval: Approval | None = None,
        *,
        compact: bool = False,
        quotes: int = 2,
    ) -> None:
        super().__init__(classes="decision-card")
        self.gate = gate
        self.approval = approval
        self.compact = compact
        self.quotes = quotes
        self.add_class(f"-{gate.decision}")
        if approval is not None:
            self.add_class("-approval")
        else:
            self.can_focus = False

    def compose(self) -> ComposeResult:
        g = self.gate
        head = Text.assemble(decision_badge(g.decision), " ", (call_text(g.tool, g.args), "bold"))
        yield Static(head, classes="decision-head")
        reason = Text(f"because {g.reason}", style="italic")
        if g.entry_id:
            reason.append(f" · entry {g.entry_id}", style="bold")
        if g.scope_diff:
            reason.append(f" · scope: {g.scope_diff}")
        if g.governing_rule:
            reason.append(f' · newer rule: "{g.governing_rule}"')
        yield Static(reason, classes="decision-reason")
        for e in g.evidence[-self.quotes :] if self.quotes else []:
            yield Static(Text(f"> {quote_text(e)}"), classes="decision-quote")
        if self.approval is not None:
            yield Static("", classes="decision-outcome")
            with Horizontal(classes="decision-buttons"):
                once, standing, decline = (
                    ("once", "standing", "decline")
                    if self.compact
                    else ("approve once", "approve + standing", "decline")
                )
                yield Button(f"{once} (y)", id="once", compact=True, variant="success")
                yield Button(f"{standing} (a)", id="standing", compact=True, variant="primary")
                yield Button(f"{decline} (n)", id="declined", compact=True, variant="error")

    def on_mount(self) -> None:
        self.show_outcome()

    def show_outcome(self) -> None:
        """Reflect the approval's outcome (after the user answered here or elsewhere)."""
        if self.approval is None:
            return
        pending = self.approval.pending
        self.set_class(not pending, "-answered")
        self.query_one(".decision-buttons").display = pending
        hint = "ctrl+o, then y / a / n" if pending else ""
        text = OUTCOME_TEXT[self.approval.outcome]
        self.query_one(".decision-outcome", Static).update(
            Text.assemble((text, "bold"), (f"  ({hint})" if hint else "", "dim"))
        )
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer":
            return self.approval is not None and self.approval.pending
        return True

    def action_answer(self, choice: Choice) -> None:
        if self.approval is not None and self.approval.pending:
            self.post_message(self.Answered(self.approval, choice))

    @on(Button.Pressed)
    def _button(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id in ("once", "standing", "declined"):
            self.action_answer(event.button.id)  # type: ignore[arg-type]
