"""The LLM policy through litellm against a local fake OpenAI server (real HTTP)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from pydantic import BaseModel

from agent.llm import LLMPolicy, PolicyOutput
from agent.llm_cache import ResponseCache
from tests import fakellm
from tests.fakellm import FakeLLM
from tools.runtime import ToolCall
from tools.specs import openai_tools

fake_llm = fakellm.fake_llm  # the fixture, used by name

MESSAGES = [
    {"role": "system", "content": "You are a personal assistant."},
    {"role": "user", "content": "Any invitations?"},
]


def make_policy(fake: FakeLLM, **kwargs: object) -> LLMPolicy:
    options: dict = {"timeout": 5.0, "num_retries": 0, "cache": None, **kwargs}
    return LLMPolicy("openai/fake", api_base=fake.url, api_key="sk-local", **options)


def test_scripted_text_is_the_reply(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue_text("You have two invitations.")
    out = make_policy(fake_llm).decide(MESSAGES, openai_tools())
    assert out == PolicyOutput(
        message={"role": "assistant", "content": "You have two invitations."},
        reply="You have two invitations.",
        usage=out.usage,
    )
    assert out.ok and out.tool_calls == [] and out.usage is not None


def test_scripted_tool_calls_become_tool_calls(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue_tool_calls(
        [
            {"name": "list_invitations", "arguments": {}},
            {"name": "rsvp", "arguments": {"invitation_id": "inv-1", "response": "yes"}},
        ]
    )
    out = make_policy(fake_llm).decide(MESSAGES, openai_tools())
    assert out.ok and out.reply is None
    assert [c.name for c in out.tool_calls] == ["list_invitations", "rsvp"]
    assert all(isinstance(c, ToolCall) for c in out.tool_calls)
    assert out.tool_calls[1].args == {"invitation_id": "inv-1", "response": "yes"}
    # The assistant message is ready to append: ids match the calls.
    assert out.message["role"] == "assistant"
    assert [c["id"] for c in out.message["tool_calls"]] == [c.id for c in out.tool_calls]
    assert json.loads(out.message["tool_calls"][1]["function"]["arguments"])["response"] == "yes"


def test_request_has_temperature_zero_and_the_tools(fake_llm: FakeLLM) -> None:
    tools = openai_tools()
    make_policy(fake_llm).decide(MESSAGES, tools)
    (body,) = fake_llm.requests
    assert body["temperature"] == 0
    assert body["tools"] == tools
    assert body["messages"] == MESSAGES


def test_server_error_then_success_is_retried(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue_status(500)
    fake_llm.enqueue_text("recovered")
    out = make_policy(fake_llm, num_retries=1).decide(MESSAGES, openai_tools())
    assert out.reply == "recovered"
    assert len(fake_llm.requests) == 2


@pytest.mark.parametrize("status", [500, 429])
def test_errors_after_retries_are_an_error_output(fake_llm: FakeLLM, status: int) -> None:
    for _ in range(6):
        fake_llm.enqueue_status(status)
    out = make_policy(fake_llm, num_retries=1).decide(MESSAGES, openai_tools())
    assert not out.ok and out.reply is None and out.tool_calls == [] and out.message == {}
    assert out.error
    assert len(fake_llm.requests) >= 2  # retried before giving up


def test_slow_server_times_out_into_an_error(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue_delay(3.0, then="too late")
    out = make_policy(fake_llm, timeout=0.5).decide(MESSAGES, openai_tools())
    assert out.error is not None and "in time" in out.error
    assert out.reply is None


def test_unreachable_server_is_an_error() -> None:
    with FakeLLM() as fake:
        url = fake.url
    policy = LLMPolicy("openai/fake", api_base=url, api_key="sk-local", timeout=2, num_retries=0)
    out = policy.decide(MESSAGES, None)
    assert out.error and out.reply is None


@pytest.mark.parametrize(
    "body",
    [
        '{"id": "chatcmpl-1", "object": "chat.completion", "choi',
        '{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "fake", '
        '"choices": []}',
        "<html>bad gateway</html>",
    ],
    ids=["truncated", "no-choices", "html"],
)
def test_broken_bodies_are_errors(fake_llm: FakeLLM, body: str) -> None:
    fake_llm.enqueue_raw(body)
    out = make_policy(fake_llm).decide(MESSAGES, openai_tools())
    assert out.error and out.reply is None and out.tool_calls == []


def test_empty_reply_is_an_error(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue_text("   ")
    out = make_policy(fake_llm).decide(MESSAGES, openai_tools())
    assert out.error == "empty reply"


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ({"name": "rsvp", "arguments": '{"invitation_id": "inv-1", '}, "not valid JSON"),
        ({"name": "rsvp", "arguments": {"invitation_id": "inv-1"}}, "missing required argument"),
        (
            {"name": "rsvp", "arguments": {"invitation_id": "inv-1", "response": "perhaps"}},
            "'response'",
        ),
        ({"name": "purchase", "arguments": '["p-1"]'}, "must be a JSON object"),
        ({"name": "teleport", "arguments": {}}, "unknown tool 'teleport'"),
    ],
    ids=["truncated-json", "missing-arg", "bad-value", "not-object", "unknown-tool"],
)
def test_bad_tool_calls_come_back_with_retry_messages(
    fake_llm: FakeLLM, call: dict, expected: str
) -> None:
    fake_llm.enqueue_tool_calls([call])
    out = make_policy(fake_llm).decide(MESSAGES, openai_tools())
    assert out.error is not None and expected in out.error
    assert out.tool_calls == []  # nothing runs
    assistant, tool_msg = out.retry_messages
    assert (
        assistant == out.message and assistant["tool_calls"][0]["function"]["name"] == call["name"]
    )
    assert tool_msg["role"] == "tool"
    assert tool_msg["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert expected in tool_msg["content"]


def test_tool_outside_the_offered_tools_is_unknown(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue_tool_calls(
        [{"name": "rsvp", "arguments": {"invitation_id": "i", "response": "no"}}]
    )
    out = make_policy(fake_llm).decide(MESSAGES, openai_tools(["list_invitations"]))
    assert out.error is not None and "unknown tool 'rsvp'" in out.error


def test_retry_messages_answer_every_call_and_feed_back(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue_tool_calls(
        [
            {"name": "list_invitations", "arguments": {}},
            {"name": "rsvp", "arguments": {"invitation_id": "inv-1"}},
        ]
    )
    fake_llm.enqueue_tool_calls(
        [{"name": "rsvp", "arguments": {"invitation_id": "inv-1", "response": "yes"}}]
    )
    policy = make_policy(fake_llm)
    first = policy.decide(MESSAGES, openai_tools())
    assert first.error and len(first.retry_messages) == 3
    answered = {m["tool_call_id"] for m in first.retry_messages[1:]}
    assert answered == {c["id"] for c in first.message["tool_calls"]}
    assert "not run" in first.retry_messages[1]["content"]

    second = policy.decide(MESSAGES + first.retry_messages, openai_tools())
    assert second.ok and second.tool_calls[0].args["response"] == "yes"
    sent = fake_llm.requests[1]["messages"]
    assert sent[-1]["role"] == "tool" and "missing required argument" in sent[-1]["content"]


def test_cache_serves_the_second_identical_call(fake_llm: FakeLLM, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "llm-cache.sqlite")
    fake_llm.enqueue_tool_calls([{"name": "list_invitations", "arguments": {}}])
    policy = make_policy(fake_llm, cache=cache)
    first = policy.decide(MESSAGES, openai_tools())
    second = policy.decide(MESSAGES, openai_tools())
    assert len(fake_llm.requests) == 1
    assert not first.cached and second.cached
    assert second.tool_calls == first.tool_calls and second.message == first.message
    # A different conversation is a different key.
    policy.decide([*MESSAGES, {"role": "user", "content": "and tomorrow?"}], openai_tools())
    assert len(fake_llm.requests) == 2
    # A new process (new cache object on the same file) sees it too.
    again = make_policy(fake_llm, cache=ResponseCache(tmp_path / "llm-cache.sqlite"))
    assert again.decide(MESSAGES, openai_tools()).cached
    assert len(fake_llm.requests) == 2


def test_without_cache_every_call_hits_the_server(fake_llm: FakeLLM) -> None:
    policy = make_policy(fake_llm, cache=None)
    policy.decide(MESSAGES, openai_tools())
    policy.decide(MESSAGES, openai_tools())
    assert len(fake_llm.requests) == 2


def test_failures_are_not_cached(fake_llm: FakeLLM, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    fake_llm.enqueue_status(500)
    fake_llm.enqueue_text("")
    fake_llm.enqueue_tool_calls([{"name": "teleport", "arguments": {}}])
    policy = make_policy(fake_llm, cache=cache)
    assert [policy.decide(MESSAGES, openai_tools()).ok for _ in range(4)] == [
        False,
        False,
        False,
        True,
    ]
    assert len(fake_llm.requests) == 4 and len(cache) == 1


class Fact(BaseModel):
    subject: str
    value: str


def test_complete_json_parses_structured_output(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue_text('```json\n{"subject": "paper", "value": "Rhodia"}\n```')
    fact = make_policy(fake_llm).complete_json(
        [{"role": "user", "content": "Extract the fact."}], Fact
    )
    assert fact == Fact(subject="paper", value="Rhodia")
    body = fake_llm.requests[0]
    assert body["response_format"] == {"type": "json_object"} and body["temperature"] == 0
    assert "JSON" in body["messages"][-1]["content"]  # schema added for JSON mode


@pytest.mark.parametrize("script", ["not json", '{"subject": "x"}', "status"])
def test_complete_json_failures_are_none(fake_llm: FakeLLM, script: str) -> None:
    if script == "status":
        fake_llm.enqueue_status(500)
    else:
        fake_llm.enqueue_text(script)
    assert make_policy(fake_llm).complete_json(MESSAGES, Fact) is None


def test_complete_json_uses_the_cache(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.responder = lambda _request: '{"subject": "ink", "value": "blue"}'
    policy = make_policy(fake_llm, cache=ResponseCache(tmp_path / "c.sqlite"))
    assert policy.complete_json(MESSAGES, Fact) == policy.complete_json(MESSAGES, Fact)
    assert len(fake_llm.requests) == 1


def test_cache_keys_are_canonical(tmp_path: Path) -> None:
    key = ResponseCache.key_for
    a = key("m", [{"role": "user", "content": "hi"}], None, {"temperature": 0, "x": 1})
    b = key("m", [{"content": "hi", "role": "user"}], None, {"x": 1, "temperature": 0})
    assert a == b and len(a) == 64
    assert a != key("m", [{"role": "user", "content": "hi"}], [], {"temperature": 0, "x": 1})
    assert a != key("other", [{"role": "user", "content": "hi"}], None, {"temperature": 0, "x": 1})


def test_cache_is_safe_across_threads_and_connections(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    caches = [ResponseCache(path) for _ in range(3)]

    def work(n: int) -> None:
        for i in range(30):
            caches[n].put(f"k{n}-{i}", {"n": n, "i": i})
            assert caches[(n + 1) % 3].get(f"k{n}-{i}") == {"n": n, "i": i}

    threads = [threading.Thread(target=work, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ResponseCache(path)) == 90
    assert caches[0].get("missing") is None


def test_importing_the_policy_does_not_load_litellm() -> None:
    code = "import agent.llm, agent.llm_cache, sys; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
