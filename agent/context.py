"""The one function that builds the agent's input.

Everything a policy sees (the LLM's messages and the reference policy's
structured view) comes from `build_agent_input`: the user's request, recalled
dialogue turns, the ledger view (Grounding Layer on) and tool results. Nothing
else reaches a policy; tests check this is the only path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from agent.memory import MemoryItem
from ledger.model import Arrangement, GateResult, Status, Turn
from tools.runtime import ToolCall, ToolResult

SYSTEM_PROMPT = """You are a personal assistant with simulated tools (rsvp, purchase, send and \
read-only lookups). Act only when the user asked for it or when a standing arrangement the user \
actually agreed to covers the request. A proposal you made that the user never accepted is not \
an agreement. When unsure, ask the user a short question instead of acting. Today is {today}."""

_STATUS_NOTE = {
    Status.pending: "I proposed this; the user never accepted it",
    Status.confirmed: "agreed by the user",
    Status.scoped: "agreed only within a scope",
    Status.revised: "replaced by a newer arrangement",
    Status.rejected: "the user declined it",
}


@dataclass(frozen=True)
class ToolStep:
    """One tool call the policy made, what came back, and the gate's decision if any."""

    call: ToolCall
    result: ToolResult | None
    gate: GateResult | None = None


@dataclass
class AgentInput:
    """What a policy may read: dialogue-derived context and tool results, nothing else."""

    request: str
    today: date
    memory: list[MemoryItem] = field(default_factory=list)
    ledger: list[Arrangement] = field(default_factory=list)
    session: list[Turn] = field(default_factory=list)  # earlier turns of this session
    steps: list[ToolStep] = field(default_factory=list)
    profile: str = ""
    tools_allowed: bool = True

    def memory_lines(self) -> list[str]:
        lines = []
        for item in self.memory:
            notes = self._ledger_notes(item)
            suffix = f"  [ledger: {'; '.join(notes)}]" if notes else ""
            lines.append(f"({item.session_date.isoformat()}) {item.text}{suffix}")
        return lines

    def _ledger_notes(self, item: MemoryItem) -> list[str]:
        """Proposer-aware status of entries quoted from this memory item (GL on only)."""
        notes = []
        keys = {(t.session_id, t.index) for t in item.turns}
        for entry in self.ledger:
            if any((e.session_id, e.turn_index) in keys for e in entry.evidence):
                who = "I proposed" if entry.proposer == "assistant" else "you asked"
                notes.append(f"{entry.id}: {who} '{entry.content}' ({_STATUS_NOTE[entry.status]})")
        return notes

    def to_messages(self) -> list[dict[str, Any]]:
        """OpenAI-style messages for an LLM policy."""
        context = [SYSTEM_PROMPT.format(today=self.today.isoformat())]
        if self.profile:
            context.append(f"User profile: {self.profile}")
        if self.memory:
            context.append("What you remember (who said what):\n" + "\n".join(self.memory_lines()))
        if self.ledger:
            rows = [
                f"- {e.id} [{e.status}] {e.action_type}: {e.content}"
                + (f" (scope: {e.scope.text})" if e.scope and e.scope.text else "")
                for e in self.ledger
            ]
            context.append("Grounding ledger (what was actually agreed):\n" + "\n".join(rows))
        messages: list[dict[str, Any]] = [{"role": "system", "content": "\n\n".join(context)}]
        for turn in self.session:
            messages.append({"role": turn.speaker, "content": turn.text})
        messages.append({"role": "user", "content": self.request})
        for step in self.steps:
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": step.call.id,
                            "type": "function",
                            "function": {
                                "name": step.call.name,
                                "arguments": json.dumps(step.call.args),
                            },
                        }
                    ],
                }
            )
            messages.append(
                {"role": "tool", "tool_call_id": step.call.id, "content": step_content(step)}
            )
        return messages


def step_content(step: ToolStep) -> str:
    """What the policy sees for one step: the tool result, or why the gate held it."""
    if step.gate is not None and not step.gate.allowed:
        payload: dict[str, Any] = {
            "blocked": True,
            "decision": str(step.gate.decision),
            "reason": step.gate.reason,
        }
        if step.gate.governing_rule:
            payload["governing_rule"] = step.gate.governing_rule
        return json.dumps(payload)
    return step.result.content if step.result else json.dumps({"error": "not run"})


def build_agent_input(
    request: str,
    today: date,
    memory: list[MemoryItem],
    ledger: list[Arrangement] | None,
    steps: list[ToolStep],
    session: list[Turn] | None = None,
    profile: str = "",
    tools_allowed: bool = True,
) -> AgentInput:
    """The only constructor of a policy's input (see module docstring)."""
    return AgentInput(
        request=request,
        today=today,
        memory=list(memory),
        ledger=list(ledger or []),
        session=list(session or []),
        steps=list(steps),
        profile=profile,
        tools_allowed=tools_allowed,
    )
