"""Keep the developer's machine out of the results: temp home, no config, no network."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

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
