"""The optional LLM behaviour judge against the fake OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

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


def test_replay_with_judge_model_labels_every_probe(tmp_path: Path) -> None:
    from agent.settings import load_settings
    from scenarios.replay import replay

    corpus = Path(__file__).parent / "data" / "corpus_min"
    with FakeLLM(responder=lambda _req: '{"move": "ask_open"}') as fake:
        settings = load_settings({"api_base": fake.url, "api_key": "sk-local"})
        replay(corpus, tmp_path / "run", settings, limit=1, judge_model="openai/fake")
    records = [
        json.loads(x) for x in (tmp_path / "run" / "trajectories.jsonl").read_text().splitlines()
    ]
    assert records and all(r["move"] == "ask_open" for r in records)
