"""The chat screen: conversation, prompt and the ledger, gate, memory and actions panels.

It shows and steers. The work is `agent.session.ChatSession`'s (built in a worker
after the first frame, because it loads LangGraph, Chroma and onnxruntime) and
`agent.ledger_actions`'; every call into them runs in one queue of thread workers,
so the conversation's order is the order the user asked for things, and the UI
never waits on the agent.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static
from textual.worker import Worker, WorkerState, get_current_worker

from tui.widgets.conversation import Conversation, NoteKind
from tui.widgets.decision import Approval, DecisionCard
from tui.widgets.format import call_text, result_summary
from tui.widgets.ledger_panel import LedgerPanel
from tui.widgets.prompt import PromptInput, SlashCommand, SlashError, SlashSuggester
from tui.widgets.prompt import help_text as slash_help
from tui.widgets.side_panels import ActionsPanel, GatePanel, MemoryPanel

if TYPE_CHECKING:
    from agent.context import ToolStep
    from agent.factory import TurnResult
    from agent.session import ChatSession
    from agent.settings import Settings
    from ledger.model import Arrangement, Turn
    from tools.runtime import ActionRecord

WIDE = 110  # columns from which the side panels sit beside the conversation
PANELS = ("ledger", "gate", "memory", "actions")
WELCOME = "Say hello to your assistant. /help lists the commands, ctrl+p the command palette."
KEYS_HELP = """Keys: ctrl+l ledger · ctrl+g gate · ctrl+r memory · ctrl+t actions · ctrl+o answer \
an approval (y once · a standing · n decline) · in the ledger: c confirm, r revoke, enter details \
· up/down history · escape back to the prompt · ctrl+q quit"""


@dataclass(frozen=True)
class Snapshot:
    """What the screen shows about the session, read in the worker that changed it."""

    session_no: int
    session_date: date
    model: str
    memory: str
    gl: bool
    profile: str
    home: Path
    ledger: list[Arrangement] = field(default_factory=list)
    actions: tuple[ActionRecord, ...] = ()

    @classmethod
    def of(cls, session: ChatSession) -> Snapshot:
        s = session.agent.settings
        return cls(
            session_no=session.session_no,
            session_date=session.session_date,
            model=s.model,
            memory=s.memory,
            gl=s.gl,
            profile=s.profile,
            home=Path(session.home or "."),
            ledger=session.ledger(),
            actions=session.agent.actions.records,
        )


Job = Callable[["ChatSession"], Message]


def _events_lines(events: list[Any]) -> list[str]:
    return [
        f"ledger {e.entry_id} → {e.arrangement.status}: {e.arrangement.content} ({e.reason})"
        for e in events
    ]


class ChatScreen(Screen[None]):
    """Chat with the assistant; the ledger and the gate are shown live."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (WIDE, "-wide")]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+l",
            "toggle_panel('ledger')",
            "Ledger",
            id="panel.ledger",
            tooltip="Show or hide the ledger: arrangements, status, evidence",
        ),
        Binding(
            "ctrl+g",
            "toggle_panel('gate')",
            "Gate",
            id="panel.gate",
            tooltip="Show or hide the gate's decisions and approval cards",
        ),
        Binding(
            "ctrl+r",
            "toggle_panel('memory')",
            "Memory",
            id="panel.memory",
            tooltip="Show or hide what memory recalled for the last turn",
        ),
        Binding(
            "ctrl+t",
            "toggle_panel('actions')",
            "Actions",
            id="panel.actions",
            tooltip="Show or hide the simulated actions executed so far",
        ),
        Binding(
            "ctrl+o",
            "focus_approval",
            "Approval",
            id="approval.focus",
            tooltip="Go to the call waiting for your approval (then y, a or n)",
        ),
        Binding(
            "escape",
            "focus_prompt",
            "Prompt",
            show=False,
            id="prompt.focus",
            tooltip="Back to the message line",
        ),
    ]

    show_ledger: reactive[bool] = reactive(False, init=False)
    show_gate: reactive[bool] = reactive(False, init=False)
    show_memory: reactive[bool] = reactive(False, init=False)
    show_actions: reactive[bool] = reactive(False, init=False)
    gl: reactive[bool] = reactive(True, init=False)
    activity: reactive[str] = reactive("", init=False)

    # -- messages (posted by this screen's workers) ---------------------------------------

    @dataclass
    class SessionReady(Message):
        """A ChatSession is built (at start, or rebuilt by /model)."""

        session: ChatSession
        snapshot: Snapshot
        turns: list[Turn]
        reason: str = "start"

    @dataclass
    class TurnCompleted(Message):
        """The agent answered one user message."""

        result: TurnResult
        snapshot: Snapshot

    @dataclass
    class CommandDone(Message):
        """A command that needed the session finished."""

        command: str
        notes: list[str]
        snapshot: Snapshot
        new_session: bool = False
        step: ToolStep | None = None
        events: list[Any] = field(default_factory=list)

    # -- set-up ----------------------------------------------------------------------------

    def __init__(self, settings: Settings, today: date | None = None) -> None:
        super().__init__(id="chat")
        self.settings = settings
        self.today = today
        self.session: ChatSession | None = None
        self.snapshot: Snapshot | None = None
        self.approvals: list[Approval] = []
        self.load_error: str | None = None
        self._jobs: deque[tuple[str, Job]] = deque()
        self._job_label: str | None = None
        # Held by the worker thread while a job runs, so quitting can wait for it.
        self.job_lock = threading.Lock()
        self.set_reactive(ChatScreen.gl, settings.gl)

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Horizontal(id="main"):
            with Conversation(id="conversation"):
                yield Static(WELCOME, id="welcome", classes="hint")
            with Vertical(id="sidebar"):
                yield LedgerPanel(id="ledger-panel", classes="panel")
                yield GatePanel(id="gate-panel", classes="panel")
                yield MemoryPanel(id="memory-panel", classes="panel")
                yield ActionsPanel(id="actions-panel", classes="panel")
        yield Static("", id="activity")
        yield PromptInput(
            placeholder="Message (/help for commands)",
            id="prompt",
            suggester=SlashSuggester(self.entry_ids),
        )
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.title = "grounding"
        self.sub_title = "starting the agent…"
        wide = self.app.size.width >= WIDE  # narrow: panels open on demand, over the chat
        self.set_reactive(ChatScreen.show_ledger, wide)
        self.set_reactive(ChatScreen.show_gate, wide)
        for name in PANELS:
            self._show_panel(name, getattr(self, f"show_{name}"))
        self.query_one(PromptInput).focus()
        self.activity = "starting the agent"
        # Paint first; the session (LangGraph, Chroma, onnxruntime) loads afterwards.
        self.call_after_refresh(self._load_session)

    @property
    def conversation(self) -> Conversation:
        return self.query_one(Conversation)

    @property
    def busy(self) -> bool:
        return self._job_label is not None or bool(self._jobs) or self.session is None

    def entry_ids(self) -> list[str]:
        return [a.id for a in self.snapshot.ledger] if self.snapshot else []

    # -- the work queue ----------------------------------------------------------------------

    def _enqueue(self, label: str, job: Job) -> None:
        self._jobs.append((label, job))
        self._pump()

    def _pump(self) -> None:
        if self._job_label is not None:
            self._show_activity()
            return
        if self.session is None and self.load_error is not None:
            while self._jobs:
                label, _ = self._jobs.popleft()
                self.conversation.add_note(
                    f"{label}: the agent did not start ({self.load_error})", "error"
                )
        if self.session is None or not self._jobs:
            self._show_activity()
            return
        label, job = self._jobs.popleft()
        self._job_label = label
        self._show_activity()
        self._run_job(self.session, label, job)

    def _show_activity(self) -> None:
        if self.session is None and self.load_error is None:
            text = "starting the agent"
        else:
            text = self._job_label or ""
        if text and self._jobs:
            text += f" (+{len(self._jobs)} queued)"
        self.activity = text

    @work(thread=True, exclusive=True, group="agent", exit_on_error=False)
    def _run_job(self, session: ChatSession, label: str, job: Job) -> None:
        with self.job_lock:
            self.post_message(job(session))

    @work(thread=True, exclusive=True, group="session", exit_on_error=False, name="start")
    def _load_session(self) -> None:
        from agent.session import ChatSession

        session = ChatSession(self.settings, today=self.today)
        if get_current_worker().is_cancelled:  # the app quit while we were loading
            session.close()
            return
        self.post_message(self.SessionReady(session, Snapshot.of(session), session.turns()))

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        """The one place worker errors land: a notification, the gate panel, a note."""
        worker = event.worker
        if worker.group not in ("agent", "session"):
            return
        if event.state == WorkerState.ERROR:
            error = worker.error
            where = "starting the agent" if worker.group == "session" else self._job_label or "work"
            message = f"{type(error).__name__}: {error}"
            if worker.group == "session":
                self.load_error = message
                self.sub_title = "the agent did not start"
            self.notify(message, title=f"{where} failed", severity="error", markup=False)
            self.query_one(GatePanel).add_error(where, message)
            self.conversation.add_note(f"✗ {where} failed: {message}", "error")
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            if worker.group == "agent":
                self._job_label = None
            self._pump()

    # -- results -------------------------------------------------------------------------------

    @on(SessionReady)
    def _session_ready(self, message: SessionReady) -> None:
        old = self.session
        self.session = message.session
        self.settings = message.session.settings
        self._show_snapshot(message.snapshot)
        snap = message.snapshot
        conversation = self.conversation
        if message.reason == "start":
            conversation.add_divider(snap.session_no, snap.session_date)
            self.query_one(GatePanel).add_divider(snap.session_no, snap.session_date)
            for turn in message.turns:
                if turn.speaker == "user":
                    conversation.add_user(turn.text)
                else:
                    conversation.add_reply(turn.text)
        else:
            conversation.add_note(f"model {snap.model}: the session was rebuilt", "command")
        if old is not None and old is not message.session:
            self.notify(f"now using {snap.model}", title="model")
        self._pump()

    @on(TurnCompleted)
    def _turn_completed(self, message: TurnCompleted) -> None:
        result = message.result
        conversation = self.conversation
        gate_panel = self.query_one(GatePanel)
        blocked: list[Approval] = []
        for step in result.steps:
            if step.gate is not None and not step.gate.allowed and step.result is None:
                approval = Approval(len(self.approvals) + 1, step.gate, result.request)
                self.approvals.append(approval)
                blocked.append(approval)
                gate_panel.add_decision(step.gate, approval)
                continue
            conversation.add_tool(step)
            if step.gate is not None:
                gate_panel.add_decision(step.gate)
        conversation.add_reply(result.reply)
        for approval in blocked:
            conversation.add_approval(approval)
        self.query_one(MemoryPanel).show(result.recalled, result.request, message.snapshot.memory)
        self._show_snapshot(message.snapshot)
        if blocked:
            self.notify(
                f"{call_text(blocked[0].gate.tool, blocked[0].gate.args)} waits for your "
                "approval: ctrl+o, then y / a / n",
                title="the gate asks first",
                severity="warning",
                markup=False,
            )

    @on(CommandDone)
    def _command_done(self, message: CommandDone) -> None:
        conversation = self.conversation
        snap = message.snapshot
        if message.step is not None:
            conversation.add_tool(message.step)
        for line in message.notes:
            conversation.add_note(line, "command")
        if message.new_session:
            conversation.add_divider(snap.session_no, snap.session_date)
            self.query_one(GatePanel).add_divider(snap.session_no, snap.session_date)
            self.query_one(MemoryPanel).clear_items("Nothing recalled yet in this session.")
        self._show_snapshot(snap)

    def _show_snapshot(self, snap: Snapshot) -> None:
        self.snapshot = snap
        self.set_reactive(ChatScreen.gl, snap.gl)
        self._show_header()
        self.query_one(LedgerPanel).show_entries(snap.ledger)
        self.query_one(ActionsPanel).show(snap.actions)
        self.refresh_bindings()

    def _show_header(self) -> None:
        snap = self.snapshot
        if snap is None:
            return
        gl = "on" if self.gl else "off"
        day = snap.session_date.isoformat()
        if self.app.size.width >= 100:
            self.title = f"{snap.model} · memory {snap.memory} · GL {gl}"
            self.sub_title = f"profile {snap.profile} · {day}"
        else:  # the header has about 60 columns here
            self.title = f"{snap.model} · mem {snap.memory} · GL {gl}"
            self.sub_title = f"{snap.profile} · {day}"

    def on_resize(self) -> None:
        self._show_header()

    # -- input ---------------------------------------------------------------------------------

    @on(PromptInput.Sent)
    def _sent(self, message: PromptInput.Sent) -> None:
        text = message.text
        if text.startswith("/"):
            self.run_slash(text)
            return
        if self.app.size.width < WIDE:  # the conversation is hidden behind an open panel
            for name in PANELS:
                setattr(self, f"show_{name}", False)
        self.conversation.add_user(text)
        self._enqueue("thinking", lambda s: self.TurnCompleted(s.send(text), Snapshot.of(s)))

    def run_slash(self, text: str) -> None:
        """Run a slash command (typed, or chosen in the command palette)."""
        from tui.widgets.prompt import parse_slash

        try:
            command = parse_slash(text)
        except SlashError as exc:
            self.note(str(exc), "error")
            self.notify(str(exc), title="command", severity="warning", markup=False)
            return
        self.run_command(command)

    def run_command(self, command: SlashCommand) -> None:
        name, arg = command.name, command.arg
        if name == "/help":
            self.note(slash_help() + "\n" + KEYS_HELP, "command")
        elif name == "/quit":
            self.app.exit(0)
        elif name == "/gl":
            self.gl = arg == "on"
            self.note(f"Grounding Layer {arg}", "command")
        elif name == "/why":
            if self.session is None:
                self.note("The agent is still starting.")
            else:
                self.note(self.session.why(), "command")
        elif name == "/ledger":
            self.show_ledger = True
            self.note(self._ledger_text(), "command")
        elif name == "/new":
            days = command.days

            def new(s: ChatSession) -> Message:
                events = s.new_session(days)
                notes = _events_lines(events) or ["no ledger changes in that session"]
                return self.CommandDone(name, notes, Snapshot.of(s), new_session=True)

            self._enqueue(f"/new +{days}d", new)
        elif name == "/memory":

            def memory(s: ChatSession) -> Message:
                s.set_memory(arg)
                return self.CommandDone(name, [f"memory {arg}"], Snapshot.of(s))

            self._enqueue(f"/memory {arg}", memory)
        elif name == "/model":
            self._enqueue(f"/model {arg}", lambda s: self._rebuild(s, arg))
        elif name in ("/confirm", "/revoke"):
            self._enqueue(f"{name} {arg}", lambda s: self._ledger_change(s, name, arg))
        elif name == "/export":
            self._enqueue("/export", self._export)

    def note(self, text: str, kind: NoteKind = "info") -> None:
        self.conversation.add_note(text, kind)

    def _ledger_text(self) -> str:
        entries = self.snapshot.ledger if self.snapshot else []
        if not entries:
            return "The ledger is empty."
        return "\n".join(
            f"{a.id} {a.status.value} {a.proposer.value} {a.action_type.value}: {a.content}"
            + (f" (scope: {a.scope.text})" if a.scope and a.scope.text else "")
            for a in entries
        )

    # -- jobs (run in the worker thread) ---------------------------------------------------------

    def _rebuild(self, old: ChatSession, model: str) -> Message:
        from agent.session import ChatSession

        settings = old.settings.model_copy(update={"model": model})
        new = ChatSession(settings, home=old.home, today=self.today)
        old.release()
        return self.SessionReady(new, Snapshot.of(new), [], reason="model")

    def _ledger_change(self, s: ChatSession, name: str, entry_id: str) -> Message:
        from agent.ledger_actions import confirm_entry, revoke_entry

        change = confirm_entry if name == "/confirm" else revoke_entry
        event = change(s.agent.store, entry_id, s.session_date)
        return self.CommandDone(name, _events_lines([event]), Snapshot.of(s), events=[event])

    def _export(self, s: ChatSession) -> Message:
        from agent.ledger_actions import export_ledger

        json_path, md_path = export_ledger(s.agent.store, Path(s.home or "."))
        return self.CommandDone(
            "/export", [f"ledger exported to {json_path} and {md_path}"], Snapshot.of(s)
        )

    def _approve(self, s: ChatSession, approval: Approval, standing: bool) -> Message:
        from agent.context import ToolStep
        from agent.ledger_actions import make_standing
        from tools.runtime import Toolbox, ToolCall

        gate = approval.gate
        call = ToolCall(id=f"approved-{approval.number}", name=gate.tool, args=dict(gate.args))
        result = Toolbox(s.agent.world, s.agent.actions).run(call)
        how = "approved and made standing" if standing else "approved once"
        notes = [f"{how}: {call_text(call.name, call.args)} → {result_summary(result.content)}"]
        events = []
        if standing and result.ok:
            event = make_standing(s.agent.store, gate, s.session_date, approval.request)
            events.append(event)
            notes += _events_lines(events)
        return self.CommandDone(
            "approve", notes, Snapshot.of(s), step=ToolStep(call, result, None), events=events
        )

    def _clear_memory(self, s: ChatSession) -> Message:
        before = s.agent.memory.count()
        s.agent.memory.clear()
        return self.CommandDone(
            "memory clear", [f"memory cleared ({before} records forgotten)"], Snapshot.of(s)
        )

    def clear_memory(self) -> None:
        """Forget everything memory holds (after the user confirms)."""
        from tui.screens.confirm import ConfirmScreen

        def answered(yes: bool | None) -> None:
            if yes:
                self.query_one(MemoryPanel).clear_items("Memory cleared.")
                self._enqueue("memory clear", self._clear_memory)

        self.app.push_screen(
            ConfirmScreen("Forget everything memory holds? The ledger is kept."), answered
        )

    # -- panels and cards ---------------------------------------------------------------------

    @on(DecisionCard.Answered)
    def _answered(self, message: DecisionCard.Answered) -> None:
        approval = message.approval
        if not approval.pending:
            return
        approval.outcome = message.choice
        for card in self.query(DecisionCard):
            if card.approval is approval:
                card.show_outcome()
        gate = approval.gate
        if message.choice == "declined":
            self.note(f"declined: {call_text(gate.tool, gate.args)} was not run", "command")
        else:
            standing = message.choice == "standing"
            self._enqueue(f"approve {gate.tool}", lambda s: self._approve(s, approval, standing))
        self.refresh_bindings()
        self.action_focus_prompt()

    @on(LedgerPanel.ConfirmRequested)
    def _confirm_requested(self, message: LedgerPanel.ConfirmRequested) -> None:
        self.run_command(SlashCommand("/confirm", message.entry_id))

    @on(LedgerPanel.RevokeRequested)
    def _revoke_requested(self, message: LedgerPanel.RevokeRequested) -> None:
        self.run_command(SlashCommand("/revoke", message.entry_id))

    @on(LedgerPanel.EntrySelected)
    def _entry_selected(self, message: LedgerPanel.EntrySelected) -> None:
        if self.session is None:
            return
        store = self.session.agent.store
        try:  # a few indexed SQLite reads: fine on the UI thread
            entry = store.get(message.entry_id)
            if entry is None:
                return
            chain = store.chain(entry.id)
            events = store.events(entry.id)
        except Exception as exc:
            self.notify(f"{type(exc).__name__}: {exc}", title="ledger", severity="error")
            return
        self.query_one(LedgerPanel).show_detail(entry, chain, events)

    def _show_panel(self, name: str, show: bool) -> None:
        panel = self.query_one(f"#{name}-panel")
        if not show and panel.has_focus_within:
            self.action_focus_prompt()
        panel.display = show
        self.set_class(any(getattr(self, f"show_{n}") for n in PANELS), "-panels")

    def watch_show_ledger(self, show: bool) -> None:
        self._show_panel("ledger", show)
        if show:
            self.query_one("#ledger-table", DataTable).focus()

    def watch_show_gate(self, show: bool) -> None:
        self._show_panel("gate", show)

    def watch_show_memory(self, show: bool) -> None:
        self._show_panel("memory", show)

    def watch_show_actions(self, show: bool) -> None:
        self._show_panel("actions", show)

    def watch_gl(self, on: bool) -> None:
        if self.session is not None:
            self.session.set_gl(on)
        else:
            self.settings.gl = on
        if self.snapshot is not None:
            self.snapshot = Snapshot(**{**self.snapshot.__dict__, "gl": on})
        self._show_header()

    def watch_activity(self, text: str) -> None:
        widget = self.query_one("#activity", Static)
        widget.update(f"⋯ {text}…" if text else "")
        widget.display = bool(text)

    # -- actions -------------------------------------------------------------------------------

    def action_toggle_panel(self, name: str) -> None:
        attr = f"show_{name}"
        setattr(self, attr, not getattr(self, attr))

    def action_focus_prompt(self) -> None:
        self.query_one(PromptInput).focus()

    def _pending_card(self) -> DecisionCard | None:
        cards = [
            c
            for c in self.query(DecisionCard)
            if c.approval is not None and c.approval.pending and c.display
        ]
        in_conversation = [c for c in cards if c.parent is self.conversation]
        visible = in_conversation if self.conversation.display else []
        chosen = visible or [c for c in cards if c.parent is not self.conversation]
        return chosen[-1] if chosen else None

    def action_focus_approval(self) -> None:
        card = self._pending_card()
        if card is None:
            return
        if card.parent is not self.conversation:
            self.show_gate = True
        card.focus()
        card.scroll_visible()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "focus_approval":
            return any(a.pending for a in self.approvals)
        return True
