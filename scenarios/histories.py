"""Assemble the benchmark's dialogue histories and probes from a corpus.

Per persona there are five Latin-square versions: the scenario at position k (sorted
by id) gets condition ``"NGIRS"[(k + v) % 5]`` in version v. A history is 18 dated
sessions of dialogue only; everything the judge needs (conditions, targets,
alternatives) lives in the separate, evaluation-side `ProbeSpec` list.

Placement is deterministic and identical in all five versions of a persona (the
versions differ only in the episode turns and the R revisions), so the same corpus
always yields the same histories, byte for byte.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict

from scenarios.corpus_model import Alternative, Persona, Scenario, ToolCall
from scenarios.loader import Corpus
from tools.world import World

__all__ = [
    "CONDITIONS",
    "MIN_GAP_DAYS",
    "PROBE_DELAY_DAYS",
    "SESSIONS",
    "VERSIONS",
    "Condition",
    "DialogueTurn",
    "History",
    "ProbeSpec",
    "Session",
    "build_histories",
    "build_probes",
    "condition_for",
    "conditions_for",
    "history_digest",
    "probe_date",
    "render_transcript",
    "session_dates",
]

Condition = Literal["N", "G", "I", "R", "S"]
CONDITIONS: tuple[Condition, ...] = ("N", "G", "I", "R", "S")
VERSIONS = 5
SESSIONS = 18
MIN_GAP_DAYS = 14
"""Touchpoints and revisions come at least this many days after their episode."""
PROBE_DELAY_DAYS = 7
"""Probes happen this many days after the last session."""

# Days between consecutive sessions, cycled: 17 gaps sum to 101 days (about 3.3
# months), and any three consecutive gaps exceed MIN_GAP_DAYS.
_SESSION_GAPS = (5, 7, 6, 6)
# Episodes are spread over the first sessions so touchpoints and revisions fit after.
_EPISODE_SESSIONS = 12
# Extra days beyond MIN_GAP_DAYS before a touchpoint, cycled over the scenarios.
_TOUCHPOINT_EXTRA_DAYS = (0, 5, 10)

Speaker = Literal["user", "assistant"]
ProbeKind = Literal["base", "in_scope"]
Expected = Literal["target", "ask", "alternative"]


class DialogueTurn(BaseModel):
    """One turn of dialogue: who spoke and what they said. Nothing else."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    speaker: Speaker
    text: str


class Session(BaseModel):
    """One dated conversation of a history."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    index: int
    """1-based position in the history."""
    date: date
    turns: tuple[DialogueTurn, ...]


class History(BaseModel):
    """The 18 sessions one simulated user had with the assistant (dialogue only)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    persona: str
    version: int
    sessions: tuple[Session, ...]


class ProbeSpec(BaseModel):
    """Evaluation side: one test request against a history, with its gold behaviour."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    history_id: str
    persona: str
    version: int
    scenario_id: str
    condition: Condition
    kind: ProbeKind
    request: str
    world: World
    target: ToolCall
    alternative: Alternative | None
    """W for base probes; None for in-scope probes (their gold is the target)."""
    date: date

    @property
    def id(self) -> str:
        """Unique within a run: history, scenario and probe kind."""
        return f"{self.history_id}/{self.scenario_id}/{self.kind}"

    @property
    def expected(self) -> Expected:
        """Gold behaviour: execute the target, ask, or execute the alternative call."""
        if self.kind == "in_scope" or self.condition == "G":
            return "target"
        if self.condition == "R" and self.alternative is not None and not self.alternative.is_ask:
            return "alternative"
        return "ask"


def condition_for(position: int, version: int) -> Condition:
    """Latin square: the condition of the scenario at `position` in `version`."""
    return CONDITIONS[(position + version) % len(CONDITIONS)]


def conditions_for(scenarios: list[Scenario], version: int) -> dict[str, Condition]:
    """Scenario id -> condition in this version (scenarios ordered by id)."""
    ordered = sorted(scenarios, key=lambda s: s.id)
    return {s.id: condition_for(k, version) for k, s in enumerate(ordered)}


def session_dates(start: date) -> list[date]:
    """The dates of the 18 sessions of every history that starts on `start`."""
    dates = [start]
    for i in range(SESSIONS - 1):
        dates.append(dates[-1] + timedelta(days=_SESSION_GAPS[i % len(_SESSION_GAPS)]))
    return dates


def probe_date(start: date) -> date:
    """The date of every probe of a history that starts on `start`."""
    return session_dates(start)[-1] + timedelta(days=PROBE_DELAY_DAYS)


def build_histories(corpus: Corpus) -> list[History]:
    """Every history of the corpus: personas sorted by id, versions 0-4."""
    histories: list[History] = []
    for persona_id in sorted(corpus.personas):
        persona = corpus.personas[persona_id]
        scenarios = corpus.scenarios.get(persona_id, [])
        plan = _plan(persona, scenarios)
        for version in range(VERSIONS):
            histories.append(_assemble(persona, scenarios, plan, version))
    return histories


def build_probes(corpus: Corpus) -> dict[str, list[ProbeSpec]]:
    """History id -> its probes: one base probe per scenario, plus the G and S in-scope probes."""
    probes: dict[str, list[ProbeSpec]] = {}
    for persona_id in sorted(corpus.personas):
        persona = corpus.personas[persona_id]
        scenarios = sorted(corpus.scenarios.get(persona_id, []), key=lambda s: s.id)
        when = probe_date(persona.start)
        for version in range(VERSIONS):
            history_id = _history_id(persona_id, version)
            specs: list[ProbeSpec] = []
            for position, scenario in enumerate(scenarios):
                condition = condition_for(position, version)
                probe = scenario.probe
                specs.append(
                    ProbeSpec(
                        history_id=history_id,
                        persona=persona_id,
                        version=version,
                        scenario_id=scenario.id,
                        condition=condition,
                        kind="base",
                        request=probe.request,
                        world=probe.world,
                        target=probe.target,
                        alternative=probe.alternative,
                        date=when,
                    )
                )
                in_scope = scenario.in_scope_probe
                if in_scope is not None and condition in ("G", "S"):
                    specs.append(
                        ProbeSpec(
                            history_id=history_id,
                            persona=persona_id,
                            version=version,
                            scenario_id=scenario.id,
                            condition=condition,
                            kind="in_scope",
                            request=in_scope.request,
                            world=in_scope.world,
                            target=in_scope.target,
                            alternative=None,
                            date=when,
                        )
                    )
            probes[history_id] = specs
    return probes


def history_digest(history: History) -> str:
    """sha256 over the history's canonical JSON (sorted keys, no whitespace)."""
    payload = json.dumps(
        history.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def render_transcript(history: History) -> str:
    """A readable transcript: a dated header per session, then `User:`/`Assistant:` lines."""
    blocks: list[str] = []
    for session in history.sessions:
        lines = [f"=== Session {session.index} · {session.date.isoformat()} ==="]
        for turn in session.turns:
            who = "User" if turn.speaker == "user" else "Assistant"
            lines.append(f"{who}: {turn.text}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


# --- placement ---------------------------------------------------------------

EventKind = Literal["touchpoint", "revision", "episode"]
_EVENT_RANK: dict[EventKind, int] = {"touchpoint": 0, "revision": 1, "episode": 2}


@dataclass(frozen=True)
class _Slot:
    """Where one scenario's events go (session indices, 0-based), same in every version."""

    order: int
    episode: int
    touchpoint: int
    revision: int


def _history_id(persona_id: str, version: int) -> str:
    return f"{persona_id}-v{version}"


def _interleave_key(persona_id: str, scenario_id: str) -> str:
    # A hash, not the id, so a persona's arrangements are not introduced alphabetically.
    return hashlib.sha256(f"{persona_id}\0{scenario_id}".encode()).hexdigest()


def _first_session_after(dates: list[date], day: date) -> int:
    for index, when in enumerate(dates):
        if when >= day:
            return index
    return len(dates) - 1


def _plan(persona: Persona, scenarios: list[Scenario]) -> dict[str, _Slot]:
    """Session of each scenario's episode, touchpoint and (if R) revision."""
    dates = session_dates(persona.start)
    ordered = sorted(scenarios, key=lambda s: _interleave_key(persona.id, s.id))
    count = len(ordered)
    plan: dict[str, _Slot] = {}
    for order, scenario in enumerate(ordered):
        episode = order * _EPISODE_SESSIONS // max(count, 1)
        earliest = dates[episode] + timedelta(days=MIN_GAP_DAYS)
        extra = _TOUCHPOINT_EXTRA_DAYS[order % len(_TOUCHPOINT_EXTRA_DAYS)]
        touchpoint = _first_session_after(dates, earliest + timedelta(days=extra))
        if dates[touchpoint] < earliest:  # the extra days ran past the last session
            touchpoint = _first_session_after(dates, earliest)
        revision = min(touchpoint + 1, SESSIONS - 1)
        plan[scenario.id] = _Slot(
            order=order, episode=episode, touchpoint=touchpoint, revision=revision
        )
    for scenario_id, slot in plan.items():
        gap = min(dates[slot.touchpoint], dates[slot.revision]) - dates[slot.episode]
        if gap.days < MIN_GAP_DAYS:  # only if the schedule constants are changed badly
            raise ValueError(f"{scenario_id}: no session {MIN_GAP_DAYS} days after the episode")
    return plan


def _episode_turns(scenario: Scenario, condition: Condition) -> list[DialogueTurn]:
    episode = scenario.episode
    follow = episode.follow_ups
    if condition == "N":
        assistant, reply = episode.neutral, episode.replies.unrelated
        follow_up = follow.unrelated if follow else None
    elif condition in ("G", "R"):
        assistant, reply = episode.proposal, episode.replies.accept
        follow_up = follow.accept if follow else None
    elif condition == "I":
        assistant, reply = episode.proposal, episode.replies.unrelated
        follow_up = follow.unrelated if follow else None
    else:  # S
        assistant, reply = episode.proposal, episode.replies.scoped
        follow_up = follow.scoped if follow else None
    turns = [
        DialogueTurn(speaker="user", text=episode.user),
        DialogueTurn(speaker="assistant", text=assistant),
        DialogueTurn(speaker="user", text=reply),
    ]
    if follow_up is not None:
        turns.append(DialogueTurn(speaker="assistant", text=follow_up))
    return turns


def _exchange(user: str, assistant: str) -> list[DialogueTurn]:
    return [
        DialogueTurn(speaker="user", text=user),
        DialogueTurn(speaker="assistant", text=assistant),
    ]


def _assemble(
    persona: Persona, scenarios: list[Scenario], plan: dict[str, _Slot], version: int
) -> History:
    conditions = conditions_for(scenarios, version)
    by_id = {s.id: s for s in scenarios}
    events: list[list[tuple[int, int, list[DialogueTurn]]]] = [[] for _ in range(SESSIONS)]
    for scenario_id, slot in plan.items():
        scenario = by_id[scenario_id]
        condition = conditions[scenario_id]
        events[slot.episode].append(
            (_EVENT_RANK["episode"], slot.order, _episode_turns(scenario, condition))
        )
        events[slot.touchpoint].append(
            (
                _EVENT_RANK["touchpoint"],
                slot.order,
                _exchange(scenario.touchpoint.user, scenario.touchpoint.assistant),
            )
        )
        if condition == "R":
            events[slot.revision].append(
                (
                    _EVENT_RANK["revision"],
                    slot.order,
                    _exchange(scenario.revision.user, scenario.revision.assistant),
                )
            )
    dates = session_dates(persona.start)
    sessions: list[Session] = []
    for index in range(SESSIONS):
        blocks = [turns for _, _, turns in sorted(events[index], key=lambda e: (e[0], e[1]))]
        filler = persona.fillers[index % len(persona.fillers)]
        # The filler moves around inside the session so it is not always first or last.
        blocks.insert(index % (len(blocks) + 1), _exchange(filler.user, filler.assistant))
        sessions.append(
            Session(
                id=f"{persona.id}-s{index + 1:02d}",
                index=index + 1,
                date=dates[index],
                turns=tuple(turn for block in blocks for turn in block),
            )
        )
    return History(
        id=_history_id(persona.id, version),
        persona=persona.id,
        version=version,
        sessions=tuple(sessions),
    )
