"""The LangGraph graph: recall -> decide -> gate -> act -> decide ... -> reply.

With the Grounding Layer off, decide goes straight to act. At most
`max_tool_steps` tool steps run in a turn; after two consecutive blocks the
tools are withdrawn and the policy must answer the user.

State is plain JSON-able data (so LangGraph's SQLite checkpointer can store it);
the live parts (memory, ledger, tools, policy) are in the `Runtime` the nodes close
over.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from functools import cache
from typing import Any, Literal, Protocol, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph

from agent.context import AgentInput, ToolStep, build_agent_input
from agent.facts import call_facts
from agent.llm import PolicyOutput
from agent.memory import MemoryItem
from ledger.gate import Gate
from ledger.model import Arrangement, Decision, GateResult, Turn
from ledger.provenance import check_provenance
from ledger.text import lexical_similarity
from tools.runtime import Toolbox, ToolCall, ToolResult
from tools.specs import SIDE_EFFECTING


class Policy(Protocol):
    name: str

    def decide(self, inp: AgentInput) -> PolicyOutput: ...


class TurnState(TypedDict, total=False):
    request: str
    today: str
    steps: list[dict[str, Any]]
    queued: list[dict[str, Any]]  # calls the policy asked for, with the gate's decision
    gated: bool  # Grounding Layer on for this turn
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
    max_tool_steps: int = 8
    profile: str = ""
    session: list[Turn] = field(default_factory=list)
    recalled: list[MemoryItem] = field(default_factory=list)
    on_executed: Any = None  # Callable[[GateResult], None]: e.g. use up a single-use entry


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


def _similar_exchanges(
    query: str, recalled: list[MemoryItem], entries: list[Arrangement], k: int = 6
) -> list[tuple[str, str]]:
    """The k dialogue exchanges most similar to the call: from what memory recalled and
    from the turns the ledger quotes (so the check works in every memory mode)."""
    groups: list[list[tuple[str, str]]] = [[(t.speaker, t.text) for t in i.turns] for i in recalled]
    groups += [[(e.speaker, e.text) for e in entry.evidence] for entry in entries if entry.evidence]
    ranked = sorted(
        groups, key=lambda g: lexical_similarity(query, " ".join(t for _, t in g)), reverse=True
    )
    return [turn for group in ranked[:k] for turn in group]


def _call_to_dict(call: ToolCall) -> dict[str, Any]:
    return {"call": {"id": call.id, "name": call.name, "args": call.args}}


def step_from_dict(d: dict[str, Any]) -> ToolStep:
    call = ToolCall(**d["call"])
    result = ToolResult(**d["result"]) if d.get("result") else None
    gate = GateResult.model_validate(d["gate"]) if d.get("gate") else None
    return ToolStep(call=call, result=result, gate=gate)


@cache
def compiled_graph() -> Any:
    """The agent graph, compiled once per process; each run gets its `Runtime` through
    `config["configurable"]["runtime"]` (see `run_turn`)."""
    return build_graph()


def run_turn(rt: Runtime, request: str, today: date) -> TurnState:
    """Run one user request through the graph."""
    config: RunnableConfig = {"recursion_limit": 60, "configurable": {"runtime": rt}}
    state: TurnState = {
        "request": request,
        "today": today.isoformat(),
        "gated": rt.gate is not None,
    }
    return compiled_graph().invoke(state, config)  # type: ignore[no-any-return]


def _rt(config: RunnableConfig) -> Runtime:
    return config["configurable"]["runtime"]  # type: ignore[no-any-return]


def build_graph() -> Any:
    """Build and compile the agent graph (nodes read their `Runtime` from the config)."""

    def agent_input(state: TurnState, rt: Runtime) -> AgentInput:
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

    def recall(state: TurnState, config: RunnableConfig) -> TurnState:
        rt = _rt(config)
        rt.recalled = list(rt.recall(state["request"]))
        return {"steps": [], "blocks": 0, "errors": 0}

    def decide(state: TurnState, config: RunnableConfig) -> TurnState:
        rt = _rt(config)
        inp = agent_input(state, rt)
        out = rt.policy.decide(inp)
        if out.error is not None:
            errors = state.get("errors", 0) + 1
            if errors >= 2 or not out.retry_messages:
                # A failed or unparseable decision never runs anything: ask the user.
                return {
                    "reply": "I couldn't work that out reliably, so I haven't done anything. "
                    "Could you tell me exactly what you'd like?",
                    "errors": errors,
                }
            return {"errors": errors}
        if out.tool_calls and inp.tools_allowed:
            return {"queued": [_call_to_dict(c) for c in out.tool_calls]}
        return {"reply": out.reply or "Should I go ahead?"}

    def route_decide(state: TurnState) -> Literal["gate", "act", "decide", "__end__"]:
        if state.get("reply"):
            return "__end__"
        if state.get("queued"):
            return "gate" if state.get("gated") else "act"
        return "decide"  # the policy gets its validation error back once

    def gate(state: TurnState, config: RunnableConfig) -> TurnState:
        """Check every side-effecting call against the ledger, then provenance."""
        rt = _rt(config)
        assert rt.gate is not None
        today = date.fromisoformat(state["today"])
        queued = []
        for item in state.get("queued", []):
            call = ToolCall(**item["call"])
            if call.name in SIDE_EFFECTING:
                facts = call_facts(call, state["request"], rt.toolbox.world, today)
                decision = rt.gate.check(facts, today)
                if decision.allowed and rt.ledger_view is not None:
                    entries = rt.ledger_view()
                    query = f"{state['request']} {facts.entity_text}"
                    exchanges = _similar_exchanges(query, rt.recalled, entries)
                    prov = check_provenance(facts, exchanges, entries)
                    if not prov.ok:
                        decision = decision.model_copy(
                            update={"decision": Decision.confirm, "reason": prov.reason}
                        )
                item = {**item, "gate": decision.model_dump(mode="json")}
            queued.append(item)
        return {"queued": queued}

    def act(state: TurnState, config: RunnableConfig) -> TurnState:
        """Run the calls the gate let through; record the blocked ones for the policy."""
        rt = _rt(config)
        steps = list(state.get("steps", []))
        blocks = state.get("blocks", 0)
        for item in state.get("queued", []):
            call = ToolCall(**item["call"])
            decision = GateResult.model_validate(item["gate"]) if item.get("gate") else None
            if decision is not None and not decision.allowed:
                blocks += 1
                steps.append(_step_to_dict(ToolStep(call=call, result=None, gate=decision)))
                continue
            if call.name in SIDE_EFFECTING:
                blocks = 0  # blocks count only while consecutive
            result = rt.toolbox.run(call)
            steps.append(_step_to_dict(ToolStep(call=call, result=result, gate=decision)))
            if decision is not None and result.ok and rt.on_executed is not None:
                rt.on_executed(decision)
        return {"steps": steps, "blocks": blocks, "queued": []}

    g = StateGraph(TurnState)
    g.add_node("recall", recall)
    g.add_node("decide", decide)
    g.add_node("gate", gate)
    g.add_node("act", act)
    g.add_edge(START, "recall")
    g.add_edge("recall", "decide")
    g.add_conditional_edges("decide", route_decide)
    g.add_edge("gate", "act")
    g.add_edge("act", "decide")
    return g.compile()
