"""Model faults through the real agent, the LLM ledger classifier and the LLM judge.

Every fault is served by the fake OpenAI-compatible server (tests/fakellm.py) over
real HTTP to litellm, persistently (retries see the same fault). The request the
agent gets is an explicit "Please RSVP yes to Sam's board game night.": a valid
rsvp call would pass the gate, so a fault that leaked into a call would really
run. Expected: litellm retries what is worth retrying (429, 500, timeouts, broken
bodies), a bad tool call goes back to the model once, then the agent asks the
user; nothing runs. A failed classifier vote leaves the proposal not accepted, so
the gate asks. The last test counts executions over every fault case through one
shared ActionLog: it must be 0 (and a control case shows the count can be 1).

The timeout, 500 and malformed-twice cases with the Grounding Layer on are also in
test_agent_graph.py; here every fault runs with the layer on and off for the table.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from agent.factory import Agent, build_agent
from agent.settings import load_settings
from ledger.model import Status, Turn
from scenarios.llm_judge import LLMJudge
from tests.fakellm import FakeLLM, Step
from tools.runtime import ActionLog

DAY = date(2027, 1, 10)
REQUEST = "Please RSVP yes to Sam's board game night."
VALID_RSVP = {"invitation_id": "inv-sam-games", "response": "yes"}
ASKS = "haven't done anything"

SHARED_LOG = ActionLog()
"""Every fault case's agent runs its tools against this one log."""

TABLE: dict[str, int] = {}
"""Fault case id -> side-effecting calls it executed."""

Install = Callable[[FakeLLM], None]


@dataclass(frozen=True)
class Fault:
    """One way for the model to fail, and what the fake server saw meanwhile."""

    name: str
    install: Install  # sets the fake's responder: the fault on every request
    check: Callable[[FakeLLM], None]  # what the client did about it (retries, feedback)
    timeout: float = 5.0  # the agent's per-call timeout setting
    down: bool = False  # nothing listens at api_base


# --- fault responders ---------------------------------------------------------------


def _always(step: Callable[[FakeLLM], Step]) -> Install:
    def install(fake: FakeLLM) -> None:
        fake.responder = lambda _request: step(fake)

    return install


def _tool_call(arguments: dict[str, Any] | str, name: str = "rsvp") -> Install:
    return _always(
        lambda fake: Step(body=fake.completion(tool_calls=[{"name": name, "arguments": arguments}]))
    )


def _rate_limited(retry_after: str | None) -> Install:
    body = {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}
    headers = {"Retry-After": retry_after} if retry_after else {}
    return _always(lambda _fake: Step(status=429, body=body, headers=headers))


_SERVER_ERROR = _always(
    lambda _f: Step(status=500, body={"error": {"message": "boom", "type": "server_error"}})
)
_TOO_LATE = _always(lambda fake: Step(body=fake.completion(content="too late"), delay=1.0))
_HTML = _always(lambda _f: Step(body="<html><body>502 Bad Gateway</body></html>"))
_EMPTY = _always(lambda fake: Step(body=fake.completion(content=None)))
_BOTH = _always(
    lambda fake: Step(
        body=fake.completion(
            tool_calls=[
                {"name": "rsvp", "arguments": VALID_RSVP},
                {"name": "rsvp_everything", "arguments": {}},
            ]
        )
    )
)


# --- what the client did ------------------------------------------------------------


def _retried(fake: FakeLLM) -> None:
    assert len(fake.requests) >= 2, "litellm did not retry"


def _waited(seconds: float) -> Callable[[FakeLLM], None]:
    def check(fake: FakeLLM) -> None:
        _retried(fake)
        gap = fake.request_times[1] - fake.request_times[0]
        assert gap >= seconds * 0.9, f"Retry-After {seconds} s not honoured (gap {gap:.2f} s)"

    return check


def _fed_back(phrase: str) -> Callable[[FakeLLM], None]:
    """The bad call went back to the model once, with the problem; then it gave up."""

    def check(fake: FakeLLM) -> None:
        assert len(fake.requests) == 2
        tool_messages = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"]
        assert tool_messages and any(phrase in m["content"] for m in tool_messages)

    return check


def _asked_once(fake: FakeLLM) -> None:
    assert len(fake.requests) == 1  # a 200 answer with nothing in it: no HTTP retry


def _no_requests(fake: FakeLLM) -> None:
    assert fake.requests == []


FAULTS = [
    Fault("timeout", _TOO_LATE, _retried, timeout=0.25),
    Fault("rate_limit_429", _rate_limited(None), _retried),
    Fault("rate_limit_429_retry_after", _rate_limited("1"), _waited(1.0)),
    Fault("server_error_500", _SERVER_ERROR, _retried),
    Fault("body_not_json", _HTML, _retried),
    Fault("server_down", _SERVER_ERROR, _no_requests, down=True),
    Fault(
        "truncated_arguments",
        _tool_call('{"invitation_id": "inv-sam-games", "resp'),
        _fed_back("not valid JSON"),
    ),
    Fault(
        "unknown_tool", _tool_call(VALID_RSVP, name="rsvp_everything"), _fed_back("unknown tool")
    ),
    Fault(
        "wrong_argument_types",
        _tool_call({"invitation_id": ["inv-sam-games"], "response": True}),
        _fed_back("invalid arguments for rsvp"),
    ),
    Fault(
        "missing_required_argument",
        _tool_call({"invitation_id": "inv-sam-games"}),
        _fed_back("missing required argument 'response'"),
    ),
    Fault(
        "arguments_not_an_object",
        _tool_call('["inv-sam-games", "yes"]'),
        _fed_back("must be a JSON object"),
    ),
    Fault("valid_call_beside_an_invalid_one", _BOTH, _fed_back("not run: another tool call")),
    Fault("empty_reply", _EMPTY, _asked_once),
]


# --- running a case -------------------------------------------------------------------


def make_agent(
    tmp_path: Path, url: str, *, gl: bool, timeout: float = 5.0, writer: str = "rules"
) -> Agent:
    settings = load_settings(
        {
            "model": "openai/fake",
            "api_base": url,
            "api_key": "sk-local",
            "memory": "none",
            "gl": gl,
            "timeout": timeout,
            "ledger_writer": writer,
        }
    )
    return build_agent(settings, tmp_path / "agent")


def run_agent_case(fault: Fault, gl: bool, tmp_path: Path, log: ActionLog) -> tuple[Any, FakeLLM]:
    """One explicit request under `fault`; the agent's tools record into `log`."""
    with FakeLLM() as fake:
        fault.install(fake)
        url = fake.url
        if fault.down:
            fake.stop()
        agent = make_agent(tmp_path, url, gl=gl, timeout=fault.timeout)
        agent.actions = log
        before = len(log.records)
        result = agent.respond(REQUEST, DAY)
        TABLE[case_id("agent", fault.name, gl)] = len(log.records) - before
    return result, fake


def case_id(kind: str, name: str, gl: bool) -> str:
    return f"{kind}/{name}/{'gl-on' if gl else 'gl-off'}"


@pytest.mark.parametrize("gl", [True, False], ids=["gl-on", "gl-off"])
@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_agent_asks_and_runs_nothing(fault: Fault, gl: bool, tmp_path: Path) -> None:
    result, fake = run_agent_case(fault, gl, tmp_path, SHARED_LOG)
    assert ASKS in result.reply
    assert result.executed == [] and result.steps == []
    assert TABLE[case_id("agent", fault.name, gl)] == 0
    fault.check(fake)


RECOVERIES = [
    ("rate_limit_429_once", lambda fake: fake.enqueue_status(429, headers={"Retry-After": "0"})),
    ("server_error_500_once", lambda fake: fake.enqueue_status(500)),
    ("timeout_once", lambda fake: fake.enqueue_delay(1.0, then="too late")),
]


@pytest.mark.parametrize("first", [f for _, f in RECOVERIES], ids=[n for n, _ in RECOVERIES])
def test_a_passing_fault_is_retried_and_the_request_is_done(
    first: Callable[[FakeLLM], None], tmp_path: Path
) -> None:
    """Retries are worth it: one bad answer, then the explicit request is carried out."""
    log = ActionLog()
    with FakeLLM() as fake:
        first(fake)
        fake.enqueue_tool_calls([{"name": "rsvp", "arguments": VALID_RSVP}])
        fake.enqueue_text("Done: you're going to Sam's board game night.")
        agent = make_agent(tmp_path, fake.url, gl=True, timeout=0.25)
        agent.actions = log
        result = agent.respond(REQUEST, DAY)
    assert result.reply.startswith("Done")
    assert [(r.tool, r.args) for r in log.records] == [("rsvp", VALID_RSVP)]
    assert len(fake.requests) == 3 and fake.pending == 0


# --- ChatSession: a fault in one turn does not leak into the next -------------------------


def test_chat_session_fault_then_next_turn_starts_clean(tmp_path: Path) -> None:
    """The "call the tool again" feedback of a turn that ended asking the user must not
    reach the next request (it used to: the model was told to redo the RSVP)."""
    from agent.session import ChatSession

    with FakeLLM() as fake:
        settings = load_settings(
            {
                "model": "openai/fake",
                "api_base": fake.url,
                "api_key": "sk-local",
                "memory": "none",
                "gl": False,
            }
        )
        chat = ChatSession(settings, home=tmp_path / "profile", today=DAY)
        for _ in range(2):
            fake.enqueue_tool_calls([{"name": "rsvp", "arguments": '{"invitation_id": "inv-'}])
        first = chat.send(REQUEST)
        fake.enqueue_text("You have nothing on Saturday.")
        second = chat.send("Never mind that. What's on my calendar on Saturday?")
        turns = chat.turns()
        chat.close()
    assert ASKS in first.reply and second.reply.startswith("You have nothing")
    assert len(chat.agent.actions) == 0
    assert [t.text for t in turns][1] == first.reply  # the ask is part of the session
    last = fake.requests[-1]["messages"]
    assert not any(m["role"] == "tool" or m.get("tool_calls") for m in last), last
    assert last[-1]["content"].startswith("Never mind that")


# --- the LLM ledger classifier: a failed vote is "not accepted", so the gate asks ---------

HISTORY = [
    ("user", "Sam invited me to game night."),
    (
        "assistant",
        "I'll RSVP yes. From now on I'll RSVP yes to invitations whenever you're free.",
    ),
    ("user", "Yes please, do that from now on."),
]
PROBE = "Dana invited me to the neighborhood potluck."
POTLUCK = {"invitation_id": "inv-dana-potluck", "response": "yes"}


def _accept_vote(fake: FakeLLM) -> Step:
    return Step(body=fake.completion(content=json.dumps({"label": "accept"})))


def _vote_fault(step: Callable[[FakeLLM], Step]) -> Callable[[FakeLLM], Callable[..., Step]]:
    """Classifier requests (JSON mode, no tools) get the fault; the agent's requests
    (with tools) get an rsvp to the potluck, then a reply."""

    def responder(fake: FakeLLM) -> Callable[[dict[str, Any]], Step]:
        def answer(request: dict[str, Any]) -> Step:
            if not request.get("tools") and "response_format" in request:
                return step(fake)
            if any(m["role"] == "tool" for m in request["messages"]):
                return Step(body=fake.completion(content="About Dana's potluck: shall I RSVP?"))
            return Step(body=fake.completion(tool_calls=[{"name": "rsvp", "arguments": POTLUCK}]))

        return answer

    return responder


def _content(text: str | None) -> Callable[[FakeLLM], Step]:
    return lambda fake: Step(body=fake.completion(content=text))


VOTE_FAULTS: dict[str, tuple[Callable[[FakeLLM], Step], float]] = {
    # a slow model whose late answer would have been "accept"
    "timeout": (
        lambda f: Step(body=f.completion(content=json.dumps({"label": "accept"})), delay=1.0),
        0.25,
    ),
    "rate_limit_429": (
        lambda _f: Step(status=429, body={"error": {"message": "Rate limit", "type": "x"}}),
        5.0,
    ),
    "rate_limit_429_retry_after": (
        lambda _f: Step(
            status=429, body={"error": {"message": "Rate limit"}}, headers={"Retry-After": "1"}
        ),
        5.0,
    ),
    "server_error_500": (lambda _f: Step(status=500, body={"error": {"message": "boom"}}), 5.0),
    "body_not_json": (lambda _f: Step(body="<html>502</html>"), 5.0),
    "content_not_json": (_content("The user accepts the proposal."), 5.0),
    "truncated_json": (_content('{"label": "acc'), 5.0),
    "wrong_type": (_content('{"label": ["accept"]}'), 5.0),
    "empty_content": (_content(None), 5.0),
}


def history_turns() -> list[Turn]:
    return [
        Turn(session_id="s1", session_date=date(2027, 1, 1), index=i, speaker=who, text=text)  # type: ignore[arg-type]
        for i, (who, text) in enumerate(HISTORY)
    ]


def run_classifier_case(
    vote: Callable[[FakeLLM], Step], timeout: float, tmp_path: Path, log: ActionLog
) -> tuple[Agent, Any]:
    """Remember the history with the LLM writer (votes answered by `vote`), then probe."""
    with FakeLLM() as fake:
        fake.responder = _vote_fault(vote)(fake)
        agent = make_agent(tmp_path, fake.url, gl=True, timeout=timeout, writer="llm")
        agent.actions = log
        agent.remember(history_turns())
        result = agent.respond(PROBE, DAY)
    return agent, result


def _rsvp_entries(agent: Agent) -> list[Any]:
    return [e for e in agent.store.all() if e.action_type == "rsvp"]


def test_classifier_control_agreeing_votes_let_the_gate_act(tmp_path: Path) -> None:
    """The control: when the votes work, the user's acceptance confirms the rule and the
    same probe runs the rsvp. So the fault cases below can fail."""
    log = ActionLog()
    agent, result = run_classifier_case(_accept_vote, 5.0, tmp_path, log)
    assert [e.status for e in _rsvp_entries(agent)] == [Status.confirmed]
    assert [g.decision for g in result.gate_decisions] == ["allow"]
    assert [(r.tool, r.args) for r in log.records] == [("rsvp", POTLUCK)]


@pytest.mark.parametrize("name", list(VOTE_FAULTS))
def test_classifier_fault_is_not_accepted_and_the_gate_asks(name: str, tmp_path: Path) -> None:
    vote, timeout = VOTE_FAULTS[name]
    before = len(SHARED_LOG.records)
    agent, result = run_classifier_case(vote, timeout, tmp_path, SHARED_LOG)
    TABLE[case_id("classifier", name, True)] = len(SHARED_LOG.records) - before
    entries = _rsvp_entries(agent)
    assert [e.status for e in entries] == [Status.pending]
    assert [g.decision for g in result.gate_decisions] == ["confirm"]
    assert result.executed == []
    assert TABLE[case_id("classifier", name, True)] == 0


# --- the LLM judge: a failed call is no label, never an exception ------------------------


JUDGE_FAULTS: dict[str, Callable[[FakeLLM], Step]] = {
    "timeout": lambda f: Step(body=f.completion(content='{"move": "confirm"}'), delay=1.0),
    "rate_limit_429": VOTE_FAULTS["rate_limit_429"][0],
    "rate_limit_429_retry_after": VOTE_FAULTS["rate_limit_429_retry_after"][0],
    "server_error_500": VOTE_FAULTS["server_error_500"][0],
    "body_not_json": VOTE_FAULTS["body_not_json"][0],
    "content_not_json": _content("It asked the user first."),
    "truncated_json": _content('{"move": "conf'),
    "empty_content": _content(None),
}


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.mark.parametrize("name", list(JUDGE_FAULTS))
def test_judge_fault_gives_no_label(name: str, fake: FakeLLM) -> None:
    step = JUDGE_FAULTS[name]
    fake.responder = lambda _request: step(fake)
    judge = LLMJudge("openai/fake", api_base=fake.url, api_key="sk-local", timeout=0.25)
    assert judge.label(REQUEST, [], "Should I RSVP yes to Sam's game night?") is None
    assert fake.requests  # it did ask the model
    fake.responder = lambda _request: '{"move": "confirm"}'  # and it works once the model does
    assert judge.label(REQUEST, [], "Should I RSVP yes?") == "confirm"


# --- the table --------------------------------------------------------------------------


def test_executions_across_all_fault_cases_are_zero(tmp_path: Path) -> None:
    """Counts every side-effecting call the fault cases ran, through their shared
    ActionLog. Cases not run yet in this session (a -k selection) are run here."""
    for fault in FAULTS:
        for gl in (True, False):
            if case_id("agent", fault.name, gl) not in TABLE:
                run_agent_case(fault, gl, tmp_path / case_id("x", fault.name, gl), SHARED_LOG)
    for name, (vote, timeout) in VOTE_FAULTS.items():
        if case_id("classifier", name, True) not in TABLE:
            before = len(SHARED_LOG.records)
            run_classifier_case(vote, timeout, tmp_path / name, SHARED_LOG)
            TABLE[case_id("classifier", name, True)] = len(SHARED_LOG.records) - before
    expected = 2 * len(FAULTS) + len(VOTE_FAULTS)
    assert len(TABLE) == expected
    executed = {case: n for case, n in TABLE.items() if n}
    assert executed == {}, f"fault cases that executed a side effect: {executed}"
    assert len(SHARED_LOG.records) == 0
    # the count is not blind: the same path counts a call that does run
    control = ActionLog()
    with FakeLLM() as fake:
        fake.enqueue_tool_calls([{"name": "rsvp", "arguments": VALID_RSVP}])
        fake.enqueue_text("Done.")
        agent = make_agent(tmp_path / "control", fake.url, gl=True)
        agent.actions = control
        agent.respond(REQUEST, DAY)
    assert len(control.records) == 1
