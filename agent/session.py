"""A chat session over one profile: the service the plain REPL and the TUI share.

The conversation of the current session (its id, date and turns) is kept in a
LangGraph graph checkpointed with `SqliteSaver`, so quitting and starting again
resumes it; ending a session (`new_session`, or `close` at the end of input)
runs the agent's `remember` step, which writes memory and the ledger from the
same turns.

Before it opens anything, a session checks the profile's files (`agent.storage`):
a ledger or checkpoint file held by another process, or damaged, stops the start
with one line that says what to do. The ledger is copied aside at the start and at
the end of every session, so a damaged ledger can be restored.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any, TypedDict

from langchain_core.runnables import RunnableConfig

from agent.factory import Agent, TurnResult, build_agent
from agent.locations import profile_dir
from agent.settings import Settings
from agent.storage import (
    CHAT,
    MemoryIndexError,
    backup_ledger,
    chat_error,
    check_profile,
    memory_damaged,
)
from ledger.model import Arrangement, GateResult, Turn
from ledger.store import LedgerEvent


class ChatState(TypedDict, total=False):
    session_no: int
    session_date: str
    turns: list[dict[str, Any]]


def _overwrite(_old: Any, new: Any) -> Any:
    return new


@dataclass
class ChatSession:
    """One profile's running conversation."""

    settings: Settings
    home: Path | None = None
    today: date | None = None
    busy_timeout: float = 5.0  # seconds to wait for a file another process is writing
    agent: Agent = field(init=False)
    last: TurnResult | None = field(default=None, init=False)
    gate_log: list[GateResult] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        from langgraph.checkpoint.sqlite import SqliteSaver
        from langgraph.graph import START, StateGraph

        from tools.default_world import default_world
        from tools.world import load_world, save_world

        self.home = self.home or profile_dir(self.settings.profile)
        checked = check_profile(self.home, self.settings.profile, self.busy_timeout)
        world_path = self.home / "world.json"
        if not world_path.exists():
            save_world(default_world(), world_path)
        self.world_path = world_path
        try:
            self.agent = build_agent(
                self.settings,
                self.home,
                world=load_world(world_path),
                busy_timeout=self.busy_timeout,
            )
        except MemoryIndexError as exc:
            raise memory_damaged(exc, checked, self.settings.profile) from exc
        self._chat_path = self.home / CHAT
        self._conn = sqlite3.connect(
            str(self._chat_path), timeout=self.busy_timeout, check_same_thread=False
        )
        try:
            with self._checkpoint():
                self._saver = SqliteSaver(self._conn)
                graph = StateGraph(ChatState)
                graph.add_node("record", lambda state: {})
                graph.add_edge(START, "record")
                self._graph = graph.compile(checkpointer=self._saver)
                self._config: RunnableConfig = {
                    "configurable": {"thread_id": f"chat-{self.settings.profile}"}
                }
                state = self._graph.get_state(self._config).values
            if not state:
                start = self.today or date.today()
                self._save({"session_no": 1, "session_date": start.isoformat(), "turns": []})
        except BaseException:
            self.release()
            raise
        backup_ledger(self.agent.store, self.home)

    @contextmanager
    def _checkpoint(self) -> Iterator[None]:
        """sqlite3 errors of the checkpoint file as one-line StorageErrors."""
        try:
            yield
        except sqlite3.Error as exc:
            raise chat_error(
                exc, self._chat_path, self.settings.profile, self.busy_timeout
            ) from exc

    # -- state ---------------------------------------------------------------------------

    def _state(self) -> ChatState:
        with self._checkpoint():
            return dict(self._graph.get_state(self._config).values)  # type: ignore[return-value]

    def _save(self, state: ChatState) -> None:
        with self._checkpoint():
            self._graph.invoke(state, self._config)

    @property
    def session_no(self) -> int:
        return int(self._state().get("session_no", 1))

    @property
    def session_id(self) -> str:
        return f"{self.settings.profile}-s{self.session_no:03d}"

    @property
    def session_date(self) -> date:
        return date.fromisoformat(self._state()["session_date"])

    def turns(self) -> list[Turn]:
        return [Turn.model_validate(t) for t in self._state().get("turns", [])]

    # -- actions --------------------------------------------------------------------------

    def send(self, text: str) -> TurnResult:
        """Run one user turn through the agent and record both turns in the session."""
        from tools.world import load_world

        self.agent.world = load_world(self.world_path)
        turns = self.turns()
        result = self.agent.respond(text, self.session_date, session=turns)
        self.last = result
        self.gate_log.extend(result.gate_decisions)
        n = len(turns)
        new = [
            Turn(
                session_id=self.session_id,
                session_date=self.session_date,
                index=n,
                speaker="user",
                text=text,
            ),
            Turn(
                session_id=self.session_id,
                session_date=self.session_date,
                index=n + 1,
                speaker="assistant",
                text=result.reply,
            ),
        ]
        state = self._state()
        state["turns"] = [t.model_dump(mode="json") for t in [*turns, *new]]
        self._save(state)
        return result

    def end_session(self) -> list[LedgerEvent]:
        """Write memory and ledger from this session's turns (idempotent per session)."""
        turns = self.turns()
        if not turns:
            return []
        events = self.agent.remember(turns)
        return events

    def new_session(self, days: int = 0) -> list[LedgerEvent]:
        """End this session (remember) and start the next one, moving the clock by `days`."""
        if days < 0:
            raise ValueError("the clock only moves forward")
        events = self.end_session()
        state = self._state()
        self._save(
            {
                "session_no": int(state.get("session_no", 1)) + 1,
                "session_date": (self.session_date + timedelta(days=days)).isoformat(),
                "turns": [],
            }
        )
        return events

    def close(self) -> list[LedgerEvent]:
        """End of input: remember the session, start a fresh one next time, release files.

        If memory, the ledger or the checkpoint cannot be written, the error is raised
        and the session's turns stay in the checkpoint: the next start resumes the same
        session, and its end writes them.
        """
        assert self.home is not None
        try:
            events = self.new_session(0) if self.turns() else []
            backup_ledger(self.agent.store, self.home)
        finally:
            self.release()
        return events

    def release(self) -> None:
        """Close the agent's files and the checkpoint without ending the session (idempotent).

        What a process that stops without `close` leaves: the turns stay in the checkpoint,
        and the next start resumes the session.
        """
        try:
            self.agent.close()
        finally:
            self._conn.close()

    def set_gl(self, on: bool) -> None:
        self.agent.settings.gl = on

    def set_memory(self, mode: str) -> None:
        from agent.memory import open_memory

        old = self.agent.memory
        self.agent.settings.memory = mode  # type: ignore[assignment]
        self.agent.memory = open_memory(
            mode,
            data_dir=self.home,
            chroma_url=self.settings.chroma_url,
            namespace=self.settings.profile,
            embedder=old.embedder,
        )
        release = getattr(old.client, "close", None)
        if release is not None:
            release()  # after the new client opened: a shared Chroma system stays up

    def ledger(self) -> list[Arrangement]:
        return self.agent.ledger()

    def why(self) -> str:
        """Explain the last gate decision with the evidence it rests on."""
        if not self.gate_log:
            return "No gate decision yet in this session."
        g = self.gate_log[-1]
        lines = [f"{g.decision}: {g.tool} {g.args}", f"  because {g.reason}"]
        if g.entry_id:
            lines.append(f"  entry {g.entry_id}")
        if g.scope_diff:
            lines.append(f"  scope: {g.scope_diff}")
        for e in g.evidence:
            lines.append(f'  > [{e.session_date} · {e.session_id} · {e.speaker}] "{e.text}"')
        return "\n".join(lines)
