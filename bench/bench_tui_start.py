"""Time from `grounding chat` to the first painted frame, in a real pseudo-terminal.

Usage: .venv/bin/python bench/bench_tui_start.py [RUNS]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pexpect

GROUNDING = str(Path(sys.executable).parent / "grounding")


def one_run(home: str) -> float:
    env = dict(os.environ, GROUNDING_HOME=home, TERM="xterm-256color")
    started = time.perf_counter()
    child = pexpect.spawn(
        GROUNDING, ["chat"], env=env, dimensions=(30, 100), encoding="utf-8", timeout=30
    )
    child.expect("Message")
    elapsed = time.perf_counter() - started
    child.sendcontrol("q")
    child.expect(pexpect.EOF, timeout=15)
    child.close()
    return elapsed


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with tempfile.TemporaryDirectory() as home:
        times = [one_run(home) for _ in range(runs)]
    print(
        f"first frame: median {statistics.median(times):.2f}s "
        f"min {min(times):.2f}s max {max(times):.2f}s over {runs} runs"
    )


if __name__ == "__main__":
    main()
