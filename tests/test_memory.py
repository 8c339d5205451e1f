"""Memory modes over Chroma: none, history, chunks, facts; persistence across processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from datetime import date
from pathlib import Path
from typing import Literal

import pytest

from agent.embeddings import MiniLMEmbedder
from agent.memory import (
    FactOp,
    Memory,
    MemoryItem,
    MemoryMode,
    MemoryModeUnavailable,
    approx_tokens,
    exchanges,
    fact_id,
    open_memory,
    sanitize_collection_name,
)
from ledger.model import Turn

ROOT = Path(__file__).resolve().parent.parent


def session(
    sid: str, day: date, *texts: str, first: Literal["user", "assistant"] = "user"
) -> list[Turn]:
    """Alternating turns starting with ``first``."""
    speaker: Literal["user", "assistant"] = first
    turns = []
    for i, text in enumerate(texts):
        turns.append(Turn(session_id=sid, session_date=day, index=i, speaker=speaker, text=text))
        speaker = "assistant" if speaker == "user" else "user"
    return turns


RSVP = session(
    "s-rsvp",
    date(2026, 3, 2),
    "Can you check whether I'm free on Friday evening?",
    "You're free on Friday. From now on, shall I RSVP yes to invitations whenever you're free?",
    "Hmm, what's the weather going to be on Friday?",
    "Sunny with a light breeze, around 18 degrees.",
)
COFFEE = session(
    "s-coffee",
    date(2026, 3, 9),
    "We're almost out of coffee beans.",
    "I ordered one kilo of the usual beans. Want me to reorder automatically each month?",
    "Yes, but only when it costs under 30 euros.",
)


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_exchanges_pair_proposals_with_uptake() -> None:
    chunks = exchanges(RSVP)
    assert [[t.index for t in c] for c in chunks] == [[0, 1], [1, 2], [3]]
    assert [
        [t.index for t in c]
        for c in exchanges(session("x", date(2026, 1, 1), "a", "b", first="assistant"))
    ] == [[0, 1]]


def test_chunks_recall_finds_the_relevant_exchange(
    tmp_path: Path, embedder: MiniLMEmbedder
) -> None:
    memory = open_memory("chunks", tmp_path, None, "alice", embedder=embedder)
    memory.add_session(RSVP)
    memory.add_session(COFFEE)
    assert memory.count() == 5

    top = memory.recall("reorder coffee only when it is under 30 euros", k=3)
    assert len(top) == 3
    assert top[0].session_id == "s-coffee"
    assert top[0].id == "s-coffee:1"
    assert top[0].text == (
        "Assistant: I ordered one kilo of the usual beans. "
        "Want me to reorder automatically each month?\n"
        "User: Yes, but only when it costs under 30 euros."
    )
    assert top[0].speakers == ["assistant", "user"]
    assert [t.index for t in top[0].turns] == [1, 2]
    assert top[0].turns[1] == COFFEE[2]
    assert top[0].kind == "exchange"
    assert top[0].score is not None and top[0].score > top[1].score  # type: ignore[operator]

    rsvp = memory.recall("RSVP to the party invitation", k=1)
    assert rsvp[0].session_id == "s-rsvp" and "RSVP yes" in rsvp[0].text

    items = memory.all_items()
    assert [i.id for i in items] == ["s-rsvp:0", "s-rsvp:1", "s-rsvp:3", "s-coffee:0", "s-coffee:1"]


def test_readding_is_idempotent(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    memory = open_memory(MemoryMode.chunks, tmp_path, None, "idem", embedder=embedder)
    memory.add_session(RSVP)
    first = [(i.id, i.text) for i in memory.all_items()]
    memory.add_session(RSVP)
    memory.add_session(list(reversed(RSVP)))
    assert [(i.id, i.text) for i in memory.all_items()] == first
    assert memory.count() == 3

    history = open_memory("history", tmp_path, None, "idem", embedder=embedder)
    history.add_session(COFFEE)
    history.add_session(COFFEE)
    assert history.count() == 3


def test_token_budget_cuts_chunks_but_keeps_the_best(
    tmp_path: Path, embedder: MiniLMEmbedder
) -> None:
    memory = open_memory("chunks", tmp_path, None, "budget", embedder=embedder)
    memory.add_session(RSVP)
    assert len(memory.recall("free on Friday", k=5, token_budget=1)) == 1
    assert memory.recall("free on Friday", k=0) == []


def test_history_is_recent_first_within_budget(tmp_path: Path) -> None:
    memory = open_memory("history", tmp_path, None, "bob")
    # Added out of order: recency follows the session dates.
    memory.add_session(COFFEE)
    memory.add_session(RSVP)
    later = session(
        "s-later", date(2026, 3, 20), "Remind me to call mum.", "Reminder set for tonight."
    )
    memory.add_session(later)

    everything = memory.recall("anything", token_budget=10_000)
    assert [(i.session_id, i.turns[0].index) for i in everything] == (
        [("s-rsvp", i) for i in range(4)]
        + [("s-coffee", i) for i in range(3)]
        + [("s-later", i) for i in range(2)]
    )
    assert everything[0].text == "User: Can you check whether I'm free on Friday evening?"
    assert everything[0].kind == "turn" and everything[0].speakers == ["user"]

    budget = approx_tokens("User: Remind me to call mum.") + approx_tokens(
        "Assistant: Reminder set for tonight."
    )
    recent = memory.recall("anything", token_budget=budget + 5)
    assert [i.text for i in recent] == [
        "User: Remind me to call mum.",
        "Assistant: Reminder set for tonight.",
    ]
    assert sum(approx_tokens(i.text) for i in recent) <= budget + 5
    assert memory.recall("anything", token_budget=2) == []


def test_none_mode_remembers_nothing(tmp_path: Path) -> None:
    memory = open_memory("none", tmp_path, None, "carol")
    memory.add_session(RSVP)
    assert memory.recall("Friday") == []
    assert memory.all_items() == []
    assert memory.count() == 0
    memory.clear()
    assert not (tmp_path / "chroma").exists()


def test_facts_without_writer_is_unavailable(tmp_path: Path) -> None:
    memory = open_memory("facts", tmp_path, None, "dave")
    with pytest.raises(MemoryModeUnavailable, match="facts memory needs a real model: set --model"):
        memory.add_session(RSVP)
    assert memory.recall("Friday") == []


def test_facts_writer_adds_updates_and_deletes(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    seen: list[list[MemoryItem]] = []
    script: list[list[FactOp]] = [
        [
            FactOp(
                "add", "The user asked whether they are free on Friday evening.", turn_indexes=(0,)
            ),
            FactOp("add", "The user likes sunny weather."),
            FactOp("none"),
        ],
        [
            FactOp(
                "update", "The user buys coffee beans monthly, under 30 euros.", id="PLACEHOLDER"
            ),
            FactOp("delete", id=fact_id("The user likes sunny weather.")),
            FactOp("update", "The usual beans come in one-kilo bags.", id="no-such-fact"),
        ],
    ]

    def writer(turns: list[Turn], related: list[MemoryItem]) -> list[FactOp]:
        seen.append(related)
        ops = script.pop(0)
        if related:  # point the update at a fact the writer was shown
            target = next(i.id for i in related if "Friday" in i.text)
            ops = [FactOp(o.op, o.text, target) if o.id == "PLACEHOLDER" else o for o in ops]
        return ops

    memory = open_memory("facts", tmp_path, None, "erin", embedder=embedder, facts_writer=writer)
    memory.add_session(RSVP)
    assert memory.count() == 2
    friday = memory.recall("free on Friday", k=1)[0]
    assert friday.kind == "fact" and friday.turns == [RSVP[0]] and friday.speakers == ["user"]

    memory.add_session(COFFEE)
    assert [len(r) for r in seen] == [0, 2]
    texts = sorted(i.text for i in memory.all_items())
    assert texts == [
        "The user buys coffee beans monthly, under 30 euros.",
        "The usual beans come in one-kilo bags.",
    ]
    top = memory.recall("coffee budget", k=1)[0]
    assert top.id == friday.id  # updated in place
    assert top.session_id == "s-coffee" and top.turns == []

    memory.clear()
    assert memory.count() == 0


def test_fact_op_validation() -> None:
    with pytest.raises(ValueError):
        FactOp("add")
    with pytest.raises(ValueError):
        FactOp("delete")
    with pytest.raises(ValueError):
        FactOp("update", "text")


def test_collection_names_are_sanitised(tmp_path: Path) -> None:
    assert sanitize_collection_name("alice-chunks") == "alice-chunks"
    assert sanitize_collection_name("a") == "a-mem"
    assert sanitize_collection_name("__my profile!!") == "my-profile"
    assert sanitize_collection_name("10.0.0.1") == "c-10.0.0.1"
    assert sanitize_collection_name("a..b") == "a.b"
    long = sanitize_collection_name("x" * 600)
    assert 3 <= len(long) <= 512
    weird = open_memory("history", tmp_path, None, "José's profile/2026")
    weird.add_session(COFFEE)
    assert weird.collection_name == "Jos-s-profile-2026-history"


def test_mode_needs_client() -> None:
    with pytest.raises(ValueError, match="needs a Chroma client"):
        Memory("chunks", None, "nope")
    with pytest.raises(ValueError, match="data directory"):
        open_memory("chunks", None, None, "nope")
    with pytest.raises(ValueError, match="http://host:port"):
        open_memory("chunks", None, "ftp://somewhere", "nope")


def _run(code: str) -> str:
    env = dict(os.environ)
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_persisted_chunks_reopen_in_a_new_process(tmp_path: Path) -> None:
    turns = json.dumps([t.model_dump(mode="json") for t in RSVP + COFFEE])
    _run(
        f"""
        import json
        from pathlib import Path
        from agent.memory import open_memory
        from ledger.model import Turn
        turns = [Turn.model_validate(t) for t in json.loads({turns!r})]
        memory = open_memory("chunks", Path({str(tmp_path)!r}), None, "frank")
        memory.add_session(turns)
        assert memory.count() == 5
        """
    )
    out = _run(
        f"""
        import json
        from pathlib import Path
        import chromadb
        from chromadb.config import Settings
        from agent.memory import open_memory
        memory = open_memory("chunks", Path({str(tmp_path)!r}), None, "frank")
        top = memory.recall("reorder coffee only when it is under 30 euros", k=2)
        # A bare client rebuilds the registered embedding function from the stored config.
        client = chromadb.PersistentClient(
            path={str(tmp_path / "chroma")!r}, settings=Settings(anonymized_telemetry=False)
        )
        col = client.get_collection("frank-chunks")
        hit = col.query(query_texts=["RSVP yes to invitations"], n_results=1)["ids"][0][0]
        ef = type(col.configuration["embedding_function"]).__name__
        print(json.dumps([memory.count(), top[0].id, hit, ef]))
        """
    )
    count, top_id, hit, ef = json.loads(out.strip().splitlines()[-1])
    assert count == 5
    assert top_id == "s-coffee:1"
    assert hit.startswith("s-rsvp:")
    assert ef == "MiniLMEmbeddingFunction"
