"""The ledger panel: a live table of arrangements; a selected row shows its evidence and history."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from tui.widgets.format import quote_text, status_badge

if TYPE_CHECKING:
    from ledger.model import Arrangement
    from ledger.store import LedgerEvent

MIN_RULE = 20
# id, status badge, proposer and action columns, each with one cell of padding a side,
# and the vertical scrollbar: the rule column gets the rest and wraps.
FIXED = 3 + 11 + 9 + 8 + 2 * 5 + 2


class LedgerPanel(Vertical):
    """Arrangements with status badges; `c` confirms and `r` revokes the highlighted row."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "c",
            "confirm",
            "Confirm",
            id="ledger.confirm",
            tooltip="Confirm the highlighted arrangement (a user-authored ledger event)",
        ),
        Binding(
            "r",
            "revoke",
            "Revoke",
            id="ledger.revoke",
            tooltip="Revoke the highlighted arrangement: it authorizes nothing any more",
        ),
    ]

    @dataclass
    class ConfirmRequested(Message):
        """The user asked to confirm an entry from the panel."""

        entry_id: str

    @dataclass
    class RevokeRequested(Message):
        """The user asked to revoke an entry from the panel."""

        entry_id: str

    @dataclass
    class EntrySelected(Message):
        """A row was selected: the screen answers with `show_detail`."""

        entry_id: str

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.entries: list[Arrangement] = []
        self.border_title = "Ledger"

    def compose(self) -> ComposeResult:
        yield DataTable(id="ledger-table", cursor_type="row", zebra_stripes=True)
        yield Static("The ledger is empty.", id="ledger-empty", classes="hint")
        with VerticalScroll(id="ledger-detail"):
            yield Static("", id="ledger-detail-text")

    @property
    def table(self) -> DataTable[str | Text]:
        return self.query_one("#ledger-table", DataTable)

    @property
    def highlighted(self) -> str | None:
        """The id of the row under the cursor, if any."""
        table = self.table
        if not self.entries or table.row_count == 0:
            return None
        row = min(max(table.cursor_row, 0), table.row_count - 1)
        return self.entries[row].id

    def on_mount(self) -> None:
        self.table.display = False
        self._rule_width = 0

    def on_resize(self) -> None:
        if self.entries and self._width() != self._rule_width:
            self.show_entries(self.entries)

    def _width(self) -> int:
        available = self.content_size.width - FIXED
        return max(MIN_RULE, available) if self.content_size.width else 40

    def show_entries(self, entries: Sequence[Arrangement]) -> None:
        """Replace the rows (the rule wraps to the panel's width), keeping the cursor."""
        keep = self.highlighted
        self.entries = list(entries)
        self._rule_width = self._width()
        table = self.table
        table.clear(columns=True)
        table.add_column("id", key="id")
        table.add_column("status", key="status")
        table.add_column("proposer", key="proposer")
        table.add_column("action", key="action")
        table.add_column("rule (scope)", key="rule", width=self._rule_width)
        for a in self.entries:
            rule = Text(" ".join(a.content.split()))
            if a.scope is not None and a.scope.text:
                rule.append(f"\nscope: {a.scope.text}", style="italic")
            table.add_row(
                a.id,
                status_badge(a.status.value),
                a.proposer.value,
                a.action_type.value,
                rule,
                key=a.id,
                height=None,
            )
        self.query_one("#ledger-empty").display = not self.entries
        table.display = bool(self.entries)
        if keep is not None and keep in {a.id for a in self.entries}:
            table.move_cursor(row=table.get_row_index(keep))
        self.refresh_bindings()

    def show_detail(
        self, entry: Arrangement, chain: Sequence[Arrangement], events: Sequence[LedgerEvent]
    ) -> None:
        """Evidence quotes and history (events, revision chain) of one entry."""
        text = Text()
        text.append(f"{entry.id} ", style="bold")
        text.append_text(status_badge(entry.status.value))
        text.append(f" {entry.proposer.value} · {entry.action_type.value}\n")
        text.append(f'"{entry.content}"\n', style="italic")
        if entry.scope is not None and entry.scope.text:
            text.append(f"scope: {entry.scope.text}\n")
        text.append("Evidence\n", style="bold underline")
        for e in entry.evidence or []:
            text.append(f"> {quote_text(e)}\n")
        if not entry.evidence:
            text.append("(none recorded)\n", style="dim")
        text.append("History\n", style="bold underline")
        for ev in events:
            day = ev.session_date or ev.arrangement.updated_at
            text.append(
                f"#{ev.seq} {day.isoformat()} {ev.writer}: {ev.op} → "
                f"{ev.arrangement.status.value} ({ev.reason})\n"
            )
        if len(chain) > 1:
            links = " → ".join(f"{a.id} ({a.status.value})" for a in chain)
            text.append(f"Revision chain: {links}\n")
        self.query_one("#ledger-detail-text", Static).update(text)
        self.add_class("-detail")
        table = self.table
        # The detail takes room from the table: keep the selected row in view.
        self.call_after_refresh(table.move_cursor, row=table.cursor_row, scroll=True)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("confirm", "revoke"):
            return self.highlighted is not None
        return True

    def action_confirm(self) -> None:
        if (entry_id := self.highlighted) is not None:
            self.post_message(self.ConfirmRequested(entry_id))

    def action_revoke(self) -> None:
        if (entry_id := self.highlighted) is not None:
            self.post_message(self.RevokeRequested(entry_id))

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.EntrySelected(event.row_key.value))
