"""`grounding demo`: the Textual app that compares the Grounding Layer off and on.

The app paints first and loads the corpus in a worker; the agents (LangGraph,
Chroma, the embedder, litellm for a model) load only when a case runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.worker import Worker, WorkerState

from agent.settings import Settings
from scenarios.demo import DEFAULT_CONDITION, DEFAULT_CORPUS, DemoCase, DemoError, prepare
from scenarios.histories import Condition
from scenarios.loader import Corpus
from tui.screens.demo import DemoContext, DemoScreen, Runner, ScenarioPicker


class DemoApp(App[int]):
    """Pick a scenario, watch its history, see what GL off and GL on do with the probe."""

    CSS_PATH = "demo.tcss"
    TITLE = "grounding demo"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", id="quit", tooltip="Quit the demo", priority=True),
    ]

    @dataclass
    class CorpusLoaded(Message):
        corpus: Corpus

    def __init__(
        self,
        settings: Settings,
        *,
        corpus_dir: Path = DEFAULT_CORPUS,
        scenario_id: str | None = None,
        condition: Condition = DEFAULT_CONDITION,
        runner: Runner | None = None,
    ) -> None:
        super().__init__()
        if runner is None:
            from scenarios.demo import run_case

            runner = run_case
        self.context = DemoContext(settings=settings, runner=runner)
        self.corpus_dir = corpus_dir
        self.scenario_id = scenario_id
        self.condition: Condition = condition
        self.picker = ScenarioPicker()

    def on_mount(self) -> None:
        s = self.context.settings
        self.sub_title = f"model {s.model} · memory {s.memory} · corpus {self.corpus_dir.name}"
        self.push_screen(self.picker)
        self.load_corpus()

    @work(thread=True, exclusive=True, group="corpus", exit_on_error=False)
    def load_corpus(self) -> None:
        from scenarios.loader import load_corpus

        self.post_message(self.CorpusLoaded(load_corpus(self.corpus_dir)))

    @on(CorpusLoaded)
    def _corpus_loaded(self, event: CorpusLoaded) -> None:
        from scenarios.demo import scenario_list

        self.context.corpus = event.corpus
        self.picker.show_scenarios(scenario_list(event.corpus))
        if self.scenario_id is not None:
            scenario_id, self.scenario_id = self.scenario_id, None
            self.open_case(DemoCase(scenario_id, self.condition))

    @on(ScenarioPicker.Picked)
    def _picked(self, event: ScenarioPicker.Picked) -> None:
        condition = self.condition
        if isinstance(self.screen, DemoScreen):  # pragma: no cover - picker is below
            condition = self.screen.case.condition
        self.open_case(DemoCase(event.scenario_id, condition))

    def open_case(self, case: DemoCase) -> None:
        """Show one case; an unknown scenario at start-up ends the app with an error."""
        assert self.context.corpus is not None
        try:
            prepare(self.context.corpus, case)
        except DemoError as exc:
            self.exit(2, return_code=2, message=f"grounding demo: {exc}")
            return
        self.push_screen(DemoScreen(self.context, case))

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "corpus" and event.state == WorkerState.ERROR:
            self.exit(2, return_code=2, message=f"grounding demo: {event.worker.error}")


def make_demo_app(
    settings: Settings,
    *,
    corpus_dir: Path = DEFAULT_CORPUS,
    scenario_id: str | None = None,
    condition: Condition = DEFAULT_CONDITION,
    runner: Runner | None = None,
) -> DemoApp:
    """The one demo app factory, shared by the CLI and the tests."""
    return DemoApp(
        settings,
        corpus_dir=corpus_dir,
        scenario_id=scenario_id,
        condition=condition,
        runner=runner,
    )


def run_demo(
    settings: Settings,
    *,
    corpus_dir: str | Path | None = None,
    scenario_id: str | None = None,
    condition: Condition = DEFAULT_CONDITION,
) -> int:
    """Run the demo app in the terminal; the exit code of `grounding demo`."""
    app = make_demo_app(
        settings,
        corpus_dir=Path(corpus_dir) if corpus_dir else DEFAULT_CORPUS,
        scenario_id=scenario_id,
        condition=condition,
    )
    app.run()
    return app.return_code or 0
