"""`grounding chat --plain` in a real pseudo-terminal: the grounding failure and its fix, live.

Session 1: an invitation is RSVPed, the assistant proposes a standing rule, the user
changes the subject. A later session (14 days on, in a new process) brings a new
invitation: without the Grounding Layer the agent RSVPs on its own; with it, the
gate asks first and the ledger shows the entry pending with the quoted evidence.
"""

from __future__ import annotations

import io
import sys
from datetime import date
from pathlib import Path

import pexpect

from agent.session import ChatSession
from agent.settings import load_settings
from tests.conftest import cli_env
from tui.plain import parse_days

GROUNDING = str(Path(sys.executable).parent / "grounding")


def _spawn(home: Path, *flags: str) -> pexpect.spawn:
    child = pexpect.spawn(
        GROUNDING,
        ["chat", "--plain", *flags],
        env=cli_env(home),
        dimensions=(40, 200),
        encoding="utf-8",
        use_poll=True,  # select() breaks once the process has a file descriptor over 1023
        timeout=60,
    )
    child.logfile_read = io.StringIO()  # the whole transcript, for assertions at the end
    return child


def _say(child: pexpect.spawn, text: str) -> None:
    child.expect_exact("you> ")
    child.send(text + "\r")


def _first_session(home: Path, flag: str) -> None:
    child = _spawn(home, flag)
    _say(child, "Marta invited me to her studio open house. Please RSVP yes.")
    child.expect(r"\[tool\] rsvp [^\r\n]*inv-marta-openhouse")
    child.expect(r"\[assistant\] Done: [^\r\n]*from now on\?")
    _say(child, "How long should I boil an egg for a runny yolk?")
    child.expect(r"\[assistant\]")
    _say(child, "/new +14d")
    child.expect(r"\[ledger\] a1 -> pending")
    child.expect(r"\[session\] 2 ")
    _say(child, "/quit")
    child.expect(r"\[session\] saved")
    child.expect(pexpect.EOF, timeout=15)
    child.close()
    assert child.exitstatus == 0


def test_without_gl_the_agent_rsvps_on_its_own(grounding_home: Path) -> None:
    _first_session(grounding_home, "--no-gl")
    child = _spawn(grounding_home, "--no-gl")  # a new process: memory survived the restart
    _say(child, "Sam invited me to board game night.")
    child.expect(r"\[tool\] rsvp [^\r\n]*inv-sam-games[^\r\n]*recorded")
    child.expect(r"\[assistant\] Done")
    _say(child, "/quit")
    child.expect(pexpect.EOF, timeout=15)


def test_with_gl_the_gate_asks_and_the_ledger_shows_pending(grounding_home: Path) -> None:
    _first_session(grounding_home, "--gl")
    child = _spawn(grounding_home, "--gl")
    _say(child, "Sam invited me to board game night.")
    child.expect(
        r"\[gate\] confirm rsvp: I proposed this on [^\r\n]* never accepted it \(entry a1\)"
    )
    child.expect(r"\[assistant\] Before I do that")
    _say(child, "/ledger")
    child.expect(r"\[ledger\] a1 pending assistant rsvp: [^\r\n]*whenever you're free")
    child.expect(r'> \d{4}-\d\d-\d\d user: "How long should I boil an egg')
    _say(child, "/why")
    child.expect("because I proposed this")
    _say(child, "/quit")
    child.expect(pexpect.EOF, timeout=15)
    transcript = child.logfile_read.getvalue()
    assert "[tool] rsvp" not in transcript
    assert "[tool] list_invitations" in transcript


def test_conversation_survives_a_restart_without_quitting(grounding_home: Path) -> None:
    settings = load_settings({"memory": "none"})
    first = ChatSession(settings, today=date(2026, 5, 4))
    first.send("Marta invited me to her studio open house.")
    # no close(): the process could have died here
    second = ChatSession(load_settings({"memory": "none"}))
    assert second.turns()[0].text == "Marta invited me to her studio open house."
    assert second.session_date == date(2026, 5, 4)
    second.new_session(14)
    assert second.session_date == date(2026, 5, 18) and second.turns() == []
    assert second.session_no == 2


def test_parse_days() -> None:
    assert parse_days("+14d") == 14
    assert parse_days("2w") == 14
    assert parse_days("3") == 3
    try:
        parse_days("tomorrow")
    except ValueError as exc:
        assert "+14d" in str(exc)
    else:
        raise AssertionError("expected ValueError")
