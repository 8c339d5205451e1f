"""The Grounding Layer's data model: turns, evidence, scope, arrangements, gate decisions."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Speaker = Literal["user", "assistant"]


class Kind(StrEnum):
    preference = "preference"
    delegation = "delegation"
    convention = "convention"


class Proposer(StrEnum):
    user = "user"
    assistant = "assistant"


class Status(StrEnum):
    pending = "pending"
    confirmed = "confirmed"
    scoped = "scoped"
    revised = "revised"
    rejected = "rejected"


class ActionType(StrEnum):
    rsvp = "rsvp"
    purchase = "purchase"
    send = "send"
    other = "other"


class Act(StrEnum):
    """How a user turn treats a standing proposal."""

    accept = "accept"
    scoped = "scoped"
    implicit = "implicit"
    revise = "revise"
    reject = "reject"
    no_uptake = "no_uptake"
    no_proposal = "no_proposal"


class Decision(StrEnum):
    allow = "allow"
    confirm = "confirm"
    follow_revision = "follow_revision"
    out_of_scope = "out_of_scope"


class Turn(BaseModel):
    """One dialogue turn as the agent saw it: the only thing the ledger writer reads."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    session_date: date
    index: int
    speaker: Speaker
    text: str


class Evidence(BaseModel):
    """A quoted turn that justifies a status."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    session_date: date
    turn_index: int
    speaker: Speaker
    text: str

    @classmethod
    def quote(cls, turn: Turn) -> Evidence:
        return cls(
            session_id=turn.session_id,
            session_date=turn.session_date,
            turn_index=turn.index,
            speaker=turn.speaker,
            text=turn.text,
        )


class Scope(BaseModel):
    """Structured limits of a scoped arrangement, plus the user's own words."""

    text: str = ""
    people: list[str] = Field(default_factory=list)
    groups: list[str] = Field(default_factory=list)
    categories: list[str] = Field(default_factory=list)
    excluded: list[str] = Field(default_factory=list)
    max_amount: float | None = None
    min_amount: float | None = None
    # What the amount limits: the item's price (""), how much more it costs than the
    # cheaper option it was chosen over ("extra": "up to about three hundred extra"), or
    # the price of the new one ("new": "anything over thirty quid new", for a used copy).
    amount_of: str = ""
    max_quantity: int | None = None
    weekdays: list[int] = Field(default_factory=list)  # 0=Monday
    time_after: str | None = None  # "HH:MM"
    time_before: str | None = None  # "HH:MM"
    # "Nights and weekends": the days or the hours will do, not only both at once.
    days_or_hours: bool = False
    until: date | None = None
    channels: list[str] = Field(default_factory=list)
    places: list[str] = Field(default_factory=list)
    # What a recipient must be outside of ("for anyone outside Fieldnote", "anything leaving
    # the hospital"): stems of its words.
    outside: list[str] = Field(default_factory=list)
    # The user's words on each side of the limit: what they allowed and what they handed
    # back ("For the kitchen and household things, go ahead" / "Anything medical ... I
    # would rather look at first"). A call that names neither side's words is placed by
    # which side it means; without a handed-back side there is nothing to compare with.
    allowed_text: str = ""
    back_text: str = ""

    def is_empty(self) -> bool:
        return not any(
            [
                self.people,
                self.groups,
                self.categories,
                self.excluded,
                self.max_amount is not None,
                self.min_amount is not None,
                self.max_quantity is not None,
                self.weekdays,
                self.time_after,
                self.time_before,
                self.until,
                self.channels,
                self.places,
                self.outside,
            ]
        )


class Arrangement(BaseModel):
    """A standing rule about how the assistant acts, with who proposed it and its status."""

    id: str
    kind: Kind = Kind.delegation
    proposer: Proposer
    action_type: ActionType
    content: str
    status: Status
    scope: Scope | None = None
    previous: str | None = None
    superseded_by: str | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    context: str = ""  # the user request the proposal answered (for relevance, not status)
    created_at: date
    updated_at: date
    single_use: bool = False
    expires: date | None = None
    consumed: bool = False

    def is_active_on(self, day: date) -> bool:
        return not self.consumed and (self.expires is None or day <= self.expires)


class GateResult(BaseModel):
    """What the execution gate decided for one side-effecting call."""

    decision: Decision
    reason: str
    tool: str
    args: dict[str, Any]
    entry_id: str | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    scope_diff: str | None = None
    # The rule to plan again by: the newer one (follow_revision), or the agreed one a call
    # did not follow.
    governing_rule: str | None = None

    @property
    def allowed(self) -> bool:
        return self.decision == Decision.allow


def latest_version(entry: Arrangement, ledger: Sequence[Arrangement]) -> Arrangement:
    """Follow `superseded_by` links to the entry that replaced this one, if any."""
    by_id = {e.id: e for e in ledger}
    seen = {entry.id}
    while entry.superseded_by and entry.superseded_by in by_id:
        entry = by_id[entry.superseded_by]
        if entry.id in seen:
            break
        seen.add(entry.id)
    return entry
