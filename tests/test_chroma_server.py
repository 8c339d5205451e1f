"""Chroma in client/server mode: the same assertions against the embedded client and a
real `chroma run` server (the session fixture `chroma_server`).

Memory in every mode, profiles that share a server without seeing each other,
`grounding replay --chroma-url` giving the embedded metrics, `grounding chat --plain
--chroma-url` remembering across processes, and one clean line when no server answers.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import threading
from datetime import date
from pathlib import Path
from typing import Any, Literal

import pexpect
import pytest

from agent.embeddings import MiniLMEmbedder
from agent.memory import (
    MEMORY_ID_FILE,
    ChromaUnreachable,
    FactOp,
    MemoryItem,
    MemoryModeUnavailable,
    memory_id,
    open_memory,
)
from agent.settings import SettingsError, load_settings
from ledger.model import Turn
from scenarios.replay import replay
from tests import chroma_server as chroma_server_mod
from tests.chroma_server import ChromaServer, free_port
from tests.conftest import ROOT, cli_env
from tests.fakellm import FakeLLM

GROUNDING = str(Path(sys.executable).parent / "grounding")
CORPUS_MIN = Path(__file__).parent / "data" / "corpus_min"


def _session(sid: str, day: date, *texts: str) -> list[Turn]:
    speakers: list[Literal["user", "assistant"]] = ["user", "assistant"]
    return [
        Turn(session_id=sid, session_date=day, index=i, speaker=speakers[i % 2], text=text)
        for i, text in enumerate(texts)
    ]


RSVP = _session(
    "s-rsvp",
    date(2026, 3, 2),
    "Can you check whether I'm free on Friday evening?",
    "You're free on Friday. From now on, shall I RSVP yes to invitations whenever you're free?",
    "Hmm, what's the weather going to be on Friday?",
    "Sunny with a light breeze, around 18 degrees.",
)
COFFEE = _session(
    "s-coffee",
    date(2026, 3, 9),
    "We're almost out of coffee beans.",
    "I ordered one kilo of the usual beans. Want me to reorder automatically each month?",
    "Yes, but only when it costs under 30 euros.",
)


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture(params=["embedded", "server"])
def chroma_url(request: pytest.FixtureRequest) -> str | None:
    """None for the embedded client, the URL of the session's server otherwise."""
    if request.param == "embedded":
        return None
    server: ChromaServer = request.getfixturevalue("chroma_server")
    return server.url


# -- memory ---------------------------------------------------------------------


def test_add_and_recall_in_every_mode(
    tmp_path: Path, chroma_url: str | None, embedder: MiniLMEmbedder
) -> None:
    home = tmp_path / "alice"

    chunks = open_memory("chunks", home, chroma_url, "alice", embedder=embedder)
    chunks.add_session(RSVP)
    chunks.add_session(COFFEE)
    chunks.add_session(COFFEE)  # upserted: no duplicates
    assert chunks.count() == 5
    top = chunks.recall("reorder coffee only when it is under 30 euros", k=3)
    assert top[0].id == "s-coffee:1"
    assert top[0].text.endswith("User: Yes, but only when it costs under 30 euros.")
    assert top[0].speakers == ["assistant", "user"] and top[0].turns[1] == COFFEE[2]
    assert chunks.recall("RSVP to the party invitation", k=1)[0].session_id == "s-rsvp"

    history = open_memory("history", home, chroma_url, "alice", embedder=embedder)
    history.add_session(COFFEE)
    history.add_session(RSVP)  # added later, but older: recency follows the dates
    recent = history.recall("anything", token_budget=10_000)
    assert [(i.session_id, i.turns[0].index) for i in recent] == (
        [("s-rsvp", i) for i in range(4)] + [("s-coffee", i) for i in range(3)]
    )
    assert [i.text for i in history.recall("anything", token_budget=20)] == [
        "User: Yes, but only when it costs under 30 euros."
    ]

    def writer(turns: list[Turn], related: list[MemoryItem]) -> list[FactOp]:
        if turns[0].session_id == "s-rsvp":
            return [FactOp("add", "The user asked about Friday evening.", turn_indexes=(0,))]
        return [
            FactOp("update", "The user buys coffee beans under 30 euros.", id=related[0].id),
            FactOp("add", "The usual beans come in one-kilo bags.", turn_indexes=(1,)),
        ]

    facts = open_memory("facts", home, chroma_url, "alice", embedder=embedder, facts_writer=writer)
    facts.add_session(RSVP)
    friday = facts.recall("free on Friday", k=1)[0]
    assert friday.kind == "fact" and friday.turns == [RSVP[0]]
    facts.add_session(COFFEE)
    assert sorted(i.text for i in facts.all_items()) == [
        "The user buys coffee beans under 30 euros.",
        "The usual beans come in one-kilo bags.",
    ]
    assert facts.recall("coffee budget", k=1)[0].id == friday.id  # updated in place

    none = open_memory("none", home, chroma_url, "alice", embedder=embedder)
    none.add_session(RSVP)
    assert none.recall("Friday") == [] and none.count() == 0

    # A fresh handle on the same profile finds everything again.
    again = open_memory("chunks", home, chroma_url, "alice", embedder=embedder)
    assert again.count() == 5
    assert again.recall("reorder coffee only when it is under 30 euros", k=1)[0].id == "s-coffee:1"
    assert open_memory("facts", home, chroma_url, "alice", embedder=embedder).count() == 2

    names = {m.collection_name for m in (chunks, history, facts)}
    if chroma_url is None:
        assert names == {"alice-chunks", "alice-history", "alice-facts"}
        assert not (home / MEMORY_ID_FILE).exists()
    else:
        mid = (home / MEMORY_ID_FILE).read_text().strip()
        assert names == {f"alice-{m}-{mid}" for m in ("chunks", "history", "facts")}
        assert not (home / "chroma").exists()  # nothing embedded on the side


def test_profiles_sharing_a_server_never_see_each_other(
    tmp_path: Path, chroma_url: str | None, embedder: MiniLMEmbedder
) -> None:
    # Two machines (homes) with a profile of the same name, and a second profile.
    alice = tmp_path / "home-a" / "profiles" / "default"
    bob = tmp_path / "home-b" / "profiles" / "default"
    work = tmp_path / "home-a" / "profiles" / "work"
    a = open_memory("chunks", alice, chroma_url, "default", embedder=embedder)
    b = open_memory("chunks", bob, chroma_url, "default", embedder=embedder)
    w = open_memory("chunks", work, chroma_url, "work", embedder=embedder)
    a.add_session(RSVP)
    b.add_session(COFFEE)

    assert {i.session_id for i in a.all_items()} == {"s-rsvp"}
    assert {i.session_id for i in b.all_items()} == {"s-coffee"}
    assert w.count() == 0 and w.recall("coffee beans") == []
    assert {i.session_id for i in a.recall("coffee beans under 30 euros", k=5)} == {"s-rsvp"}
    assert {i.session_id for i in b.recall("RSVP yes when free", k=5)} == {"s-coffee"}
    b.clear()
    assert b.count() == 0 and a.count() == 3
    if chroma_url is not None:
        assert len({a.collection_name, b.collection_name, w.collection_name}) == 3


def test_drop_removes_the_collection_from_the_server(
    tmp_path: Path, chroma_server: ChromaServer, embedder: MiniLMEmbedder
) -> None:
    memory = open_memory("chunks", tmp_path, chroma_server.url, "h-x", embedder=embedder)
    memory.add_session(RSVP)
    assert memory.collection_name in chroma_server.collections()
    memory.drop()
    assert memory.collection_name not in chroma_server.collections()
    with pytest.raises(MemoryModeUnavailable, match="was dropped"):
        memory.count()


def test_memory_id_is_created_once(tmp_path: Path) -> None:
    ids: list[str] = []
    threads = [
        threading.Thread(target=lambda: ids.append(memory_id(tmp_path / "p"))) for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(ids)) == 1 and len(ids[0]) == 12
    assert memory_id(tmp_path / "p") == ids[0]
    assert memory_id(tmp_path / "q") != ids[0]
    assert [p.name for p in (tmp_path / "p").iterdir()] == [MEMORY_ID_FILE]
    (tmp_path / "p" / MEMORY_ID_FILE).write_text("not an id\n")
    with pytest.raises(ValueError, match="not a memory id"):
        memory_id(tmp_path / "p")


# -- errors ---------------------------------------------------------------------


def test_no_server_is_a_settings_error_with_a_hint(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(ChromaUnreachable) as caught:
        open_memory("chunks", tmp_path, url, "default")
    assert isinstance(caught.value, SettingsError)
    assert str(caught.value) == (
        f"chroma_url: cannot reach a Chroma server at {url}; "
        f"start one with `chroma run --path DIR --port {port}`"
    )
    not_chroma = pytest.raises(ChromaUnreachable, match="did not answer as a Chroma server")
    with FakeLLM() as fake, not_chroma:  # an HTTP server that is not Chroma
        open_memory("history", tmp_path, fake.url, "default")
    with pytest.raises(SettingsError, match="must look like http://host:port"):
        open_memory("chunks", tmp_path, "http://127.0.0.1:99999", "default")


@pytest.mark.parametrize("command", ["chat", "replay"])
def test_cli_without_a_server_prints_one_line(
    tmp_path: Path, grounding_home: Path, command: str
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = {
        "chat": ["chat", "--plain"],
        "replay": ["replay", "--scenarios", str(CORPUS_MIN), "--out", str(tmp_path / "run")],
    }[command]
    done = subprocess.run(
        [GROUNDING, *args, "--chroma-url", url],
        input="hello\n",
        env=cli_env(grounding_home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"grounding: chroma_url: cannot reach a Chroma server at {url}; "
        f"start one with `chroma run --path DIR --port {port}`"
    ]
    assert "[assistant]" not in done.stdout


async def test_the_tui_says_it_could_not_start_and_why() -> None:
    from tui.app import make_app
    from tui.screens.chat import ChatScreen

    url = f"http://127.0.0.1:{free_port()}"
    app = make_app(load_settings({"chroma_url": url}), today=date(2026, 5, 4))
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.screen_stack[0]
        assert isinstance(chat, ChatScreen)
        for _ in range(3000):
            if chat.load_error is not None:
                break
            await pilot.pause(0.02)
        assert chat.load_error == (
            f"ChromaUnreachable: chroma_url: cannot reach a Chroma server at {url}; "
            f"start one with `chroma run --path DIR --port {url.rsplit(':', 1)[1]}`"
        )
        assert chat.sub_title == "the agent did not start"
    app.close_session()


# -- replay ---------------------------------------------------------------------


def _trajectories(run: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in (run / "trajectories.jsonl").read_text().splitlines()]
    for record in records:
        record.pop("seconds")
    return records


def test_replay_on_the_server_matches_embedded(tmp_path: Path, chroma_server: ChromaServer) -> None:
    before = chroma_server.collections()
    runs = {"embedded": tmp_path / "embedded-run", "server": tmp_path / "server-run"}
    metrics = {
        "embedded": replay(CORPUS_MIN, runs["embedded"], load_settings({}), limit=1)[0],
        "server": replay(
            CORPUS_MIN, runs["server"], load_settings({"chroma_url": chroma_server.url}), limit=1
        )[0],
    }
    assert metrics["server"] == metrics["embedded"]
    assert metrics["server"]["accuracy"]["n"] > 0
    assert _trajectories(runs["server"]) == _trajectories(runs["embedded"])
    assert any(r["retrieved"] for r in _trajectories(runs["server"]))  # memory was used
    assert chroma_server.collections() == before  # the history's collection was dropped


@pytest.mark.slow
def test_cli_replay_of_a_maya_history_matches_embedded(
    tmp_path: Path, grounding_home: Path, chroma_server: ChromaServer
) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "scenarios" / "corpus" / "maya", corpus / "maya")
    (corpus / "personas").mkdir()
    shutil.copy(ROOT / "scenarios" / "corpus" / "personas" / "maya.yaml", corpus / "personas")
    runs = {}
    for name, extra in (("embedded", []), ("server", ["--chroma-url", chroma_server.url])):
        runs[name] = tmp_path / name
        args = ["replay", "--scenarios", str(corpus), "--out", str(runs[name]), "--limit", "1"]
        done = subprocess.run(
            [GROUNDING, *args, *extra],
            env=cli_env(grounding_home),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
    metrics = {k: json.loads((v / "metrics.json").read_text()) for k, v in runs.items()}
    assert metrics["server"] == metrics["embedded"]
    assert metrics["server"]["accuracy"]["n"] > 0
    assert _trajectories(runs["server"]) == _trajectories(runs["embedded"])


# -- chat -----------------------------------------------------------------------


def _spawn(home: Path, url: str) -> pexpect.spawn:
    child = pexpect.spawn(
        GROUNDING,
        ["chat", "--plain", "--no-gl", "--chroma-url", url],
        env=cli_env(home),
        dimensions=(40, 200),
        encoding="utf-8",
        use_poll=True,  # select() breaks once the process has a file descriptor over 1023
        timeout=60,
    )
    child.logfile_read = io.StringIO()
    return child


def _say(child: pexpect.spawn, text: str) -> None:
    child.expect_exact("you> ")
    child.send(text + "\r")


def _quit(child: pexpect.spawn) -> str:
    _say(child, "/quit")
    child.expect(r"\[session\] saved")
    child.expect(pexpect.EOF, timeout=15)
    child.close()
    assert child.exitstatus == 0
    return str(child.logfile_read.getvalue())


def test_plain_chat_remembers_across_processes_on_the_server(
    tmp_path: Path, grounding_home: Path, chroma_server: ChromaServer
) -> None:
    first = _spawn(grounding_home, chroma_server.url)
    _say(first, "Marta invited me to her studio open house. Please RSVP yes.")
    first.expect(r"\[assistant\] Done: [^\r\n]*from now on\?")
    _say(first, "How long should I boil an egg for a runny yolk?")
    first.expect(r"\[assistant\]")
    _say(first, "/new +14d")
    first.expect(r"\[session\] 2 ")
    _quit(first)

    profile = grounding_home / "data" / "profiles" / "default"
    mid = (profile / MEMORY_ID_FILE).read_text().strip()
    assert f"default-chunks-{mid}" in chroma_server.collections()
    assert not (profile / "chroma").exists()

    # A new process: the proposal comes back from the server's memory and, with the
    # Grounding Layer off, the agent trusts it.
    second = _spawn(grounding_home, chroma_server.url)
    _say(second, "Sam invited me to board game night.")
    second.expect(r"\[tool\] rsvp [^\r\n]*inv-sam-games[^\r\n]*recorded")
    _quit(second)

    # Another machine's profile of the same name on the same server sees none of it.
    other = open_memory("chunks", tmp_path / "other" / "default", chroma_server.url, "default")
    assert other.count() == 0
    mine = open_memory("chunks", profile, chroma_server.url, "default")
    assert any("Marta" in i.text for i in mine.all_items())


# -- the server fixture's own failures ------------------------------------------


def _fake_chroma(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "fake-chroma"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return script


def test_a_server_that_exits_is_reported_with_its_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _fake_chroma(tmp_path, 'printf "\\033[31mError: Address in use\\033[0m\\n"; exit 3')
    monkeypatch.setattr(chroma_server_mod, "CHROMA", fake)
    with pytest.raises(RuntimeError) as caught:
        chroma_server_mod.start(tmp_path / "db", timeout=10, attempts=2)
    message = str(caught.value)
    assert "exited with 3 (attempt 2 of 2)" in message
    assert message.endswith("Error: Address in use")  # the log tail, colour codes removed


def test_a_silent_server_times_out_and_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _fake_chroma(tmp_path, "echo starting; exec sleep 60")
    monkeypatch.setattr(chroma_server_mod, "CHROMA", fake)
    started: list[subprocess.Popen[bytes]] = []
    real_popen = subprocess.Popen

    def popen(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        started.append(real_popen(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(chroma_server_mod.subprocess, "Popen", popen)
    with pytest.raises(RuntimeError, match=r"silent after 1 s \(attempt 1 of 3\)[^\n]*:\nstarting"):
        chroma_server_mod.start(tmp_path / "db", timeout=1)
    assert len(started) == 1 and started[0].returncode is not None  # no process left behind
