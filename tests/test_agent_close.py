"""Closing an agent (or a chat session) releases every file it opened.

An agent holds its ledger (SQLite with WAL: three descriptors), the model response
cache (the same) and its memory's Chroma client: embedded Chroma keeps one system per
path, with its SQLite and index files, until the last client of that path closes. A
test run builds hundreds of agents in one process, so what is not released adds up.
Each check keeps every agent referenced (as a fixture or a traceback would), so that
nothing is released by the garbage collector instead of `close`.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path
from typing import Any, Literal

import pytest

from agent.factory import Agent, build_agent
from agent.session import ChatSession
from agent.settings import Settings, load_settings
from ledger.model import Turn
from ledger.store import LedgerStoreError

DAY = date(2027, 3, 1)
CYCLES = 5
# Measured: 0 descriptors after the warm-up cycle (without close: about 13 per agent).
# The slack is for whatever another part of the process opens meanwhile.
SLACK = 2


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def agent_settings() -> Settings:
    # A model with a response cache (opened at build time; never asked: nothing responds).
    return load_settings(
        {
            "model": "openai/fake",
            "api_base": "http://127.0.0.1:9/v1",
            "api_key": "sk-local",
            "llm_cache": True,
            "memory": "chunks",
        }
    )


def session_turns(sid: str) -> list[Turn]:
    said: list[tuple[Literal["user", "assistant"], str]] = [
        ("user", "Marta invited me to her studio open house on Saturday."),
        ("assistant", "Shall I RSVP yes for you?"),
        ("user", "Yes please, and always say yes to Marta's open houses."),
    ]
    return [
        Turn(session_id=sid, session_date=DAY, index=i, speaker=s, text=t)
        for i, (s, t) in enumerate(said)
    ]


def growth(cycle: Any, kept: list[Any]) -> int:
    """Descriptors left open after CYCLES cycles, counted after one warm-up cycle."""
    cycle(0, kept)  # loads models and process-wide pieces once
    before = open_fds()
    for i in range(1, CYCLES + 1):
        cycle(i, kept)
    return open_fds() - before


def test_closing_agents_releases_their_files(tmp_path: Path) -> None:
    def cycle(i: int, kept: list[Any]) -> None:
        agent = build_agent(agent_settings(), tmp_path / f"agent-{i}")
        kept.append(agent)
        agent.remember(session_turns(f"s{i}"))  # memory records and a ledger entry
        assert agent.memory.recall("Marta's open house")
        agent.close()

    kept: list[Agent] = []
    assert growth(cycle, kept) <= SLACK


def test_closing_chat_sessions_releases_their_files(tmp_path: Path) -> None:
    def cycle(i: int, kept: list[Any]) -> None:
        session = ChatSession(load_settings({"memory": "chunks"}), home=tmp_path / f"p{i}")
        kept.append(session)
        session.send("Marta invited me to her studio open house.")
        session.close()

    kept: list[ChatSession] = []
    assert growth(cycle, kept) <= SLACK


def test_releasing_a_chat_session_keeps_its_turns_for_the_next_start(tmp_path: Path) -> None:
    def cycle(i: int, kept: list[Any]) -> None:
        session = ChatSession(load_settings({"memory": "chunks"}), home=tmp_path / "p")
        kept.append(session)
        session.send(f"Message {i}")
        session.release()

    kept: list[ChatSession] = []
    assert growth(cycle, kept) <= SLACK
    again = ChatSession(load_settings({"memory": "chunks"}), home=tmp_path / "p")
    try:
        assert again.session_no == 1
        assert [t.text for t in again.turns() if t.speaker == "user"] == [
            f"Message {i}" for i in range(CYCLES + 1)
        ]
    finally:
        again.release()


def test_close_is_idempotent_and_a_context_manager(tmp_path: Path) -> None:
    with build_agent(agent_settings(), tmp_path / "agent") as agent:
        agent.remember(session_turns("s1"))
        cache = agent.policy.llm.cache
        assert cache is not None and len(cache) == 0
    agent.close()  # a second time: nothing happens
    with pytest.raises(LedgerStoreError, match="closed"):
        agent.ledger()
    assert len(cache) == 0  # a closed cache answers as an empty one
    with build_agent(agent_settings(), tmp_path / "agent") as again:
        assert again.memory.count() > 0 and len(again.ledger()) == 1
