"""Keep the developer's machine out of the results (temp home, no config, no network), and
close the files each test's agents opened."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

import agent  # noqa: F401  (offline switches)
from tests.chroma_server import chroma_server  # noqa: F401  (a session fixture)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def grounding_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "grounding-home"
    home.mkdir()
    for key in list(os.environ):
        if key.startswith("GROUNDING_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("GROUNDING_HOME", str(home))
    # Any attempt to reach the internet through a proxy-aware client fails fast.
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    yield home


# -- every agent a test builds is closed ------------------------------------------------------
#
# An agent holds its ledger (SQLite) and its memory's Chroma client (Chroma keeps one system per
# path, with its SQLite and index files, until the last client closes); a chat session also holds
# its checkpoint connection. What a test leaves open stays open for the rest of the run. So every
# Agent, ChatSession and Memory built in the pytest process is recorded, and those built for a
# test are closed at its end (those a module- or session-scoped fixture built, at the end of the
# run). Closing twice is a no-op: tests and fixtures that close their own are unaffected.

_to_close: list[Callable[[], object]] = []


def _close_memory(memory: Any) -> None:
    close = getattr(memory.client, "close", None)
    if close is not None:
        close()


def _recorded(method: Callable[..., None], close: Callable[[Any], object]) -> Callable[..., None]:
    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        method(self, *args, **kwargs)
        _to_close.append(lambda: close(self))

    return init


def _close_all(closers: list[Callable[[], object]]) -> None:
    with ExitStack() as stack:  # the newest first; every one even if another fails
        for close in closers:
            stack.callback(close)


@pytest.fixture(scope="session", autouse=True)
def _record_what_opens_files() -> Iterator[None]:
    from agent.factory import Agent
    from agent.memory import Memory
    from agent.session import ChatSession

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Memory, "__init__", _recorded(Memory.__init__, _close_memory))
        mp.setattr(Agent, "__post_init__", _recorded(Agent.__post_init__, Agent.close))
        # release(), not close(): closing would end (remember) the session.
        mp.setattr(
            ChatSession, "__post_init__", _recorded(ChatSession.__post_init__, ChatSession.release)
        )
        yield
        _close_all(_to_close)
        _to_close.clear()


@pytest.fixture(autouse=True)
def _close_what_the_test_opened(_record_what_opens_files: None) -> Iterator[None]:
    mark = len(_to_close)
    yield
    opened, _to_close[mark:] = _to_close[mark:], []
    _close_all(opened)


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """Environment for running the `grounding` command in a subprocess."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDING_")}
    env.update(
        GROUNDING_HOME=str(home),
        HTTP_PROXY="http://127.0.0.1:9",
        HTTPS_PROXY="http://127.0.0.1:9",
        NO_PROXY="127.0.0.1,localhost",
        TERM="xterm-256color",
    )
    env.update(extra)
    return env
