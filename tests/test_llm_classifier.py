"""The LLM grounding-act classifier: agreement voting, conservative fallback."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from ledger.classifier import Classification
from ledger.llm_classifier import LLMClassifier, Vote
from ledger.model import Act
from tests import fakellm
from tests.fakellm import FakeLLM

fake_llm = fakellm.fake_llm  # the fixture, used by name

PROPOSAL = "From now on, should I RSVP yes to your running club's group runs whenever you're free?"
NO_PROPOSAL = "The party is on Saturday at 7pm."


def make(fake: FakeLLM, **kwargs: Any) -> LLMClassifier:
    options: dict[str, Any] = {"timeout": 5, "num_retries": 0, **kwargs}
    return LLMClassifier("openai/fake", api_base=fake.url, api_key="sk-local", **options)


def votes(fake: FakeLLM, *answers: dict[str, Any] | str) -> None:
    for answer in answers:
        fake.enqueue_text(answer if isinstance(answer, str) else json.dumps(answer))


def test_three_agreeing_votes_give_the_label(fake_llm: FakeLLM) -> None:
    votes(fake_llm, *[{"label": "accept", "scope": None, "revision": None}] * 3)
    result = make(fake_llm).classify_reply(PROPOSAL, "Sure, go for it.")
    assert isinstance(result, Classification)
    assert result.act is Act.accept
    assert result.proposal is not None and "RSVP" in result.proposal.text
    assert len(fake_llm.requests) == 3
    # Only the vote index differs, so no cache can collapse the votes.
    prompts = [r["messages"][-1]["content"] for r in fake_llm.requests]
    assert len(set(prompts)) == 3 and all("Vote " in p for p in prompts)
    assert {r["messages"][0]["content"] for r in fake_llm.requests} == {
        fake_llm.requests[0]["messages"][0]["content"]
    }


def test_request_asks_for_json_at_temperature_zero(fake_llm: FakeLLM) -> None:
    votes(fake_llm, *[{"label": "reject"}] * 3)
    assert make(fake_llm).classify_reply(PROPOSAL, "I'd rather decide each time.").act is Act.reject
    body = fake_llm.requests[0]
    assert body["temperature"] == 0
    assert body["response_format"] == {"type": "json_object"}
    system = body["messages"][0]["content"]
    for label in ("accept", "scoped", "implicit", "revise", "reject", "no_uptake", "no_proposal"):
        assert label in system
    assert "decide each time" in body["messages"][1]["content"]
    assert "running club" in body["messages"][1]["content"]


def test_scope_text_is_passed_through(fake_llm: FakeLLM) -> None:
    answer = {"label": "scoped", "scope": "only the Saturday ones", "revision": None}
    votes(fake_llm, answer, answer, answer)
    result = make(fake_llm).classify_reply(PROPOSAL, "Only the Saturday ones.")
    assert result.act is Act.scoped
    assert result.scope == "only the Saturday ones"
    assert result.revision is None


def test_revision_text_is_passed_through(fake_llm: FakeLLM) -> None:
    answer = {"label": "revise", "revision": "mark me as maybe by default"}
    votes(fake_llm, answer, answer, answer)
    result = make(fake_llm).classify_reply(
        PROPOSAL, "Rather than yes, mark me as maybe by default."
    )
    assert result.act is Act.revise and result.revision == "mark me as maybe by default"


def test_disagreement_is_not_accepted(fake_llm: FakeLLM) -> None:
    votes(fake_llm, {"label": "accept"}, {"label": "implicit"}, {"label": "accept"})
    result = make(fake_llm).classify_reply(PROPOSAL, "Great, see you there.")
    assert result.act is Act.no_uptake
    assert result.proposal is not None
    assert len(fake_llm.requests) == 2  # the second vote already decided it


def test_disagreement_without_a_rules_proposal_is_no_proposal(fake_llm: FakeLLM) -> None:
    votes(fake_llm, {"label": "accept"}, {"label": "accept"}, {"label": "no_proposal"})
    result = make(fake_llm).classify_reply(NO_PROPOSAL, "Thanks!")
    assert result == Classification(Act.no_proposal)


def test_server_error_is_not_accepted(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue_text(json.dumps({"label": "accept"}))
    fake_llm.enqueue_status(500)
    fake_llm.enqueue_text(json.dumps({"label": "accept"}))
    result = make(fake_llm).classify_reply(PROPOSAL, "Yes please.")
    assert result.act is Act.no_uptake


def test_server_down_is_not_accepted() -> None:
    with FakeLLM() as fake:
        url = fake.url
    clf = LLMClassifier("openai/fake", api_base=url, api_key="sk-local", timeout=2, num_retries=0)
    assert clf.classify_reply(PROPOSAL, "Yes please.").act is Act.no_uptake


def test_timeout_is_not_accepted(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue_delay(3.0, then=json.dumps({"label": "accept"}))
    result = make(fake_llm, timeout=0.5).classify_reply(PROPOSAL, "Yes please.")
    assert result.act is Act.no_uptake
    assert len(fake_llm.requests) == 1


@pytest.mark.parametrize(
    "bad",
    [
        "accept",  # not JSON
        '{"label": "maybe"}',  # not a label
        '{"label": "scoped", "scope": ""}',  # scoped needs its scope
        '{"label": "revise"}',  # revise needs its revision
    ],
)
def test_unusable_answers_are_not_accepted(fake_llm: FakeLLM, bad: str) -> None:
    votes(fake_llm, bad, bad, bad)
    assert make(fake_llm).classify_reply(PROPOSAL, "Sure.").act is Act.no_uptake


def test_agreeing_no_proposal_has_no_proposal(fake_llm: FakeLLM) -> None:
    fake_llm.responder = lambda _request: json.dumps({"label": "no_proposal"})
    assert make(fake_llm).classify_reply(PROPOSAL, "ok") == Classification(Act.no_proposal)


def test_model_sees_a_proposal_the_rules_missed(fake_llm: FakeLLM) -> None:
    fake_llm.responder = lambda _request: '```json\n{"label": "accept"}\n```'
    result = make(fake_llm).classify_reply("Shall I keep ordering the blue ink for you?", "Yes.")
    assert result.act is Act.accept
    assert result.proposal is not None and result.proposal.is_question


def test_vote_model_normalises_labels() -> None:
    assert Vote.model_validate({"label": "No-Uptake", "scope": "null"}).label == "no_uptake"
    assert Vote.model_validate({"label": "scoped", "scope": " weekends "}).scope == "weekends"


def test_importing_the_classifier_does_not_load_litellm() -> None:
    code = "import ledger.llm_classifier, sys; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
