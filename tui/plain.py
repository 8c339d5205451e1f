"""`grounding chat --plain`: a line REPL over the same agent, for scripts and pexpect.

Every tool call, gate decision and ledger change is printed as a tagged line
(`[tool]`, `[gate]`, `[ledger]`), the reply as `[assistant]`.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from agent.settings import Settings
from ledger.model import Arrangement
from ledger.store import LedgerEvent

if TYPE_CHECKING:
    from agent.session import ChatSession

HELP = """Commands:
  /new [+Nd]        end this session (memory and ledger are written) and start the
                    next one, N days later
  /gl on|off        Grounding Layer on or off
  /memory MODE      none, history, chunks or facts
  /ledger           show the ledger
  /why              explain the last gate decision
  /help             this text
  /quit             end the session and leave (end of input does the same)"""


def format_entry(a: Arrangement) -> str:
    scope = f" (scope: {a.scope.text})" if a.scope and a.scope.text else ""
    line = f"[ledger] {a.id} {a.status} {a.proposer} {a.action_type}: {a.content}{scope}"
    quotes = [f'[ledger]   > {e.session_date} {e.speaker}: "{e.text}"' for e in a.evidence]
    return "\n".join([line, *quotes])


def format_events(events: list[LedgerEvent]) -> list[str]:
    return [
        f"[ledger] {e.entry_id} -> {e.arrangement.status}: {e.arrangement.content} ({e.reason})"
        for e in events
    ]


def parse_days(arg: str) -> int:
    """'+14d', '14', '+2w' -> days."""
    m = re.fullmatch(r"\+?(\d+)\s*([dw]?)", arg.strip())
    if not m:
        raise ValueError(f"not a time step: {arg!r} (use e.g. +14d or +2w)")
    n = int(m.group(1))
    return n * 7 if m.group(2) == "w" else n


def run_plain(settings: Settings, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    from agent.session import ChatSession

    inp = stdin or sys.stdin
    out = stdout or sys.stdout

    def say(text: str) -> None:
        print(text, file=out, flush=True)

    session = ChatSession(settings)
    say(
        f"grounding chat (plain) · model {settings.model} · memory {settings.memory} · "
        f"GL {'on' if settings.gl else 'off'} · profile {settings.profile} · "
        f"session {session.session_no} · {session.session_date} · /help for commands"
    )
    try:
        while True:
            out.write("you> ")
            out.flush()
            line = inp.readline()
            if not line:
                break
            text = line.strip()
            if not text:
                continue
            if text.startswith("/"):
                if not _command(session, text, say):
                    break
                continue
            try:
                result = session.send(text)
            except Exception as exc:
                say(f"[error] {type(exc).__name__}: {exc}")
                continue
            for step in result.steps:
                if step.gate is not None:
                    g = step.gate
                    say(
                        f"[gate] {g.decision} {g.tool}: {g.reason}"
                        + (f" (entry {g.entry_id})" if g.entry_id else "")
                    )
                if step.result is not None:
                    args = json.dumps(step.call.args)
                    say(f"[tool] {step.call.name} {args} -> {step.result.content[:200]}")
            say(f"[assistant] {result.reply}")
    finally:
        for msg in format_events(session.close()):
            say(msg)
        say("[session] saved")
    return 0


def _command(session: ChatSession, text: str, emit: Callable[[str], None]) -> bool:
    """Run a slash command; False means quit."""
    cmd, _, arg = text.partition(" ")
    arg = arg.strip()
    try:
        if cmd in ("/quit", "/exit"):
            return False
        if cmd == "/help":
            emit(HELP)
        elif cmd == "/new":
            days = parse_days(arg) if arg else 0
            for msg in format_events(session.new_session(days)):
                emit(msg)
            emit(f"[session] {session.session_no} · {session.session_date}")
        elif cmd == "/gl":
            if arg not in ("on", "off"):
                raise ValueError("use /gl on or /gl off")
            session.set_gl(arg == "on")
            emit(f"[session] Grounding Layer {arg}")
        elif cmd == "/memory":
            if arg not in ("none", "history", "chunks", "facts"):
                raise ValueError("use /memory none|history|chunks|facts")
            session.set_memory(arg)
            emit(f"[session] memory {arg}")
        elif cmd == "/ledger":
            entries = session.ledger()
            emit("\n".join(format_entry(a) for a in entries) or "[ledger] empty")
        elif cmd == "/why":
            emit(session.why())
        else:
            raise ValueError(f"unknown command {cmd}; /help lists them")
    except ValueError as exc:
        emit(f"[error] {exc}")
    return True
