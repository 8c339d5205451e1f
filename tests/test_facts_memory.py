"""Facts memory: an LLM (the fake server) extracts facts after a session; the
reference model cannot, and says so clearly."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from agent.factory import build_agent
from agent.settings import SettingsError, load_settings
from ledger.model import Turn
from tests.fakellm import FakeLLM


def test_facts_memory_needs_a_real_model(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="needs a real model"):
        build_agent(load_settings({"memory": "facts"}), tmp_path / "a")


def test_facts_are_extracted_and_recalled(tmp_path: Path) -> None:
    with FakeLLM() as fake:
        settings = load_settings(
            {
                "model": "openai/fake",
                "api_base": fake.url,
                "api_key": "sk-local",
                "memory": "facts",
                "timeout": 2.0,
            }
        )
        agent = build_agent(settings, tmp_path / "a")
        ops = {
            "ops": [
                {
                    "op": "add",
                    "text": "The user takes a painting class on Tuesdays.",
                    "turn_indexes": [0],
                }
            ]
        }
        fake.enqueue_text(json.dumps(ops))
        day = date(2027, 1, 5)
        agent.remember(
            [
                Turn(
                    session_id="s1",
                    session_date=day,
                    index=0,
                    speaker="user",
                    text="I have painting class every Tuesday evening.",
                ),
                Turn(
                    session_id="s1",
                    session_date=day,
                    index=1,
                    speaker="assistant",
                    text="Noted, I'll keep Tuesday evenings in mind.",
                ),
            ]
        )
        items = agent.memory.recall("When is my painting class?")
        assert [i.text for i in items] == ["The user takes a painting class on Tuesdays."]
        assert "painting class every Tuesday" in fake.requests[0]["messages"][-1]["content"]
