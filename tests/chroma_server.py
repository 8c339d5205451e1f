"""A real Chroma server (`chroma run`) for tests and benchmarks.

Started on a free loopback port with telemetry off, ready when its heartbeat
answers, stopped for good (terminate, then kill). The session fixture
`chroma_server` (imported by conftest) shares one server between all tests;
every test's data directory gets its own collections (`agent.memory.memory_id`).

    with running_chroma_server(tmp_path / "chroma-db") as server:
        open_memory("chunks", data_dir, server.url, "alice")
"""

from __future__ import annotations

import atexit
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent.offline import OFFLINE_ENV

__all__ = ["ChromaServer", "chroma_server", "free_port", "running_chroma_server", "start"]

CHROMA = Path(sys.executable).parent / "chroma"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Loopback needs no proxy; anything else is sent to a closed port and fails fast.
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    """A TCP port nothing listens on right now (bound to 127.0.0.1, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ChromaServer:
    """One running `chroma run` process."""

    path: Path
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_tail(self, lines: int = 25) -> str:
        """The last lines of the server's output, without colour codes."""
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        kept = [line for line in _ANSI.sub("", text).splitlines() if line.strip()]
        return "\n".join(kept[-lines:]) or "(empty log)"

    def heartbeat(self) -> bool:
        try:
            with _NO_PROXY.open(f"{self.url}/api/v2/heartbeat", timeout=2) as reply:
                return reply.status == 200 and b"heartbeat" in reply.read()
        except (OSError, urllib.error.URLError):
            return False

    def collections(self) -> set[str]:
        """Names of the collections the server holds (default tenant and database)."""
        import chromadb
        from chromadb.config import Settings

        client = chromadb.HttpClient(
            host="127.0.0.1", port=self.port, settings=Settings(anonymized_telemetry=False)
        )
        return {c.name for c in client.list_collections()}

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the server, kill it if it does not exit within ``timeout`` s."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)


def _server_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(OFFLINE_ENV)
    env.update(
        ANONYMIZED_TELEMETRY="False",
        HTTP_PROXY="http://127.0.0.1:9",
        HTTPS_PROXY="http://127.0.0.1:9",
        NO_PROXY="127.0.0.1,localhost",
    )
    return env


def start(path: Path, *, timeout: float = 30.0, attempts: int = 3) -> ChromaServer:
    """Start `chroma run --path PATH` on a free port and wait for its heartbeat.

    Retries on another port when the server exits early (the port was taken
    between choosing and binding it); raises RuntimeError with the log tail
    when it never answers.
    """
    path.mkdir(parents=True, exist_ok=True)
    failure = ""
    for attempt in range(attempts):
        port = free_port()
        log = path.parent / f"{path.name}-server-{port}.log"
        command = [str(CHROMA), "run", "--path", str(path), "--host", "127.0.0.1"]
        with log.open("wb") as out:
            process = subprocess.Popen(
                [*command, "--port", str(port)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=_server_env(),
            )
        server = ChromaServer(path=path, port=port, process=process, log=log)
        atexit.register(server.stop)  # if a test run dies before the fixture's teardown
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and process.poll() is None:
            if server.heartbeat():
                return server
            time.sleep(0.1)
        exited = process.poll()
        server.stop()
        failure = (
            f"chroma server on port {port} "
            + (f"exited with {exited}" if exited is not None else f"silent after {timeout:.0f} s")
            + f" (attempt {attempt + 1} of {attempts}); log {log}:\n{server.log_tail()}"
        )
        if exited is None:
            break  # it ran but never answered: another port would not help
    raise RuntimeError(failure)


@contextmanager
def running_chroma_server(path: Path, *, timeout: float = 30.0) -> Iterator[ChromaServer]:
    """A Chroma server over ``path`` for the duration of the block."""
    server = start(path, timeout=timeout)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    """One real Chroma server for the whole test session."""
    try:
        server = start(tmp_path_factory.mktemp("chroma-server") / "db")
    except RuntimeError as exc:
        pytest.fail(f"could not start the Chroma server: {exc}", pytrace=False)
    try:
        yield server
    finally:
        server.stop()
