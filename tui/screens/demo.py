"""The demo screens: pick a scenario, walk through its history, compare GL off and on.

The screens only show things. What happens to the probe is computed by
`scenarios.demo.run_case` in a thread worker; the result comes back as a
`DemoScreen.CaseReady` message and is cached per case for the app's lifetime.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Protocol

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Header, LoadingIndicator, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState, get_current_worker

from scenarios.demo import (
    CONDITION_NAMES,
    DemoCancelled,
    DemoCase,
    DemoError,
    DemoProgress,
    DemoResult,
    DemoSetup,
    ScenarioInfo,
    SideOutcome,
    prepare,
)
from scenarios.histories import CONDITIONS, Condition, Session

if TYPE_CHECKING:
    from agent.settings import Settings
    from scenarios.loader import Corpus


class Runner(Protocol):
    """How a case is run: `scenarios.demo.run_case`, or a stand-in given by the caller."""

    def __call__(
        self,
        setup: DemoSetup,
        settings: Settings,
        *,
        progress: Callable[[DemoProgress], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> DemoResult: ...


@dataclass
class DemoContext:
    """What the demo screens share: settings, the corpus, the runner and finished cases."""

    settings: Settings
    runner: Runner
    corpus: Corpus | None = None
    results: dict[DemoCase, DemoResult] = field(default_factory=dict)


_CONDITION_KEYS = Binding.Group("Condition", compact=True)

_EXPECTED = {
    "target": "act: the arrangement covers this request",
    "ask": "ask first: nothing authorizes acting on its own",
    "alternative": "follow the revision",
}


# --- scenario picker ------------------------------------------------------------


class ScenarioPicker(Screen[None]):
    """A list of the corpus's scenarios; enter opens one in the demo."""

    @dataclass
    class Picked(Message):
        """The user chose a scenario."""

        scenario_id: str

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Static(
            "Pick a scenario (↑ ↓, enter). Its history goes to two agents with the same model "
            "and memory, one with the Grounding Layer off, one with it on.",
            id="pick-hint",
        )
        yield LoadingIndicator(id="pick-loading")
        yield OptionList(id="scenarios")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#scenarios").display = False

    def show_scenarios(self, scenarios: list[ScenarioInfo]) -> None:
        options = self.query_one("#scenarios", OptionList)
        options.clear_options()
        options.add_options(
            Option(
                Content.assemble(
                    (s.id, "bold"),
                    (f"  {s.action} · {s.stakes} stakes", "$text-muted"),
                    "\n",
                    (f"  {s.arrangement}", "italic"),
                ),
                id=s.id,
            )
            for s in scenarios
        )
        self.query_one("#pick-loading").display = False
        options.display = True
        options.highlighted = 0 if scenarios else None
        options.focus()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(self.Picked(event.option.id))


# --- the demo itself --------------------------------------------------------------


class SessionView(Static):
    """One session of the history, with the chosen scenario's turns highlighted."""

    def __init__(self, setup: DemoSetup, session: Session) -> None:
        marks = {t: role for (s, t), role in setup.highlights.items() if s == session.index}
        roles = sorted(set(marks.values()))
        header = Content.assemble(
            (f"Session {session.index}", "bold"),
            (f" · {session.date.isoformat()}", "$text-muted"),
            *((f"  [{role}]", "bold $accent") for role in roles),
        )
        lines: list[Content] = [header]
        for i, turn in enumerate(session.turns):
            who = "User" if turn.speaker == "user" else "Assistant"
            if i in marks:
                lines.append(Content.assemble((f"▌{who}: ", "bold $accent"), (turn.text, "bold")))
            else:
                lines.append(Content.assemble((f" {who}: ", "$text-muted"), turn.text))
        super().__init__(
            Content("\n").join(lines),
            classes="session scenario" if marks else "session",
        )


class DemoScreen(Screen[None]):
    """History session by session, then the probe to GL off and GL on, side by side."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *(
            Binding(
                c.lower(),
                f"condition('{c}')",
                c,
                id=f"demo.condition.{c.lower()}",
                tooltip=f"Condition {c}: {CONDITION_NAMES[c]}",
                group=_CONDITION_KEYS,
            )
            for c in CONDITIONS
        ),
        Binding(
            "p",
            "in_scope",
            "In-scope",
            id="demo.in_scope",
            tooltip="Toggle the in-scope probe (a request the agreed scope covers; G or S)",
        ),
        Binding(
            "enter",
            "step",
            "Next session",
            id="demo.step",
            tooltip="Show the next session of the history, then the probe",
        ),
        Binding(
            "space",
            "step",
            "Next session",
            id="demo.step_space",
            tooltip="Show the next session of the history, then the probe",
            show=False,
        ),
        Binding(
            "k",
            "skip",
            "Skip to probe",
            id="demo.skip",
            tooltip="Show the rest of the history and the outcome of the probe",
        ),
        Binding(
            "ctrl+r",
            "replay",
            "Replay",
            id="demo.replay",
            tooltip="Replay: walk through the history again and rerun both agents",
        ),
        Binding(
            "escape",
            "back",
            "Scenarios",
            id="demo.back",
            tooltip="Back to the list of scenarios",
        ),
    ]

    shown: reactive[int] = reactive(0, init=False)
    """How many sessions of the history are on screen."""
    at_probe: reactive[bool] = reactive(False, init=False)
    """True once the history is done and the probe's outcome is on screen."""

    @dataclass
    class CaseReady(Message, bubble=False):
        """Both agents have answered the probe of a case."""

        result: DemoResult

    @dataclass
    class RunProgress(Message, bubble=False):
        """A step of a case's run (ingesting a session, sending the probe)."""

        case: DemoCase
        progress: DemoProgress

    def __init__(self, context: DemoContext, case: DemoCase) -> None:
        super().__init__()
        self.context = context
        self.case = case
        self.setup: DemoSetup | None = None

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Static(id="case")
        yield VerticalScroll(id="history")
        with Horizontal(id="status"):
            yield Static(id="status-text")
            yield ProgressBar(id="progress", show_eta=False)
        yield Static(id="probe")
        with Horizontal(id="sides"):
            for side in ("off", "on"):
                with VerticalScroll(id=f"gl-{side}", classes="side"):
                    yield Static(id=f"outcome-{side}", classes="outcome")
        yield Footer()

    async def on_mount(self) -> None:
        self.query_one("#gl-off").border_title = "Grounding Layer off"
        self.query_one("#gl-on").border_title = "Grounding Layer on"
        await self.start(self.case)

    # -- the flow --------------------------------------------------------------

    async def start(self, case: DemoCase, *, fresh: bool = False, to_probe: bool = False) -> None:
        """Show `case` from its first session (or straight at the probe) and run it if needed."""
        assert self.context.corpus is not None
        setup = prepare(self.context.corpus, case)  # DemoError before anything changes
        self.case, self.setup = case, setup
        if fresh:
            self.context.results.pop(case, None)
        self._render_case()
        history = self.query_one("#history", VerticalScroll)
        await history.remove_children()
        self.set_reactive(DemoScreen.shown, 0)
        self.set_reactive(DemoScreen.at_probe, False)
        self.remove_class("-at-probe")
        for side in ("off", "on"):
            panel = self.query_one(f"#gl-{side}")
            panel.remove_class("correct", "incorrect")
            self.query_one(f"#outcome-{side}", Static).update("")
        self.query_one("#probe", Static).update(self._probe_content())
        result = self.context.results.get(case)
        if result is None:
            self._set_status(f"Running both agents on {case.scenario_id} in the background…", 0)
            self.run_case(self.setup)
        else:
            self._set_status(None)
        if to_probe:
            self.action_skip()
        else:
            self.shown = 1

    def watch_shown(self, old: int, new: int) -> None:
        assert self.setup is not None
        sessions = self.setup.history.sessions
        history = self.query_one("#history", VerticalScroll)
        views = [SessionView(self.setup, s) for s in sessions[old:new]]
        if views:
            history.mount_all(views)
            history.call_after_refresh(history.scroll_end, animate=False)
        self._history_title()

    def watch_at_probe(self, at_probe: bool) -> None:
        self.set_class(at_probe, "-at-probe")
        self._history_title()
        if at_probe:
            self._show_outcomes()
            # Bring the chosen scenario's first session into view: its evidence.
            marked = self.query(".session.scenario")
            if marked:
                history = self.query_one("#history", VerticalScroll)
                first = marked.first()
                history.call_after_refresh(history.scroll_to_widget, first, animate=False, top=True)

    def action_step(self) -> None:
        if self.setup is None or self.at_probe:  # not started yet, or nothing left to step
            return
        if self.shown < len(self.setup.history.sessions):
            self.shown += 1
        else:
            self.at_probe = True

    def action_skip(self) -> None:
        if self.setup is None:
            return
        self.shown = len(self.setup.history.sessions)
        self.at_probe = True

    async def action_condition(self, condition: Condition) -> None:
        if self.setup is None:
            return
        kind = self.case.kind if condition in ("G", "S") else "base"
        await self._switch(DemoCase(self.case.scenario_id, condition, kind))

    async def action_in_scope(self) -> None:
        if self.setup is None:
            return
        case = self.case
        if case.kind == "in_scope":
            await self._switch(DemoCase(case.scenario_id, case.condition, "base"))
        else:
            condition: Condition = case.condition if case.condition in ("G", "S") else "S"
            await self._switch(DemoCase(case.scenario_id, condition, "in_scope"))

    async def action_replay(self) -> None:
        if self.setup is None:
            return
        await self.start(self.case, fresh=True)

    def action_back(self) -> None:
        self.app.pop_screen()

    async def _switch(self, case: DemoCase) -> None:
        if case == self.case:
            return
        try:
            await self.start(case, to_probe=self.at_probe)
        except DemoError as exc:
            self.notify(str(exc), title="Not available", severity="warning")

    # -- the worker --------------------------------------------------------------

    @work(thread=True, exclusive=True, group="demo-run", exit_on_error=False)
    def run_case(self, setup: DemoSetup) -> None:
        worker = get_current_worker()

        def progress(step: DemoProgress) -> None:
            self.post_message(self.RunProgress(setup.case, step))

        result = self.context.runner(
            setup,
            self.context.settings,
            progress=progress,
            cancelled=lambda: worker.is_cancelled,
        )
        self.post_message(self.CaseReady(result))

    @on(RunProgress)
    def _progress(self, event: RunProgress) -> None:
        if event.case == self.case and self.case not in self.context.results:
            self._set_status(event.progress.label, event.progress.step, event.progress.total)

    @on(CaseReady)
    def _ready(self, event: CaseReady) -> None:
        self.context.results[event.result.case] = event.result
        if event.result.case != self.case:
            return
        self._set_status(None)
        if self.at_probe:
            self._show_outcomes()

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        if isinstance(error, DemoCancelled):
            return
        message = f"{type(error).__name__}: {error}"
        self._set_status(f"The run failed: {message}")
        for side in ("off", "on"):
            self.query_one(f"#gl-{side}").loading = False
            self.query_one(f"#outcome-{side}", Static).update(
                Content.assemble(("The run failed. ", "bold $error"), message)
            )
        self.notify(message, title="Demo run failed", severity="error", timeout=10)

    # -- rendering ---------------------------------------------------------------

    def _render_case(self) -> None:
        assert self.setup is not None
        setup, case = self.setup, self.case
        picks: list[str | tuple[str, str]] = []
        for c in CONDITIONS:
            style = "bold reverse $accent" if c == case.condition else "$text-muted"
            picks += [(f" {c} ", style), " "]
        in_scope = "reverse $accent" if case.kind == "in_scope" else "$text-muted"
        self.query_one("#case", Static).update(
            Content.assemble(
                (case.scenario_id, "bold"),
                (f" · {setup.persona_name} · history {setup.history.id}   ", "$text-muted"),
                *picks,
                (" in-scope ", in_scope),
                "\n",
                ("Arrangement: ", "$text-muted"),
                (setup.arrangement, "italic"),
                ("   (shown to you, never to the agents)", "$text-muted"),
                "\n",
                ("Condition: ", "$text-muted"),
                case.label,
            )
        )

    def _history_title(self) -> None:
        assert self.setup is not None
        total = len(self.setup.history.sessions)
        marked = ", ".join(str(i) for i in self.setup.scenario_sessions)
        where = "probe" if self.at_probe else f"session {self.shown} of {total}"
        history = self.query_one("#history")
        history.border_title = f"History · {where}"
        history.border_subtitle = f"this scenario: sessions {marked}"

    def _probe_content(self) -> Content:
        assert self.setup is not None
        probe = self.setup.probe
        return Content.assemble(
            (f"Probe · {probe.date.isoformat()} · ", "$text-muted"),
            ("User: ", "bold"),
            probe.request,
            "\n",
            ("Correct here: ", "$text-muted"),
            (_EXPECTED[probe.expected], "bold"),
        )

    def _set_status(self, text: str | None, step: int = 0, total: int = 0) -> None:
        status = self.query_one("#status")
        if text is None:
            status.display = False
            return
        status.display = True
        self.query_one("#status-text", Static).update(text)
        bar = self.query_one("#progress", ProgressBar)
        bar.display = total > 0 or step == 0
        bar.update(total=total or None, progress=step)

    def _show_outcomes(self) -> None:
        result = self.context.results.get(self.case)
        for side in ("off", "on"):
            panel = self.query_one(f"#gl-{side}")
            panel.loading = result is None
            if result is None:
                continue
            outcome = result.on if side == "on" else result.off
            panel.set_class(outcome.correct, "correct")
            panel.set_class(not outcome.correct, "incorrect")
            self.query_one(f"#outcome-{side}", Static).update(render_side(outcome))


def render_side(side: SideOutcome) -> Content:
    """One side of the comparison: the outcome first, then what it rests on."""
    mark, style = ("✓ ", "bold $success") if side.correct else ("✗ ", "bold $error")
    parts: list[str | Content | tuple[str, str]] = [(mark + side.outcome, style), "\n\n"]
    did = "; ".join(
        f"{c['tool']}({', '.join(f'{k}={v}' for k, v in c['args'].items())})" for c in side.executed
    )
    parts += [("Did: ", "bold"), did or "no side-effecting call", "\n"]
    parts += [("Reply: ", "bold"), side.reply, "\n"]
    if side.gl:
        if side.gates:
            for gate in side.gates:
                parts += [("Gate: ", "bold"), (f"{gate.decision} {gate.tool}", "bold")]
                if gate.reason not in side.outcome:
                    parts += [": ", (gate.reason, "italic")]
                parts.append("\n")
        else:
            parts += [("Gate: ", "bold"), "no consequential call reached it", "\n"]
        if side.evidence:
            parts += [("Evidence:", "bold"), "\n"]
            parts += _quotes(side.evidence)
        if side.ledger:
            parts += [("Ledger:", "bold"), "\n"]
        for entry in side.ledger:
            scope = f" (scope: {entry.scope})" if entry.scope else ""
            parts += [
                ("  ", ""),
                (f"{entry.id} {entry.status}", "bold"),
                (f" · {entry.proposer}: ", "$text-muted"),
                f"{entry.content}{scope}",
                "\n",
            ]
            if not side.evidence:  # no gate decision quoted anything: the entry's own quotes
                parts += _quotes(entry.evidence, indent="    ")
    else:
        parts += [("Gate: ", "bold"), ("off (memory only)", "$text-muted"), "\n"]
    parts += [("Judged: ", "$text-muted"), (str(side.judgement), "$text-muted")]
    return Content.assemble(*parts)


def _quotes(quotes: tuple[str, ...], indent: str = "  ") -> list[str | tuple[str, str]]:
    parts: list[str | tuple[str, str]] = []
    for quote in quotes:
        parts += [(f"{indent}> ", "$accent"), (quote, "$text-accent"), "\n"]
    return parts
