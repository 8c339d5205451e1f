"""The LangGraph graph: recall -> decide -> gate -> act -> decide ... -> reply.

State is plain JSON-able data (so LangGraph's SQLite checkpointer can store it);
the live parts (memory, ledger, tools, policy) are in the `Runtime` the nodes close
over.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, Protocol, TypedDict

from langgraph.graph import START, StateGraph

from agent.context import AgentInput, ToolStep, build_agent_input
from agent.facts import call_facts
from agent.llm import PolicyOutput
from agent.memory import MemoryItem
from ledger.gate import Gate
from ledger.model import Decision, GateResult, Turn
from ledger.provenance import check_provenance
from tools.runtime import Toolbox, ToolCall, ToolResult
from tools.specs import SIDE_EFFECTING


class Policy(Protocol):
    name: str

    def decide(self, inp: AgentInput) -> PolicyOutput: ...


class TurnState(TypedDict, total=False):
    request: str
    today: str
    steps: list[dict[str, Any]]
    reply: str
    blocks: int
    errors: int


@dataclass
class Runtime:
    """Live parts one turn needs; built by the factory."""

    policy: Policy
    toolbox: Toolbox
    recall: Any  # Callable[[str], list[MemoryItem]]
    ledger_view: Any  # Callable[[], list[Arrangement]] | None  (None: Grounding Layer off)
    gate: Gate | None
    max_tool_steps: int = 6
    profile: str = ""
    session: list[Turn] = field(default_factory=list)
    recalled: list[MemoryItem] = field(default_factory=list)


def _step_to_dict(step: ToolStep) -> dict[str, Any]:
    return {
        "call": {"id": step.call.id, "name": step.call.name, "args": step.call.args},
        "result": None
        if step.result is None
        else {
            "call_id": step.result.call_id,
            "name": step.result.name,
            "ok": step.result.ok,
            "content": step.result.content,
            "error": step.result.error,
        },
        "gate": step.gate.model_dump(mode="json") if step.gate else None,
    }


def step_from_dict(d: dict[str, Any]) -> ToolStep:
    call = ToolCall(**d["call"])
    result = ToolResult(**d["result"]) if d.get("result") else None
    gate = GateResult.model_validate(d["gate"]) if d.get("gate") else None
    return ToolStep(call=call, result=result, gate=gate)


def build_graph(rt: Runtime) -> Any:
    """Compile the agent graph for one runtime."""

    def agent_input(state: TurnState) -> AgentInput:
        steps = [step_from_dict(s) for s in state.get("steps", [])]
        return build_agent_input(
            request=state["request"],
            today=date.fromisoformat(state["today"]),
            memory=rt.recalled,
            ledger=rt.ledger_view() if rt.ledger_view else None,
            steps=steps,
            session=rt.session,
            profile=rt.profile,
            tools_allowed=state.get("blocks", 0) < 2 and len(steps) < rt.max_tool_steps,
        )

    def recall(state: TurnState) -> TurnState:
        rt.recalled = list(rt.recall(state["request"]))
        return {"steps": [], "blocks": 0, "errors": 0}

    pending: dict[str, PolicyOutput] = {}

    def decide(state: TurnState) -> TurnState:
        out = rt.policy.decide(agent_input(state))
        if out.error is not None:
            errors = state.get("errors", 0) + 1
            if errors >= 2 or not out.retry_messages:
                return {
                    "reply": "I couldn't work that out reliably, so I haven't done anything. "
                    "Could you tell me exactly what you'd like?",
                    "errors": errors,
                }
            return {"errors": errors}
        if out.tool_calls and state.get("blocks", 0) < 2:
            pending["out"] = out
            return {}
        return {"reply": out.reply or "Should I go ahead?"}

    def route_decide(state: TurnState) -> Literal["gate", "decide", "__end__"]:
        if state.get("reply"):
            return "__end__"
        if "out" in pending:
            return "gate"
        return "decide"

    def gate(state: TurnState) -> TurnState:
        out = pending.pop("out")
        steps = list(state.get("steps", []))
        blocks = state.get("blocks", 0)
        today = date.fromisoformat(state["today"])
        for call in out.tool_calls:
            decision: GateResult | None = None
            if call.name in SIDE_EFFECTING and rt.gate is not None:
                facts = call_facts(call, state["request"], rt.toolbox.world, today)
                decision = rt.gate.check(facts, today)
                if decision.allowed and rt.ledger_view is not None:
                    exchanges = [(t.speaker, t.text) for i in rt.recalled[:6] for t in i.turns]
                    prov = check_provenance(facts, exchanges, rt.ledger_view())
                    if not prov.ok:
                        decision = decision.model_copy(
                            update={"decision": Decision.confirm, "reason": prov.reason}
                        )
            if decision is not None and not decision.allowed:
                blocks += 1
                steps.append(_step_to_dict(ToolStep(call=call, result=None, gate=decision)))
                continue
            result = rt.toolbox.run(call)
            steps.append(_step_to_dict(ToolStep(call=call, result=result, gate=decision)))
        return {"steps": steps, "blocks": blocks}

    def route_gate(state: TurnState) -> Literal["decide", "__end__"]:
        if len(state.get("steps", [])) >= rt.max_tool_steps * 2:
            return "__end__"
        return "decide"

    g = StateGraph(TurnState)
    g.add_node("recall", recall)
    g.add_node("decide", decide)
    g.add_node("gate", gate)
    g.add_edge(START, "recall")
    g.add_edge("recall", "decide")
    g.add_conditional_edges("decide", route_decide)
    g.add_conditional_edges("gate", route_gate)
    return g.compile()
