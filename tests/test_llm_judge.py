"""The optional LLM behaviour judge against the fake OpenAI-compatible server."""

from __future__ import annotations

from scenarios.llm_judge import LLMJudge
from tests.fakellm import FakeLLM


def test_llm_judge_labels_and_fails_soft() -> None:
    with FakeLLM() as fake:
        judge = LLMJudge("openai/fake", api_base=fake.url, api_key="sk-local", timeout=2.0)
        fake.enqueue_text('{"move": "confirm"}')
        assert judge.label("Kevin invited me", [], "Should I RSVP yes?") == "confirm"
        assert "Should I RSVP yes?" in fake.requests[0]["messages"][-1]["content"]
        fake.enqueue_text('{"move": "shrug"}')
        assert judge.label("Kevin invited me", [], "Done.") is None
