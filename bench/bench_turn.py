"""Time one chat turn (`ChatSession.send`) with the offline reference policy.

A temp profile gets one remembered session first (so recall has something to find),
then a few warm-up turns, then N timed turns, each a request not seen before.

Usage: .venv/bin/python bench/bench_turn.py [TURNS] [MEMORY]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from datetime import date

PEOPLE = ["Sam", "Dana", "Priya", "Leo", "Marta"]
ASKS = [
    "{p} invited me to board game night.",
    "What did {p} say about the potluck?",
    "Can you find me the design book {p} mentioned?",
    "Send the Q4 summary to {p}.",
    "Is {p} free next Thursday?",
]
# Every timed request is new text, as in a real chat (no embedding cache hits).
REQUESTS = [ask.format(p=p) for p in PEOPLE for ask in ASKS]


def main() -> None:
    turns = min(int(sys.argv[1]) if len(sys.argv) > 1 else 20, len(REQUESTS))
    memory = sys.argv[2] if len(sys.argv) > 2 else "chunks"
    with tempfile.TemporaryDirectory() as home:
        os.environ["GROUNDING_HOME"] = home
        import agent  # noqa: F401  (offline switches)
        from agent.session import ChatSession
        from agent.settings import load_settings

        session = ChatSession(load_settings({"memory": memory}), today=date(2026, 5, 4))
        session.send("Marta invited me to her studio open house. Please RSVP yes.")
        session.send("How long do I boil an egg?")
        session.new_session(14)
        for text in ("Hello!", "Thanks.", "What can you do?"):  # warm-up: lazy imports
            session.send(text)
        times = []
        for i in range(turns):
            started = time.perf_counter()
            session.send(REQUESTS[i])
            times.append(time.perf_counter() - started)
        session.close()
    ms = sorted(t * 1000 for t in times)
    p90 = ms[max(0, int(len(ms) * 0.9) - 1)]
    print(
        f"turn ({memory} memory, reference policy): median {statistics.median(ms):.0f} ms, "
        f"p90 {p90:.0f} ms, max {ms[-1]:.0f} ms over {turns} turns"
    )


if __name__ == "__main__":
    main()
