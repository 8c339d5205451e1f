"""Pydantic models of the scenario corpus files (SCENARIO_FORMAT.md, version 1).

These models are the edge of the benchmark: a persona file and a scenario file are
validated against them field by field, unknown keys are rejected. Cross-file rules
(file names, persona directories, duplicate ids) live in `scenarios.loader`, content
rules (acknowledgements, leakage, tool ids) in `scenarios.validate`.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from tools.world import World

__all__ = [
    "ID_PATTERN",
    "SIDE_EFFECTING_TOOLS",
    "Alternative",
    "Counterpart",
    "Episode",
    "Exchange",
    "FollowUps",
    "InScopeProbe",
    "Persona",
    "Probe",
    "Replies",
    "Scenario",
    "ToolCall",
]

ID_PATTERN = r"^[a-z0-9-]+$"
"""Persona and scenario ids: lowercase letters, digits and hyphens."""

SIDE_EFFECTING_TOOLS: tuple[str, ...] = ("rsvp", "purchase", "send")
"""The consequential tools an arrangement can govern."""

MIN_FILLERS = 18


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


Text = Annotated[str, AfterValidator(_not_blank)]
"""A non-empty piece of text (kept exactly as written)."""

Id = Annotated[str, Field(pattern=ID_PATTERN)]


class _Strict(BaseModel):
    """Base for corpus models: unknown keys are an error."""

    model_config = ConfigDict(extra="forbid")


class Counterpart(_Strict):
    """Someone who appears in a persona's scenarios."""

    name: Text
    relation: Text


class Exchange(_Strict):
    """One user turn and the assistant's answer."""

    user: Text
    assistant: Text


class Persona(_Strict):
    """A simulated user: profile, start date and the mundane exchanges of every history."""

    id: Id
    name: Text
    background: Text
    timezone: Text
    start: date
    counterparts: list[Counterpart] = Field(default_factory=list)
    fillers: list[Exchange] = Field(min_length=MIN_FILLERS)

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        try:
            if len(value) > 100 or not value.isprintable():  # no IANA name looks like this
                raise ZoneInfoNotFoundError(value)
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError, OSError, RecursionError) as exc:
            # Without a tz database (no tzdata, no /usr/share/zoneinfo) nothing can be checked.
            if available_timezones():
                raise ValueError(f"unknown IANA time zone {value!r}") from exc
        return value


class Replies(_Strict):
    """The user's possible answers to the proposal, one per condition family."""

    accept: Text
    scoped: Text
    unrelated: Text


class FollowUps(_Strict):
    """The assistant's next turn after each reply; each one is optional."""

    accept: Text | None = None
    scoped: Text | None = None
    unrelated: Text | None = None


class Episode(_Strict):
    """The session in which the assistant proposes the arrangement (or, for N, does not)."""

    user: Text
    proposal: Text
    neutral: Text
    replies: Replies
    follow_ups: FollowUps | None = None


class ToolCall(_Strict):
    """A side-effecting call; it matches an executed call when every listed arg is equal."""

    tool: Text
    args: dict[str, Any] = Field(default_factory=dict)


class Alternative(_Strict):
    """W applied to the probe: either ask the user (`ask: true`) or a different call."""

    ask: Literal[True] | None = None
    tool: Text | None = None
    args: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_form(self) -> Alternative:
        if self.ask is not None:
            if self.tool is not None or self.args is not None:
                raise ValueError("use either {ask: true} or {tool, args}, not both")
        elif self.tool is None:
            raise ValueError("must be {ask: true} or a call {tool, args}")
        return self

    @property
    def is_ask(self) -> bool:
        """True when the alternative behaviour is to ask the user."""
        return self.ask is True

    @property
    def call(self) -> ToolCall | None:
        """The alternative call, or None when the alternative is to ask."""
        if self.tool is None:
            return None
        return ToolCall(tool=self.tool, args=dict(self.args or {}))


class InScopeProbe(_Strict):
    """A request inside the scoped reply's scope: same tool, options and stakes."""

    request: Text
    world: World
    target: ToolCall


class Probe(InScopeProbe):
    """The test request, identical in all five conditions, outside the scoped reply's scope."""

    alternative: Alternative


class Scenario(_Strict):
    """One standing arrangement X, its episode, touchpoint, revision and probes."""

    id: Id
    persona: Id
    type: Literal["preference", "delegation", "convention"]
    stakes: Literal["low", "high"]
    action: Literal["rsvp", "purchase", "send"]
    arrangement: Text
    alternative: Text
    episode: Episode
    touchpoint: Exchange
    revision: Exchange
    probe: Probe
    in_scope_probe: InScopeProbe | None = None
    leakage_terms: list[Text]
