"""The agent graph end to end: LLMPolicy through litellm against a local fake
OpenAI-compatible server (scripted tool calls, timeout, 500, malformed calls), and
the gate's two-block rule with the reference policy."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from agent.factory import Agent, build_agent
from agent.settings import load_settings
from ledger.model import Turn
from tests.fakellm import FakeLLM

DAY = date(2027, 1, 10)


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def _agent(tmp_path: Path, fake: FakeLLM, gl: bool = True) -> Agent:
    settings = load_settings(
        {
            "model": "openai/fake",
            "api_base": fake.url,
            "api_key": "sk-local",
            "memory": "none",
            "gl": gl,
            "timeout": 1.0,
        }
    )
    return build_agent(settings, tmp_path / "agent")


def test_scripted_tool_calls_run_and_the_explicit_request_passes_the_gate(
    tmp_path: Path, fake: FakeLLM
) -> None:
    agent = _agent(tmp_path, fake)
    fake.enqueue_tool_calls([{"name": "list_invitations", "arguments": {}}])
    fake.enqueue_tool_calls(
        [{"name": "rsvp", "arguments": {"invitation_id": "inv-marta-openhouse", "response": "yes"}}]
    )
    fake.enqueue_text("Done, you're going to Marta's open house.")
    result = agent.respond("Please RSVP yes to Marta's studio open house.", DAY)
    assert result.executed == [
        {"tool": "rsvp", "args": {"invitation_id": "inv-marta-openhouse", "response": "yes"}}
    ]
    assert result.gate_decisions[0].decision == "allow"
    assert result.reply.startswith("Done")
    # the model saw the tool result of list_invitations in its second request
    second = fake.requests[1]["messages"]
    assert any(m["role"] == "tool" and "inv-marta-openhouse" in m["content"] for m in second)
    assert fake.requests[0]["temperature"] == 0
    assert {t["function"]["name"] for t in fake.requests[0]["tools"]} >= {"rsvp", "purchase"}


def test_gate_blocks_an_unrequested_rsvp_and_the_model_hears_why(
    tmp_path: Path, fake: FakeLLM
) -> None:
    agent = _agent(tmp_path, fake)
    agent.remember(
        [
            Turn(
                session_id="s1",
                session_date=date(2027, 1, 1),
                index=0,
                speaker="user",
                text="Sam invited me to game night.",
            ),
            Turn(
                session_id="s1",
                session_date=date(2027, 1, 1),
                index=1,
                speaker="assistant",
                text="I'll RSVP yes. From now on I'll RSVP yes to invitations whenever you're free.",
            ),
            Turn(
                session_id="s1",
                session_date=date(2027, 1, 1),
                index=2,
                speaker="user",
                text="What's a good recipe for banana bread?",
            ),
        ]
    )
    fake.enqueue_tool_calls(
        [{"name": "rsvp", "arguments": {"invitation_id": "inv-dana-potluck", "response": "yes"}}]
    )
    fake.enqueue_text("Should I RSVP yes to Dana's potluck?")
    result = agent.respond("Dana invited me to the neighborhood potluck.", DAY)
    assert result.executed == []
    assert result.gate_decisions[0].decision == "confirm"
    assert "never accepted" in result.gate_decisions[0].reason
    tool_msgs = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert json.loads(tool_msgs[-1]["content"])["blocked"] is True


def test_timeout_asks_and_executes_nothing(tmp_path: Path, fake: FakeLLM) -> None:
    agent = _agent(tmp_path, fake)
    for _ in range(12):  # litellm retries timeouts: every attempt is late
        fake.enqueue_delay(2.0, then="too late")
    result = agent.respond("Please RSVP yes to Marta's studio open house.", DAY)
    assert result.executed == [] and len(agent.actions) == 0
    assert "haven't done anything" in result.reply


def test_server_error_asks_and_executes_nothing(tmp_path: Path, fake: FakeLLM) -> None:
    agent = _agent(tmp_path, fake)
    for _ in range(6):
        fake.enqueue_status(500)
    result = agent.respond("Buy the paperback of The Design of Everyday Things.", DAY)
    assert result.executed == [] and len(agent.actions) == 0
    assert "haven't done anything" in result.reply


def test_malformed_tool_call_gets_the_error_back_once_then_succeeds(
    tmp_path: Path, fake: FakeLLM
) -> None:
    agent = _agent(tmp_path, fake, gl=False)
    fake.enqueue_tool_calls([{"name": "rsvp", "arguments": {"invitation_id": "inv-sam-games"}}])
    fake.enqueue_tool_calls(
        [{"name": "rsvp", "arguments": {"invitation_id": "inv-sam-games", "response": "yes"}}]
    )
    fake.enqueue_text("Done.")
    result = agent.respond("Please RSVP yes to Sam's board game night.", DAY)
    assert result.executed == [
        {"tool": "rsvp", "args": {"invitation_id": "inv-sam-games", "response": "yes"}}
    ]
    retry = fake.requests[1]["messages"]
    assert any(m["role"] == "tool" and "response" in m["content"] for m in retry)


def test_malformed_twice_asks_the_user(tmp_path: Path, fake: FakeLLM) -> None:
    agent = _agent(tmp_path, fake, gl=False)
    fake.enqueue_tool_calls([{"name": "rsvp", "arguments": "{not json"}])
    fake.enqueue_tool_calls([{"name": "teleport", "arguments": {}}])
    result = agent.respond("Please RSVP yes to Sam's board game night.", DAY)
    assert result.executed == [] and len(agent.actions) == 0
    assert "haven't done anything" in result.reply


def test_two_blocks_withdraw_the_tools(tmp_path: Path, fake: FakeLLM) -> None:
    agent = _agent(tmp_path, fake)
    for inv in ("inv-dana-potluck", "inv-sam-games"):
        fake.enqueue_tool_calls(
            [{"name": "rsvp", "arguments": {"invitation_id": inv, "response": "yes"}}]
        )
    fake.enqueue_text("I need to check with you first.")
    result = agent.respond("Any invitations this week?", DAY)
    assert [g.decision for g in result.gate_decisions] == ["confirm", "confirm"]
    assert result.executed == []
    assert "tools" not in fake.requests[2] or not fake.requests[2].get("tools")


def test_single_use_entry_is_used_up_by_the_call_it_authorizes(
    tmp_path: Path, fake: FakeLLM
) -> None:
    from ledger.model import Arrangement, Evidence, Proposer, Status
    from ledger.store import Change

    agent = _agent(tmp_path, fake)
    said = Turn(
        session_id="s1",
        session_date=date(2027, 1, 2),
        index=1,
        speaker="user",
        text="Just this once, RSVP yes to game night invitations for me.",
    )
    entry = Arrangement(
        id=agent.store.new_id(),
        proposer=Proposer.user,
        action_type="rsvp",
        content="RSVP yes to game night invitations",
        status=Status.confirmed,
        single_use=True,
        evidence=[Evidence.quote(said)],
        created_at=said.session_date,
        updated_at=said.session_date,
    )
    agent.store.apply([Change(arrangement=entry, reason="test")], writer="rules")
    call = {"name": "rsvp", "arguments": {"invitation_id": "inv-sam-games", "response": "yes"}}
    for _ in range(2):
        fake.enqueue_tool_calls([call])
        fake.enqueue_text("ok")
    first = agent.respond("Sam's board game night invitation came in.", DAY)
    second = agent.respond("Sam's board game night invitation came in again.", DAY)
    assert [g.decision for g in first.gate_decisions] == ["allow"]
    assert first.executed and not second.executed
    assert second.gate_decisions[0].decision == "confirm"
    assert agent.store.get(entry.id).consumed  # type: ignore[union-attr]
    assert agent.store.get(entry.id).status == Status.confirmed  # type: ignore[union-attr]
