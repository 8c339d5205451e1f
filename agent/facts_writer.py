"""Mem0-style facts memory: an LLM extracts salient facts after each session and
reconciles them with the most similar stored facts (add / update / delete / none)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from agent.memory import FactOp, MemoryItem, render_turns
from ledger.model import Turn

PROMPT = """You maintain a personal assistant's memory of facts about its user.
Read the new conversation and the existing facts. Return JSON {{"ops": [...]}} where each op is
{{"op": "add"|"update"|"delete"|"none", "id": existing fact id for update/delete, "text": the fact,
"turn_indexes": [indexes of the turns that support it]}}. Keep facts short and say who said
what (for example "The assistant offered to ...; the user did not answer").

Existing facts:
{facts}

New conversation ({date}):
{dialogue}"""


class _Op(BaseModel):
    op: Literal["add", "update", "delete", "none"]
    id: str | None = None
    text: str = ""
    turn_indexes: list[int] = Field(default_factory=list)


class _Ops(BaseModel):
    ops: list[_Op] = Field(default_factory=list)


class LLMFactsWriter:
    """A `FactsWriter` backed by `LLMPolicy.complete_json`."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm

    def __call__(self, turns: list[Turn], related: list[MemoryItem]) -> list[FactOp]:
        if not turns:
            return []
        facts = "\n".join(f"- [{f.id}] {f.text}" for f in related) or "(none)"
        dialogue = "\n".join(
            f"[{t.index}] {line}"
            for t, line in zip(turns, render_turns(turns).splitlines(), strict=False)
        )
        prompt = PROMPT.format(facts=facts, date=turns[0].session_date, dialogue=dialogue)
        parsed = self.llm.complete_json([{"role": "user", "content": prompt}], _Ops)
        if parsed is None:
            return []  # a failed extraction stores nothing rather than something wrong
        ops: list[FactOp] = []
        for op in parsed.ops:
            try:
                ops.append(
                    FactOp(op=op.op, text=op.text, id=op.id, turn_indexes=tuple(op.turn_indexes))
                )
            except ValueError:
                continue  # an op the model got wrong (update without id, ...) is skipped
        return ops
