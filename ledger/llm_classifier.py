"""Grounding-act classifier backed by an LLM, with agreement voting.

Same contract as the rules classifier (`ledger.classifier.classify_reply`). The
model labels the user's reply three times; a label counts only when every vote
agrees. Anything else (disagreement, a failed or unparseable call) falls back to
the most conservative reading: the proposal was not accepted. A wrong "accepted"
lets the gate act on something the user never agreed to; a wrong "not accepted"
costs one confirmation question.

litellm is imported inside the call (the ledger package stays light and may not
import the agent package).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from ledger.classifier import (
    Classification,
    Proposal,
    action_type_of,
    detect_proposal,
    kind_of,
)
from ledger.model import Act

__all__ = ["LABEL_DEFINITIONS", "LLMClassifier", "Vote"]

Label = Literal["accept", "scoped", "implicit", "revise", "reject", "no_uptake", "no_proposal"]

LABEL_DEFINITIONS = """\
- no_proposal: the assistant turn proposes no standing arrangement: it does a one-off \
action, gives an answer, or offers something for this one time only. The user's reply \
does not matter then.
- accept: the user accepts the standing rule generally, including hedged acceptance \
("I guess that works", "can't hurt") and acceptance without "yes" ("go for it").
- scoped: the user accepts the rule only within a restriction (a person, group, \
category, price, time window, channel or place). Give the restriction in "scope", in \
the user's own words.
- implicit: the user moves the immediate one-off task forward but does not address the \
standing rule. The rule stays unaccepted.
- revise: the user replaces the proposed rule with a different standing rule. Give the \
new rule in "revision", in the user's words.
- reject: the user declines the standing rule, including refusals without "no" \
("I'd rather decide each time").
- no_uptake: the user ignores the proposal and changes the subject."""

_SYSTEM = f"""\
You label grounding acts in conversations between a personal assistant and its user.
A standing arrangement is a rule for how the assistant acts from now on (for example \
"From now on I'll RSVP yes whenever your calendar is free"), as opposed to a one-off action.
Given an assistant turn and the user's next turn, choose exactly one label:
{LABEL_DEFINITIONS}

Answer with one JSON object and nothing else:
{{"label": "<label>", "scope": "<restriction or null>", "revision": "<new rule or null>"}}
"scope" is required for scoped and null otherwise; "revision" is required for revise and \
null otherwise."""


class Vote(BaseModel):
    """One model answer: a label plus the scope or revision it needs."""

    model_config = ConfigDict(extra="ignore")

    label: Label
    scope: str | None = None
    revision: str | None = None

    @field_validator("label", mode="before")
    @classmethod
    def _normalise_label(cls, value: Any) -> Any:
        if isinstance(value, str):
            return value.strip().lower().replace("-", "_").replace(" ", "_")
        return value

    @field_validator("scope", "revision", mode="before")
    @classmethod
    def _blank_is_none(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in ("", "null", "none", "n/a"):
            return None
        return value.strip() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _needs_its_detail(self) -> Vote:
        if self.label == "scoped" and not self.scope:
            raise ValueError("label scoped needs a scope")
        if self.label == "revise" and not self.revision:
            raise ValueError("label revise needs a revision")
        return self


class LLMClassifier:
    """Label user replies with a litellm model; three agreeing votes or not accepted."""

    def __init__(
        self,
        model: str,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 30,
        votes: int = 3,
        num_retries: int = 1,
    ) -> None:
        if votes < 1:
            raise ValueError("votes must be at least 1")
        self.model = model
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout
        self.votes = votes
        self.num_retries = num_retries
        self.last_votes: list[Vote | None] = []

    def classify_reply(self, assistant: str, user: str) -> Classification:
        """Label how `user` treats a standing proposal in `assistant` (see the Act enum)."""
        detected = detect_proposal(assistant)
        first = self.vote(assistant, user, 0)
        votes: list[Vote | None] = [first]
        if first is not None:
            for index in range(1, self.votes):
                vote = self.vote(assistant, user, index)
                votes.append(vote)
                # One failed or differing vote already decides the outcome: stop paying.
                if vote is None or vote.label != first.label:
                    break
        self.last_votes = votes
        agreed = len(votes) == self.votes and all(
            v is not None and first is not None and v.label == first.label for v in votes
        )
        if first is None or not agreed:
            return _conservative(detected)
        act = Act(first.label)
        if act is Act.no_proposal:
            return Classification(Act.no_proposal)
        proposal = detected or _proposal_from(assistant)
        if act is Act.scoped:
            return Classification(act, scope=first.scope, proposal=proposal)
        if act is Act.revise:
            return Classification(act, revision=first.revision, proposal=proposal)
        return Classification(act, proposal=proposal)

    def vote(self, assistant: str, user: str, index: int) -> Vote | None:
        """One model call; None on any failure (error, timeout, unparseable answer)."""
        messages = [
            {"role": "system", "content": _SYSTEM},
            {
                "role": "user",
                "content": (
                    f"Vote {index + 1} of {self.votes}.\n"
                    f"Assistant turn: {json.dumps(assistant, ensure_ascii=False)}\n"
                    f"User reply: {json.dumps(user, ensure_ascii=False)}\n"
                    "Answer with the JSON object."
                ),
            },
        ]
        try:
            litellm = _litellm()
            response = litellm.completion(
                model=self.model,
                messages=messages,
                temperature=0,
                response_format={"type": "json_object"},
                timeout=self.timeout,
                num_retries=self.num_retries,
                api_base=self.api_base,
                api_key=self.api_key,
                drop_params=True,
            )
            content = response.choices[0].message.content
        except Exception:  # any failure is a disagreeing vote
            return None
        return _parse_vote(content if isinstance(content, str) else "")


def _conservative(proposal: Proposal | None) -> Classification:
    """Not accepted: no uptake of a proposal the rules can see, else no proposal."""
    if proposal is not None:
        return Classification(Act.no_uptake, proposal=proposal)
    return Classification(Act.no_proposal)


def _proposal_from(assistant: str) -> Proposal:
    """The model saw a standing offer the rules missed: the whole turn carries it."""
    text = assistant.strip()
    return Proposal(
        text=text,
        action_type=action_type_of(text),
        kind=kind_of(text),
        is_question=text.endswith("?"),
    )


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


def _parse_vote(text: str) -> Vote | None:
    text = text.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        return Vote.model_validate_json(text[start : end + 1])
    except ValidationError:
        return None


def _litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm
