"""Build an agent from settings in one call.

The factory the CLI, the TUI, replay and tests share.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from types import TracebackType
from typing import Any

from agent.context import AgentInput, ToolStep
from agent.graph import Runtime, run_turn, step_from_dict
from agent.llm import PolicyOutput
from agent.memory import Memory, MemoryItem
from agent.settings import Settings, SettingsError
from ledger.gate import Gate
from ledger.model import Arrangement, GateResult, Turn
from ledger.store import Change, LedgerEvent, LedgerStore
from ledger.writer import LedgerWriter, RulesClassifier
from tools.runtime import ActionLog, Toolbox
from tools.world import World


class LLMAgentPolicy:
    """Adapts `LLMPolicy` (messages in) to the graph's policy interface (AgentInput in)."""

    def __init__(self, settings: Settings, cache_path: Path | None = None) -> None:
        from agent.llm import LLMPolicy
        from agent.llm_cache import ResponseCache

        self.name = settings.model
        self.llm = LLMPolicy(
            settings.model,
            api_base=settings.api_base,
            api_key=settings.api_key,
            timeout=settings.timeout,
            cache=ResponseCache(cache_path) if settings.llm_cache and cache_path else None,
        )
        self._retry: list[dict[str, Any]] = []

    def start_turn(self) -> None:
        """Forget the last turn's invalid-call feedback: it belongs to that turn only."""
        self._retry = []

    def decide(self, inp: AgentInput) -> PolicyOutput:
        from tools.specs import openai_tools

        messages = inp.to_messages() + self._retry
        out = self.llm.decide(messages, openai_tools() if inp.tools_allowed else None)
        self._retry = list(out.retry_messages) if out.error else []
        return out


def make_policy(settings: Settings, cache_path: Path | None = None) -> Any:
    if settings.model == "reference":
        from agent.reference import ReferencePolicy

        return ReferencePolicy()
    return LLMAgentPolicy(settings, cache_path)


@dataclass
class TurnResult:
    """What one user turn produced."""

    request: str
    reply: str
    steps: list[ToolStep]
    recalled: list[MemoryItem]
    ledger_ids: list[str]

    @property
    def gate_decisions(self) -> list[GateResult]:
        return [s.gate for s in self.steps if s.gate is not None]

    @property
    def executed(self) -> list[dict[str, Any]]:
        return [
            {"tool": s.call.name, "args": s.call.args}
            for s in self.steps
            if s.call.name in ("rsvp", "purchase", "send") and s.result is not None and s.result.ok
        ]


@dataclass
class Agent:
    """The personal agent: one profile's memory, ledger, tools and policy."""

    settings: Settings
    memory: Memory
    store: LedgerStore
    world: World
    policy: Any
    actions: ActionLog = field(default_factory=ActionLog)
    similarity: Any = None
    meaning: Any = None  # cosine of MiniLM embeddings, for the ledger writer and the gate
    acceptance: Any = None  # the reply model's P(accept), for the ledger writer
    persist_consumption: bool = True  # replay keeps its frozen ledger untouched
    profile_text: str = ""

    def __post_init__(self) -> None:
        from ledger.text import lexical_similarity

        sim = self.similarity or lexical_similarity
        classifier: Any = RulesClassifier(self.meaning, self.acceptance)
        if self.settings.ledger_writer == "llm":
            from ledger.llm_classifier import LLMClassifier

            classifier = LLMClassifier(
                self.settings.model,
                api_base=self.settings.api_base,
                api_key=self.settings.api_key,
                timeout=self.settings.timeout,
            )
        self.writer = LedgerWriter(self.store, classifier, similarity=self.meaning)
        self._similarity = sim

    def ledger(self) -> list[Arrangement]:
        return self.store.all()

    def remember(self, turns: list[Turn]) -> list[LedgerEvent]:
        """End of a session: write memory and the ledger from the same turns."""
        self.memory.add_session(turns)
        return self.writer.process_session(turns)

    def respond(
        self,
        request: str,
        today: date,
        session: list[Turn] | None = None,
        world: World | None = None,
    ) -> TurnResult:
        """Run the graph on one user request."""
        toolbox = Toolbox(world or self.world, self.actions)
        used: set[str] = set()  # single-use entries used up in this turn
        if isinstance(self.policy, LLMAgentPolicy):
            # Otherwise a turn that ended on an invalid call would hand its "call the
            # tool again" feedback to the next request.
            self.policy.start_turn()

        def entries() -> list[Arrangement]:
            return [
                e.model_copy(update={"consumed": True}) if e.id in used else e
                for e in self.store.all()
            ]

        gate = Gate(
            entries,
            mode=self.settings.gate_mode,
            similarity=self._similarity,
            meaning=self.meaning,
        )

        def on_executed(decision: GateResult) -> None:
            entry = gate.consume(decision)
            if entry is None:
                return
            used.add(entry.id)
            if self.persist_consumption:
                reason = "a single-use arrangement, used up by the call it authorized"
                self.store.apply([Change(arrangement=entry, reason=reason)], writer="gate")

        rt = Runtime(
            policy=self.policy,
            toolbox=toolbox,
            recall=lambda q: self.memory.recall(q, k=5),
            ledger_view=self.store.all if self.settings.gl else None,
            gate=gate if self.settings.gl else None,
            on_executed=on_executed,
            max_tool_steps=self.settings.max_tool_steps,
            profile=self.profile_text,
            session=list(session or []),
        )
        state = run_turn(rt, request, today)
        steps = [step_from_dict(s) for s in state.get("steps", [])]
        return TurnResult(
            request=request,
            reply=state.get("reply", ""),
            steps=steps,
            recalled=rt.recalled,
            ledger_ids=[a.id for a in self.store.all()] if self.settings.gl else [],
        )

    # -- lifetime -------------------------------------------------------------------

    def close(self) -> None:
        """Release what the agent opened: the ledger, the memory's Chroma client, the model cache.

        Idempotent. Each is released even when another fails (the error is raised after the
        rest are released). The agent cannot answer or remember afterwards.
        """
        with ExitStack() as release:  # runs every callback, last registered first
            release.callback(self.store.close)
            close_client = getattr(self.memory.client, "close", None)
            if close_client is not None:
                # Chroma keeps one system (its SQLite files) per path until its last client closes.
                release.callback(close_client)
            if isinstance(self.policy, LLMAgentPolicy) and self.policy.llm.cache is not None:
                release.callback(self.policy.llm.cache.close)

    def __enter__(self) -> Agent:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def build_agent(
    settings: Settings,
    data_dir: Path,
    world: World | None = None,
    namespace: str | None = None,
    profile_text: str = "",
    cache_path: Path | None = None,
    busy_timeout: float = 5.0,
) -> Agent:
    """Everything an agent needs, under one directory (a profile or a replay history).

    The model response cache (when `settings.llm_cache` is on) is `cache_path`, by
    default a file in `data_dir`; replay passes one file shared by every history.
    The ledger waits up to `busy_timeout` seconds for another process's write lock.
    """
    from agent.embeddings import MiniLMEmbedder, embedding_cosine, reply_acceptance
    from agent.memory import open_memory
    from tools.default_world import default_world

    data_dir.mkdir(parents=True, exist_ok=True)
    embedder = MiniLMEmbedder()
    policy = make_policy(settings, cache_path or data_dir / "llm-cache.sqlite")
    facts_writer = None
    if settings.memory == "facts":
        if not isinstance(policy, LLMAgentPolicy):
            raise SettingsError(
                "memory 'facts' needs a real model to extract facts: set --model "
                "(for example openai/gpt-4o-mini) or choose --memory chunks"
            )
        from agent.facts_writer import LLMFactsWriter

        facts_writer = LLMFactsWriter(policy.llm)
    memory = open_memory(
        settings.memory,
        data_dir=data_dir,
        chroma_url=settings.chroma_url,
        namespace=namespace or settings.profile,
        embedder=embedder,
        facts_writer=facts_writer,
    )
    store = LedgerStore(data_dir / "ledger.sqlite", timeout=busy_timeout)
    return Agent(
        settings=settings,
        memory=memory,
        store=store,
        world=world or default_world(),
        policy=policy,
        similarity=_embedding_similarity(embedder),
        meaning=embedding_cosine(embedder),
        acceptance=reply_acceptance(embedder),
        profile_text=profile_text,
    )


def _embedding_similarity(embedder: Any) -> Any:
    """Cosine similarity of MiniLM embeddings blended with lexical overlap."""
    from ledger.text import lexical_similarity

    def sim(a: str, b: str) -> float:
        va, vb = embedder.embed_arrays([a, b])
        return 0.5 * float(va @ vb) + 0.5 * lexical_similarity(a, b)

    return sim
