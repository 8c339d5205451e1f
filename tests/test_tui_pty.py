"""`grounding chat` in a real pseudo-terminal, read through a terminal emulator (pyte).

A message is typed and answered, a session ends with `/new +14d`, the ledger panel shows
the pending proposal, and ctrl+q quits cleanly (the session is saved on the way out).
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
ROWS, COLS = 30, 100


class Terminal:
    """A spawned `grounding chat` and the screen a terminal would show."""

    def __init__(self, home: Path) -> None:
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.Stream(self.screen)
        self.child = pexpect.spawn(
            GROUNDING,
            ["chat", "--memory", "none"],
            env=cli_env(home),
            dimensions=(ROWS, COLS),
            encoding="utf-8",
            use_poll=True,  # select() breaks once the process has a file descriptor over 1023
            timeout=5,
        )

    @property
    def text(self) -> str:
        return "\n".join(self.screen.display)

    def pump(self, seconds: float = 0.1) -> None:
        with contextlib.suppress(pexpect.TIMEOUT):
            self.stream.feed(self.child.read_nonblocking(1 << 16, timeout=seconds))

    def wait_for(self, check: Callable[[str], bool], what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump()
            if check(self.text):
                return
        raise AssertionError(f"timed out waiting for {what}; screen:\n{self.text}")

    def type(self, text: str) -> None:
        self.child.send(text)
        self.child.send("\r")  # Enter ("\n" would arrive as ctrl+j)


def test_chat_in_a_terminal(grounding_home: Path) -> None:
    term = Terminal(grounding_home)
    try:
        term.wait_for(lambda t: "Say hello to your assistant" in t, "the first frame", 20)
        # Typed while the agent is still loading: the message waits its turn.
        term.type("Marta invited me to her studio open house. Please RSVP yes.")
        term.wait_for(lambda t: "inv-marta-openhouse" in t and "assistant" in t, "the reply")
        term.type("How long do I boil an egg?")
        term.type("/new +14d")
        term.wait_for(lambda t: "session 2 · " in t, "the next session's divider")
        assert "a1 → pending" in term.text  # the ledger change, noted in the conversation
        term.child.sendcontrol("l")  # the ledger panel

        # Wait for the panel's row, not only its header (the header can paint first); the
        # conversation's "ledger a1 → pending" note is not a panel row.
        def panel_row(line: str) -> bool:
            return " a1 " in line and "→" not in line

        term.wait_for(
            lambda t: "rule (scope)" in t and any(panel_row(x) for x in t.splitlines()),
            "the ledger panel",
            10,
        )
        rows = [line for line in term.screen.display if panel_row(line)]
        assert rows and "pending" in rows[0] and "assistant" in rows[0] and "rsvp" in rows[0]
        term.child.sendcontrol("q")
        term.child.expect(pexpect.EOF, timeout=20)
    finally:
        term.child.close(force=True)
    assert term.child.exitstatus == 0
