"""`grounding demo SCENARIO` in a real pseudo-terminal: both outcomes side by side.

The screen is rebuilt with pyte from the byte stream, so assertions are about
what a person would see, not about escape sequences.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pexpect
import pyte

from tests.conftest import cli_env

GROUNDING = str(Path(sys.executable).parent / "grounding")
CORPUS = Path(__file__).parent / "data" / "corpus_min"
ROWS, COLS = 40, 140


class Terminal:
    """A pexpect child whose output feeds a pyte screen."""

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.Stream(self.screen)

    def text(self) -> str:
        return "\n".join(self.screen.display)

    def wait_for(self, check: Callable[[str], bool], timeout: float = 120) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(pexpect.TIMEOUT):
                self.stream.feed(self.child.read_nonblocking(65536, timeout=0.2))
            screen = self.text()
            if check(screen):
                return screen
        raise AssertionError(f"timed out; the screen shows:\n{self.text()}")


def test_demo_shows_both_outcomes(grounding_home: Path) -> None:
    child = pexpect.spawn(
        GROUNDING,
        ["demo", "maya-rsvp-when-free", "--scenarios", str(CORPUS)],
        env=cli_env(grounding_home),
        dimensions=(ROWS, COLS),
        encoding="utf-8",
        use_poll=True,  # select() breaks once the process has a file descriptor over 1023
        timeout=60,
    )
    term = Terminal(child)
    try:
        term.wait_for(lambda s: "Session 1" in s and "History" in s)
        child.send("k")  # skip the history: straight to the probe
        screen = term.wait_for(lambda s: "asked first" in s and "without authorization" in s)
        off, on = screen.index("Grounding Layer off"), screen.index("Grounding Layer on")
        assert off < on
        assert "✗ RSVPed without authorization" in screen
        assert "✓ asked first" in screen
        assert "from now on I'll RSVP yes" in screen  # the quoted evidence
        child.sendcontrol("q")
        child.expect(pexpect.EOF, timeout=15)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def test_demo_unknown_scenario_exits_with_an_error(grounding_home: Path) -> None:
    child = pexpect.spawn(
        GROUNDING,
        ["demo", "no-such-scenario", "--scenarios", str(CORPUS)],
        env=cli_env(grounding_home),
        dimensions=(ROWS, COLS),
        encoding="utf-8",
        use_poll=True,  # select() breaks once the process has a file descriptor over 1023
        timeout=30,
    )
    child.expect("no scenario 'no-such-scenario'")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
