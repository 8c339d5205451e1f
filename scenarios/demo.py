"""The demo, headless: one scenario, one condition, two agents side by side.

`grounding demo` shows how the same agent, with the same model and the same
memory, handles one probe with the Grounding Layer off and on. This module does
the work; the Textual screen only shows it (and this module never imports
Textual).

The history is the benchmark's own: the Latin-square version of the persona
in which the chosen scenario has the chosen condition (it holds all of the
persona's scenarios, as a real user's history would). It reaches the agents
through the replay path (`history_turns`, `Agent.remember`) and the probe
through `Agent.respond(request, date, world=...)`, so only dialogue turns and
the probe's request and world are ever seen by an agent; the evaluation-only
fields stay here, for the judge and for the human watching.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from scenarios.histories import (
    CONDITIONS,
    Condition,
    History,
    ProbeKind,
    ProbeSpec,
    build_histories,
    build_probes,
)
from scenarios.judge import Judgement, is_correct, judge
from scenarios.loader import Corpus

if TYPE_CHECKING:
    from agent.factory import TurnResult
    from agent.settings import Settings
    from ledger.model import Arrangement, GateResult

__all__ = [
    "CONDITION_NAMES",
    "DEFAULT_CONDITION",
    "DEFAULT_CORPUS",
    "DemoCancelled",
    "DemoCase",
    "DemoError",
    "DemoProgress",
    "DemoResult",
    "DemoSetup",
    "GateView",
    "Highlight",
    "LedgerView",
    "ScenarioInfo",
    "SideOutcome",
    "describe_outcome",
    "prepare",
    "run_case",
    "scenario_list",
]

DEFAULT_CORPUS = Path(__file__).resolve().parent / "corpus"
"""The benchmark corpus shipped with the package."""

DEFAULT_CONDITION: Condition = "I"
"""The condition the demo opens with: a proposal the user never answered."""

CONDITION_NAMES: dict[Condition, str] = {
    "N": "no proposal",
    "G": "proposal accepted",
    "I": "proposal ignored",
    "R": "accepted, later revised",
    "S": "accepted within a scope",
}

_VERBS = {"rsvp": "RSVPed", "purchase": "purchased", "send": "sent"}

Highlight = Literal["episode", "touchpoint", "revision"]


class DemoError(ValueError):
    """The requested case does not exist in this corpus (unknown id, no in-scope probe)."""


class DemoCancelled(Exception):
    """`run_case` stopped early because its caller asked it to."""


@dataclass(frozen=True)
class DemoCase:
    """What to show: a scenario, the condition of its history, and which probe."""

    scenario_id: str
    condition: Condition = DEFAULT_CONDITION
    kind: ProbeKind = "base"

    def __post_init__(self) -> None:
        if self.condition not in CONDITIONS:
            raise DemoError(f"unknown condition {self.condition!r}; use one of N, G, I, R, S")
        if self.kind == "in_scope" and self.condition not in ("G", "S"):
            raise DemoError("in-scope probes exist only for conditions G and S")

    @property
    def label(self) -> str:
        probe = "in-scope probe" if self.kind == "in_scope" else "probe"
        return f"{self.condition} ({CONDITION_NAMES[self.condition]}) · {probe}"


@dataclass(frozen=True)
class ScenarioInfo:
    """One line of the scenario picker (for the human; never shown to an agent)."""

    id: str
    persona: str
    action: str
    stakes: str
    arrangement: str
    has_in_scope: bool


def scenario_list(corpus: Corpus) -> list[ScenarioInfo]:
    """Every scenario of the corpus, persona by persona, sorted by id."""
    return [
        ScenarioInfo(
            id=s.id,
            persona=s.persona,
            action=s.action,
            stakes=s.stakes,
            arrangement=s.arrangement,
            has_in_scope=s.in_scope_probe is not None,
        )
        for s in corpus.all_scenarios()
    ]


@dataclass(frozen=True)
class DemoSetup:
    """A case resolved against a corpus: its history, its probe, what to highlight."""

    case: DemoCase
    history: History
    probe: ProbeSpec
    persona_name: str
    arrangement: str
    """X, as text: shown to the human watching, never to the agents."""
    highlights: Mapping[tuple[int, int], Highlight]
    """(session index, turn index) -> the role of that turn for the chosen scenario."""

    @property
    def scenario_sessions(self) -> list[int]:
        """Indices of the sessions holding the chosen scenario's turns."""
        return sorted({session for session, _ in self.highlights})


def prepare(corpus: Corpus, case: DemoCase) -> DemoSetup:
    """Find the history version and the probe that give `case` (fast: no agent involved)."""
    try:
        scenario = corpus.scenario(case.scenario_id)
    except KeyError:
        known = ", ".join(s.id for s in corpus.all_scenarios()[:5])
        raise DemoError(
            f"no scenario {case.scenario_id!r} in {corpus.path} (e.g. {known})"
        ) from None
    if case.kind == "in_scope" and scenario.in_scope_probe is None:
        raise DemoError(f"{scenario.id} has no in-scope probe")
    probes = build_probes(corpus)
    for history in build_histories(corpus):
        if history.persona != scenario.persona:
            continue
        for probe in probes[history.id]:
            if (probe.scenario_id, probe.condition, probe.kind) == (
                scenario.id,
                case.condition,
                case.kind,
            ):
                return DemoSetup(
                    case=case,
                    history=history,
                    probe=probe,
                    persona_name=corpus.personas[scenario.persona].name,
                    arrangement=scenario.arrangement,
                    highlights=_highlights(history, scenario, case.condition),
                )
    raise DemoError(
        f"no history gives {scenario.id} condition {case.condition}"
    )  # pragma: no cover


def _highlights(
    history: History, scenario: Any, condition: Condition
) -> dict[tuple[int, int], Highlight]:
    ep = scenario.episode
    roles: dict[str, Highlight] = {}
    texts = [ep.user, ep.proposal, ep.neutral, *ep.replies.model_dump().values()]
    if ep.follow_ups is not None:
        texts += [t for t in ep.follow_ups.model_dump().values() if t]
    for text in texts:
        roles[text] = "episode"
    roles[scenario.touchpoint.user] = roles[scenario.touchpoint.assistant] = "touchpoint"
    if condition == "R":
        roles[scenario.revision.user] = roles[scenario.revision.assistant] = "revision"
    return {
        (session.index, i): roles[turn.text]
        for session in history.sessions
        for i, turn in enumerate(session.turns)
        if turn.text in roles
    }


# --- running both agents ------------------------------------------------------


@dataclass(frozen=True)
class GateView:
    """One gate decision, as the demo shows it."""

    decision: str
    tool: str
    reason: str
    evidence: tuple[str, ...]
    """Quoted turns: `date speaker: "text"`."""

    @classmethod
    def of(cls, gate: GateResult) -> GateView:
        return cls(
            decision=str(gate.decision),
            tool=gate.tool,
            reason=gate.reason,
            evidence=tuple(f'{e.session_date} {e.speaker}: "{e.text}"' for e in gate.evidence),
        )


@dataclass(frozen=True)
class LedgerView:
    """One ledger entry as the GL-on agent saw it at the probe."""

    id: str
    status: str
    proposer: str
    content: str
    scope: str
    evidence: tuple[str, ...]

    @classmethod
    def of(cls, entry: Arrangement) -> LedgerView:
        return cls(
            id=entry.id,
            status=str(entry.status),
            proposer=str(entry.proposer),
            content=entry.content,
            scope=entry.scope.text if entry.scope else "",
            evidence=tuple(f'{e.session_date} {e.speaker}: "{e.text}"' for e in entry.evidence),
        )


LEDGER_SHOWN = 3
"""At most this many ledger entries of the probe's action type are shown per side."""


@dataclass(frozen=True)
class SideOutcome:
    """What one agent (Grounding Layer off or on) did with the probe, judged."""

    gl: bool
    executed: tuple[dict[str, Any], ...]
    reply: str
    gates: tuple[GateView, ...]
    judgement: Judgement
    asked: bool
    correct: bool
    outcome: str
    """One line for humans: "RSVPed without authorization", "asked first: ..."."""
    ledger: tuple[LedgerView, ...] = ()
    """GL on: the entries for the probe's action, most related to the request first."""

    @property
    def evidence(self) -> tuple[str, ...]:
        """The quotes behind the decisive gate decision (empty without one)."""
        gate = _decisive(self.gates)
        return gate.evidence if gate else ()


@dataclass(frozen=True)
class DemoResult:
    """Both sides of one case."""

    case: DemoCase
    off: SideOutcome
    on: SideOutcome
    seconds: float


@dataclass(frozen=True)
class DemoProgress:
    """Progress of `run_case`: `step` of `total`, and what is happening."""

    step: int
    total: int
    label: str


def _decisive(gates: Sequence[GateView]) -> GateView | None:
    """The decision that shaped the outcome: the first one that did not allow, else the first."""
    for gate in gates:
        if gate.decision != "allow":
            return gate
    return gates[0] if gates else None


def describe_outcome(
    probe: ProbeSpec,
    judgement: Judgement,
    asked: bool,
    correct: bool,
    executed: Sequence[Mapping[str, Any]],
    gates: Sequence[GateView],
) -> str:
    """The one-line human reading of a judged probe."""
    verb = _VERBS.get(probe.target.tool, probe.target.tool)
    gate = _decisive(gates)
    because = f": {gate.reason}" if gate else ""
    if judgement is Judgement.executed_target:
        if correct:
            return f"{verb} as agreed{because}"
        allowed = f" (the gate allowed it: {gate.reason})" if gate else ""
        if probe.condition == "R":
            return f"{verb} despite the revision{allowed}"
        if probe.condition == "S":
            return f"{verb} outside the agreed scope{allowed}"
        return f"{verb} without authorization{allowed}"
    if judgement is Judgement.executed_alternative:
        return f"followed the revision{because}"
    if judgement is Judgement.executed_other:
        calls = "; ".join(_call_text(c) for c in executed)
        return f"did something else without asking: {calls}"
    if gate is not None and gate.decision == "follow_revision":
        return f"followed the revision, asked first{because}"
    if not correct and probe.expected == "target":
        return f"asked instead of acting{because}" if asked else "did nothing"
    if not correct and probe.expected == "alternative":
        return "asked instead of following the revision" if asked else "did nothing"
    if asked:
        return f"asked first{because}"
    return "did nothing, and did not ask"


def _call_text(call: Mapping[str, Any]) -> str:
    args = ", ".join(f"{k}={v}" for k, v in (call.get("args") or {}).items())
    return f"{call.get('tool')}({args})"


def _related_entries(probe: ProbeSpec, entries: list[Arrangement]) -> tuple[LedgerView, ...]:
    """The ledger entries for the probe's action, the ones closest to the request first.

    Shown for context (the GL-on policy reads the ledger too, and may ask before
    any call reaches the gate); the order is a display heuristic, not the gate's.
    """
    from ledger.text import lexical_similarity

    same_action = [e for e in entries if str(e.action_type) == probe.target.tool]
    ranked = sorted(
        same_action,
        key=lambda e: -lexical_similarity(probe.request, f"{e.content} {e.context}"),
    )
    return tuple(LedgerView.of(e) for e in ranked[:LEDGER_SHOWN])


def _judged(
    probe: ProbeSpec, result: TurnResult, gl: bool, ledger: tuple[LedgerView, ...] = ()
) -> SideOutcome:
    target = probe.target.model_dump()
    alternative: dict[str, Any] | None = None
    if probe.alternative is not None:
        alt = probe.alternative
        alternative = (
            {"ask": True} if alt.is_ask else {"tool": alt.tool, "args": dict(alt.args or {})}
        )
    judgement, asked = judge(result.executed, result.reply, target, alternative)
    correct = is_correct(probe.condition, probe.kind, judgement, asked, alternative)
    gates = tuple(GateView.of(g) for g in result.gate_decisions)
    executed = tuple(result.executed)
    return SideOutcome(
        gl=gl,
        executed=executed,
        reply=result.reply,
        gates=gates,
        judgement=judgement,
        asked=asked,
        correct=correct,
        outcome=describe_outcome(probe, judgement, asked, correct, executed, gates),
        ledger=ledger,
    )


def run_case(
    setup: DemoSetup,
    settings: Settings,
    *,
    work_dir: Path | None = None,
    progress: Callable[[DemoProgress], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> DemoResult:
    """Ingest the history into two fresh agents (GL off, GL on) and send each the probe.

    Each agent lives in its own temporary directory under `work_dir` (removed
    afterwards); both use `settings` except for `gl`. `cancelled` is polled
    between sessions: when it returns True, `DemoCancelled` is raised.
    """
    from agent.factory import build_agent
    from scenarios.replay import history_turns

    sessions = history_turns(setup.history)
    total = 2 * (len(sessions) + 1)
    step = 0

    def tick(label: str) -> None:
        nonlocal step
        if cancelled is not None and cancelled():
            raise DemoCancelled(setup.case)
        step += 1
        if progress is not None:
            progress(DemoProgress(step, total, label))

    started = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="grounding-demo-", dir=work_dir))
    sides: dict[bool, SideOutcome] = {}
    try:
        for gl in (False, True):
            side = "on" if gl else "off"
            agent = build_agent(
                settings.model_copy(update={"gl": gl}),
                root / f"gl-{side}",
                namespace=f"demo-gl-{side}",
                profile_text=setup.persona_name,
            )
            try:
                for turns in sessions:
                    tick(f"GL {side}: remembering session {turns[0].session_id}")
                    agent.remember(turns)
                tick(f"GL {side}: sending the probe")
                result = agent.respond(
                    setup.probe.request, setup.probe.date, world=setup.probe.world
                )
                ledger = _related_entries(setup.probe, agent.ledger()) if gl else ()
                sides[gl] = _judged(setup.probe, result, gl, ledger)
            finally:
                try:
                    agent.memory.drop()  # a Chroma server outlives the temp dir
                finally:
                    agent.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return DemoResult(
        case=setup.case,
        off=sides[False],
        on=sides[True],
        seconds=time.perf_counter() - started,
    )
