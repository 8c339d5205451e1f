"""Worker processes for `grounding replay --jobs N` and `grounding bench --jobs N`.

Each worker replays whole histories (ingest, freeze, probes) in its own profile
directory and streams every probe's record back on one queue; the parent is the
only writer of `trajectories.jsonl`. Workers are started with "spawn": a clean
interpreter that imports what it needs (about 2-3 s of LangGraph, Chroma and
onnxruntime, once per worker), holds no copy of the parent's threads or open
SQLite and Chroma handles, and inherits the environment of the moment.

Tasks are dealt in contiguous blocks (the first `len/jobs` histories to worker 0,
...), not from one shared queue: the versions of a persona share most of their
turns, and a worker's embedding cache only helps the histories it sees. For the
same reason, in `bench` a history lands on the same worker in every configuration.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.settings import Settings

__all__ = [
    "HistoryStats",
    "HistoryTask",
    "ReplayError",
    "ReplayPool",
    "describe_error",
    "limit_model_calls",
]


class ReplayError(RuntimeError):
    """A replay cannot start or did not finish; the message says why.

    `details` holds a worker's traceback when a history failed in a worker.
    """

    def __init__(self, message: str, details: str = "") -> None:
        super().__init__(message)
        self.details = details


@dataclass(frozen=True)
class HistoryTask:
    """One history to replay, with everything a worker needs (all picklable)."""

    corpus_dir: Path
    corpus_digest: str
    history_id: str
    probe_ids: tuple[str, ...]
    settings: Settings
    home: Path  # the history's own profile directory
    cache_path: Path | None  # the shared model response cache, or None
    judge_model: str | None = None

    @property
    def uses_model(self) -> bool:
        """Whether replaying it calls a model (the policy, the ledger writer or the judge)."""
        s = self.settings
        return s.model != "reference" or s.ledger_writer == "llm" or bool(self.judge_model)


@dataclass
class HistoryStats:
    """What replaying one history cost."""

    history_id: str
    probes: int = 0
    ingest_s: float = 0.0
    probe_s: float = 0.0


OnRecord = Callable[[HistoryTask, dict[str, Any]], None]


def limit_model_calls(semaphore: Any) -> None:
    """At most as many litellm calls at once, across processes, as `semaphore` allows.

    The policy, the LLM ledger writer and the judge all call `litellm.completion`
    through the module, so wrapping it once in this process bounds every one of
    them. litellm's own retries (with backoff on 429s) happen inside the wrapper.
    """
    from agent.llm import load_litellm

    litellm = load_litellm()
    if getattr(litellm.completion, "_grounding_limited", False):
        return
    real = litellm.completion

    def completion(*args: Any, **kwargs: Any) -> Any:
        with semaphore:
            return real(*args, **kwargs)

    completion._grounding_limited = True  # type: ignore[attr-defined]
    litellm.completion = completion


def describe_error(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


def _worker_main(
    tasks: Any, events: Any, semaphore: Any, parent_pid: int
) -> None:  # pragma: no cover - runs in the child process
    """A worker: replay the histories put on `tasks` until None arrives."""
    # Ctrl-C reaches the whole process group: the parent decides and terminates us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from scenarios.replay import replay_history

    limited = False
    while True:
        try:
            item = tasks.get(timeout=1.0)
        except queue.Empty:
            if os.getppid() != parent_pid:  # the parent is gone (kill -9): stop
                return
            continue
        if item is None:
            return
        key, task = item
        if semaphore is not None and task.uses_model and not limited:
            limit_model_calls(semaphore)
            limited = True

        def emit(record: dict[str, Any], key: str = key) -> None:
            if os.getppid() != parent_pid:
                os._exit(1)  # nobody will write this record: do not go on
            events.put(("record", key, record))

        try:
            stats = replay_history(task, emit)
        except BaseException as exc:
            events.put(("error", key, (describe_error(exc), traceback.format_exc())))
            return
        events.put(("done", key, stats))


class ReplayPool:
    """`jobs` worker processes that replay histories; use as a context manager."""

    def __init__(self, jobs: int, max_model_calls: int | None = None) -> None:
        if jobs < 1:
            raise ValueError("jobs must be at least 1")
        ctx = mp.get_context("spawn")
        self.jobs = jobs
        self._events: Any = ctx.Queue()
        # Each worker makes one call at a time, so only a bound below `jobs` binds.
        self._semaphore = (
            ctx.BoundedSemaphore(max_model_calls)
            if max_model_calls is not None and max_model_calls < jobs
            else None
        )
        self._queues: list[Any] = [ctx.Queue() for _ in range(jobs)]
        self._procs = [
            ctx.Process(
                target=_worker_main,
                args=(q, self._events, self._semaphore, os.getpid()),
                name=f"grounding-replay-{i}",
                daemon=True,
            )
            for i, q in enumerate(self._queues)
        ]
        for proc in self._procs:
            proc.start()
        self._batches = 0
        self._closed = False

    def __enter__(self) -> ReplayPool:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.close(terminate=exc_type is not None)

    def run(self, tasks: Sequence[HistoryTask], on_record: OnRecord) -> list[HistoryStats]:
        """Replay `tasks`; `on_record` gets each probe's record as it arrives (parent side).

        Raises ReplayError naming the history when one fails or its worker dies; the
        pool is closed then, and the records already delivered stay delivered.
        """
        if self._closed:
            raise RuntimeError("the replay pool is closed")
        self._batches += 1
        by_key: dict[str, HistoryTask] = {}
        assigned: dict[str, int] = {}
        for position, task in enumerate(tasks):
            key = f"{self._batches}:{position}"
            by_key[key] = task
            assigned[key] = position * self.jobs // len(tasks)
            self._queues[assigned[key]].put((key, task))
        results: dict[str, HistoryStats] = {}
        try:
            while len(results) < len(by_key):
                try:
                    kind, key, payload = self._events.get(timeout=0.5)
                except queue.Empty:
                    self._check_alive(by_key, assigned, results)
                    continue
                task = by_key[key]
                if kind == "record":
                    on_record(task, payload)
                elif kind == "done":
                    results[key] = payload
                else:
                    summary, details = payload
                    raise ReplayError(
                        f"history {task.history_id} failed in a worker: {summary}", details
                    )
        except BaseException:
            self.close(terminate=True)
            raise
        return [results[key] for key in by_key]

    def _check_alive(
        self,
        by_key: dict[str, HistoryTask],
        assigned: dict[str, int],
        results: dict[str, HistoryStats],
    ) -> None:
        for index, proc in enumerate(self._procs):
            if proc.is_alive():
                continue
            waiting = [k for k in by_key if assigned[k] == index and k not in results]
            if waiting:  # tasks run in order, so the first one was in flight
                raise ReplayError(
                    f"history {by_key[waiting[0]].history_id}: its worker process died "
                    f"(exit code {proc.exitcode})"
                )

    def close(self, terminate: bool = False) -> None:
        """Stop the workers: let them finish their queue, or kill them at once."""
        if self._closed:
            return
        self._closed = True
        for q in self._queues:
            q.cancel_join_thread()  # never block the parent's exit on an unread task
            if not terminate:
                q.put(None)
        for proc in self._procs:
            if not terminate:
                proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()
            proc.join(timeout=5)
        self._events.cancel_join_thread()
