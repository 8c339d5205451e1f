"""The TUI starts in a real pseudo-terminal and quits cleanly on ctrl+q."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pexpect

from tests.conftest import cli_env

GROUNDING = str(Path(sys.executable).parent / "grounding")


def test_chat_starts_and_quits_on_ctrl_q(grounding_home: Path) -> None:
    started = time.perf_counter()
    child = pexpect.spawn(
        GROUNDING,
        ["chat"],
        env=cli_env(grounding_home),
        dimensions=(30, 100),
        encoding="utf-8",
        use_poll=True,  # select() breaks once the process has a file descriptor over 1023
        timeout=20,
    )
    try:
        child.expect("Say hello to your assistant")
        first_frame = time.perf_counter() - started
        child.sendcontrol("q")
        child.expect(pexpect.EOF, timeout=10)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before
    # Not a timing assertion: recorded for docs/PERFORMANCE.md via bench/bench_tui_start.py.
    print(f"first frame after {first_frame:.2f}s")
