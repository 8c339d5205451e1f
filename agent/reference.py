"""The offline reference policy: a deterministic baseline that trusts its memory.

It recognises requests about invitations, purchases and messages, calls the
read-only tools, looks in what memory returned for a standing arrangement that
fits the request (whoever said it, accepted or not: that is the failure the
paper found in LLM agents), acts on it if one covers the request and otherwise
asks. After a one-off action it proposes a standing arrangement, so a live chat
produces proposals to accept or ignore. It reads only its `AgentInput`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from agent.context import AgentInput, ToolStep
from agent.llm import PolicyOutput
from ledger.classifier import action_type_of, detect_proposal, detect_user_rule
from ledger.gate import implied_response, is_ask_text
from ledger.model import ActionType
from ledger.text import content_stems, lexical_similarity, normalize, stem
from tools.runtime import ToolCall

_READ_FOR = {
    ActionType.rsvp: ["list_invitations"],
    ActionType.purchase: ["search_products"],
    ActionType.send: ["find_documents", "lookup_contact"],
}
_GENERIC = {
    stem(w)
    for w in (
        "me my please can could you would order buy get send email rsvp invite invited invitation"
    ).split()
}


@dataclass
class Rule:
    text: str
    when: str
    score: float


def _reply(text: str) -> PolicyOutput:
    return PolicyOutput(message={"role": "assistant", "content": text}, reply=text)


def _calls(*calls: ToolCall) -> PolicyOutput:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.args)},
            }
            for c in calls
        ],
    }
    return PolicyOutput(message=message, tool_calls=list(calls))


def _data(step: ToolStep) -> Any:
    if step.result is None or not step.result.ok:
        return None
    try:
        return json.loads(step.result.content)
    except ValueError:
        return None


class ReferencePolicy:
    """Deterministic, offline; see the module docstring."""

    name = "reference"

    def decide(self, inp: AgentInput) -> PolicyOutput:
        action = action_type_of(inp.request)
        done = {s.call.name for s in inp.steps}
        if action == ActionType.other:
            # No cue words: look at what the world holds and follow the best match.
            reads = ["list_invitations", "search_products", "find_documents"]
            missing = [t for t in reads if t not in done]
            if missing:
                return _calls(
                    *(self._read_call(t, inp, len(inp.steps) + i) for i, t in enumerate(missing))
                )
            action = _domain_from_reads(inp)
            if action == ActionType.other:
                return _reply(
                    "I can help with invitations (RSVP), purchases and sending messages or "
                    "documents. What would you like me to do?"
                )
        needed = [t for t in _READ_FOR[action] if t not in done]
        if needed:
            return _calls(
                *(self._read_call(t, inp, len(inp.steps) + i) for i, t in enumerate(needed))
            )
        last = inp.steps[-1]
        if last.call.name in ("rsvp", "purchase", "send"):
            return self._after_action(last, inp)
        if not inp.tools_allowed:
            return _reply("I'd rather check with you first: should I go ahead?")
        rule = self._standing_rule(inp, action)
        call = self._plan(action, inp, rule.text if rule else None)
        if call is None:
            return _reply(self._question(action, inp))
        if rule is None and not _explicit(action, inp.request):
            return _reply(self._question(action, inp, call))
        return _calls(call)

    # -- steps -------------------------------------------------------------------------

    def _read_call(self, tool: str, inp: AgentInput, n: int) -> ToolCall:
        args: dict[str, Any] = {}
        if tool in ("search_products", "find_documents"):
            args = {"query": _query(inp.request)}
        elif tool == "lookup_contact":
            args = {"name": inp.request}
        return ToolCall(id=f"call_{n}", name=tool, args=args)

    def _after_action(self, last: ToolStep, inp: AgentInput) -> PolicyOutput:
        gate = last.gate
        if gate is not None and not gate.allowed:
            if gate.governing_rule and not is_ask_text(gate.governing_rule):
                action = ActionType(last.call.name)
                call = self._plan(action, inp, gate.governing_rule)
                tried = [s.call for s in inp.steps if s.call.name == last.call.name]
                if call is not None and all(call.args != t.args for t in tried):
                    return _calls(call)
            return _reply(f"Before I do that: {gate.reason}. Should I go ahead?")
        if last.result is None or not last.result.ok:
            return _reply("That didn't work; could you tell me exactly what you'd like me to do?")
        summary = _summary(last.call)
        offer = _OFFERS.get(last.call.name, "")
        return _reply(f"Done: {summary}. {offer}".strip())

    def _question(self, action: ActionType, inp: AgentInput, call: ToolCall | None = None) -> str:
        if call is not None:
            return f"Do you want me to {_summary(call, future=True)}?"
        return {
            ActionType.rsvp: "Which invitation should I answer, and yes, no or maybe?",
            ActionType.purchase: "Which of these should I order?",
            ActionType.send: "Who should I send it to, and which document?",
        }.get(action, "What would you like me to do?")

    # -- memory ------------------------------------------------------------------------

    def _standing_rule(self, inp: AgentInput, action: ActionType) -> Rule | None:
        """The most recent standing statement in memory about this kind of request."""
        rules: list[Rule] = []
        for item in inp.memory:
            for turn in item.turns:
                if turn.speaker == "assistant":
                    found = detect_proposal(turn.text)
                    text = found.text if found else None
                else:
                    text = detect_user_rule(turn.text)
                    if text and action_type_of(text) not in (action, ActionType.other):
                        text = None
                if not text:
                    continue
                context = " ".join(t.text for t in item.turns)
                score = lexical_similarity(inp.request, context)
                if score >= 0.15:
                    rules.append(
                        Rule(text, f"{turn.session_date.isoformat()}:{turn.index:03d}", score)
                    )
        if not rules:
            return None
        best = max(r.score for r in rules)
        close = [r for r in rules if r.score >= best - 0.25]
        return max(close, key=lambda r: r.when)

    # -- planning ----------------------------------------------------------------------

    def _plan(self, action: ActionType, inp: AgentInput, rule: str | None) -> ToolCall | None:
        data = {s.call.name: _data(s) for s in inp.steps}
        n = len(inp.steps)
        if rule is not None and is_ask_text(rule):
            return None
        if action == ActionType.rsvp:
            invitations = (data.get("list_invitations") or {}).get("invitations", [])
            inv = _best(invitations, inp.request, lambda i: f"{i.get('from')} {i.get('event')}")
            if inv is None:
                return None
            response = implied_response(rule or "") or implied_response(inp.request) or "yes"
            return ToolCall(f"call_{n}", "rsvp", {"invitation_id": inv["id"], "response": response})
        if action == ActionType.purchase:
            products = (data.get("search_products") or {}).get("products", [])
            matching = _top(products, inp.request, lambda p: _product_text(p))
            if not matching:
                return None
            if len(matching) > 1:
                if rule is None:
                    return None
                matching = _top(matching, rule, lambda p: _product_text(p)) or matching
                if len(matching) > 1 and re.search(
                    r"\bcheap|\blowest|\bleast expensive", normalize(rule)
                ):
                    matching = [min(matching, key=lambda p: float(p.get("price", 0)))]
                if len(matching) > 1:
                    return None
            return ToolCall(
                f"call_{n}", "purchase", {"product_id": matching[0]["id"], "quantity": 1}
            )
        if action == ActionType.send:
            docs = (data.get("find_documents") or {}).get("documents", [])
            contacts = (data.get("lookup_contact") or {}).get("contacts", [])
            text = f"{inp.request} {rule or ''}"
            doc_pool = _top(
                docs, inp.request, lambda d: f"{d.get('title')} {d.get('body', '')[:80]}"
            )
            if len(doc_pool) > 1 and rule:
                doc_pool = (
                    _top(doc_pool, rule, lambda d: f"{d.get('title')} {d.get('body', '')[:80]}")
                    or doc_pool
                )
            contact = _best(contacts, text, lambda c: f"{c.get('name')} {c.get('relation')}")
            if rule:
                by_rule = _best(
                    contacts,
                    rule,
                    lambda c: f"{c.get('name')} {c.get('relation')} {c.get('email')}",
                )
                contact = by_rule or contact
            if contact is None or len(doc_pool) != 1:
                return None
            doc = doc_pool[0]
            return ToolCall(
                f"call_{n}",
                "send",
                {
                    "to": contact["email"],
                    "subject": str(doc.get("title", "")),
                    "body": f"Hi {contact.get('name', '')}, please find "
                    f"{doc.get('title')} attached.",
                    "document_id": doc["id"],
                },
            )
        return None


def _domain_from_reads(inp: AgentInput) -> ActionType:
    """Pick the action whose world items match the request best (ties: none)."""
    data = {s.call.name: _data(s) or {} for s in inp.steps}
    scores = {
        ActionType.rsvp: max(
            (
                _score(f"{i.get('from')} {i.get('event')}", inp.request)
                for i in data.get("list_invitations", {}).get("invitations", [])
            ),
            default=0,
        ),
        ActionType.purchase: max(
            (
                _score(_product_text(p), inp.request)
                for p in data.get("search_products", {}).get("products", [])
            ),
            default=0,
        ),
        ActionType.send: max(
            (
                _score(f"{d.get('title')} {d.get('body', '')[:80]}", inp.request)
                for d in data.get("find_documents", {}).get("documents", [])
            ),
            default=0,
        ),
    }
    best = max(scores.values())
    winners = [a for a, v in scores.items() if v == best]
    return winners[0] if best > 0 and len(winners) == 1 else ActionType.other


_OFFERS = {
    "rsvp": "Want me to RSVP yes to invitations like this whenever you're free from now on?",
    "purchase": "Should I just order the same kind of item automatically next time?",
    "send": "From now on, want me to send documents like this without asking?",
}


def _explicit(action: ActionType, request: str) -> bool:
    norm = normalize(request)
    verbs = {
        ActionType.rsvp: r"\b(?:rsvp|say yes|say no|accept|decline|count me in|reply)\b",
        ActionType.purchase: r"\b(?:buy|order|purchase|get me|reorder|grab)\b",
        ActionType.send: r"\b(?:send|email|forward|share|mail)\b",
    }[action]
    return bool(re.search(verbs, norm))


def _query(request: str) -> str:
    from ledger.text import STOPWORDS

    kept = [
        w
        for w in re.findall(r"[A-Za-z0-9'-]+", request)
        if w.lower() not in STOPWORDS and stem(w.lower()) not in _GENERIC
    ]
    return " ".join(kept) or request


def _names(text: str) -> list[str]:
    return [
        m for m in re.findall(r"\b[A-Z][a-z]+\b", text)[1:] if m.lower() not in {"i", "the", "my"}
    ]


def _product_text(p: dict[str, Any]) -> str:
    attrs = p.get("attributes") or {}
    return f"{p.get('title', '')} {' '.join(str(v) for v in attrs.values())}"


def _score(text: str, query: str) -> int:
    return len((content_stems(text) - _GENERIC) & (content_stems(query) - _GENERIC))


def _top(items: list[dict[str, Any]], query: str, text: Any) -> list[dict[str, Any]]:
    scored = [(_score(text(i), query), i) for i in items]
    best = max((s for s, _ in scored), default=0)
    return [i for s, i in scored if s == best and s > 0]


def _best(items: list[dict[str, Any]], query: str, text: Any) -> dict[str, Any] | None:
    top = _top(items, query, text)
    return top[0] if len(top) == 1 else None


def _summary(call: ToolCall, future: bool = False) -> str:
    a = call.args
    if call.name == "rsvp":
        return (
            f"RSVP {a.get('response')} to {a.get('invitation_id')}"
            if future
            else (f"RSVPed {a.get('response')} to {a.get('invitation_id')}")
        )
    if call.name == "purchase":
        return f"order {a.get('product_id')}" if future else f"ordered {a.get('product_id')}"
    return (
        f"send {a.get('document_id') or a.get('subject')} to {a.get('to')}"
        if future
        else f"sent {a.get('document_id') or a.get('subject')} to {a.get('to')}"
    )
