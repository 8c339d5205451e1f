"""Headless replay: script benchmark histories through the same agent the user chats with.

For each history a fresh profile ingests its sessions through `Agent.remember`
(the code chat uses), then stays frozen: probes never write memory or the ledger,
so every probe starts from the same state. Only dialogue turns (and, at probe
time, the request and tool results built from the probe's world) reach the
agent; the evaluation-only fields stay on this side.

With `jobs > 1`, histories run in worker processes (`scenarios.pool`) that send
each probe's record back; this process is the only writer of
`trajectories.jsonl`, appending and flushing every record as it arrives, so a
crash loses at most the probes in flight. At the end the file is rewritten, in
one atomic replace, in the order a one-job run writes, so runs with any number of
jobs give the same file (apart from timings) and the same metrics. `--resume`
checks that the run directory was started with the same corpus and settings,
drops a torn last line and re-runs only the probes not written yet.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import date
from importlib.metadata import version
from pathlib import Path
from typing import Any

from agent.embeddings import MiniLMEmbedder
from agent.factory import Agent, build_agent
from agent.locations import cache_dir
from agent.memory import documents_to_embed, in_process_memory
from agent.settings import Settings, SettingsError
from ledger.model import Turn
from scenarios.histories import History, ProbeSpec, build_histories, build_probes
from scenarios.judge import is_correct, judge
from scenarios.loader import Corpus, load_corpus
from scenarios.metrics import compute_metrics
from scenarios.pool import HistoryStats, HistoryTask, ReplayError, ReplayPool, describe_error


def history_turns(history: History) -> list[list[Turn]]:
    """A history's sessions as agent turns: speaker, text, session id and date only."""
    return [
        [
            Turn(session_id=s.id, session_date=s.date, index=i, speaker=t.speaker, text=t.text)
            for i, t in enumerate(s.turns)
        ]
        for s in history.sessions
    ]


def ingest(agent: Agent, history: History) -> None:
    for turns in history_turns(history):
        agent.remember(turns)


def _reply_text(corpus: Corpus, probe: ProbeSpec) -> str:
    sc = corpus.scenario(probe.scenario_id)
    replies = sc.episode.replies
    return {"G": replies.accept, "R": replies.accept, "S": replies.scoped}.get(
        probe.condition, replies.unrelated
    )


def _attribution(agent: Agent, corpus: Corpus, probe: ProbeSpec, recalled: list[Any]) -> str:
    needle = _reply_text(corpus, probe)[:60]
    stored = any(needle in item.text for item in agent.memory.all_items())
    if not stored:
        return "writing"
    if not any(needle in item.text for item in recalled):
        return "retrieval"
    return "action"


def run_probe(agent: Agent, corpus: Corpus, probe: ProbeSpec) -> dict[str, Any]:
    """Run one probe on a frozen agent and judge it."""
    agent.actions = type(agent.actions)()
    agent.persist_consumption = False  # probes never write the frozen ledger
    started = time.perf_counter()
    result = agent.respond(probe.request, probe.date, world=probe.world)
    elapsed = time.perf_counter() - started
    target = probe.target.model_dump()
    alternative = None
    if probe.alternative is not None:
        alt = probe.alternative
        alternative = {"ask": True} if alt.is_ask else alt.call.model_dump()  # type: ignore[union-attr]
    judgement, asks = judge(result.executed, result.reply, target, alternative)
    correct = is_correct(probe.condition, probe.kind, judgement, asks, alternative)
    return {
        "probe_id": probe.id,
        "history_id": probe.history_id,
        "persona": probe.persona,
        "version": probe.version,
        "scenario_id": probe.scenario_id,
        "condition": probe.condition,
        "probe_kind": probe.kind,
        "request": probe.request,
        "retrieved": [{"session": i.session_id, "text": i.text} for i in result.recalled],
        "ledger_snapshot": result.ledger_ids,
        "tool_calls": [
            {"tool": s.call.name, "args": s.call.args, "ok": bool(s.result and s.result.ok)}
            for s in result.steps
        ],
        "gate_decisions": [
            g.model_dump(mode="json", exclude={"evidence"}) for g in result.gate_decisions
        ],
        "executed": result.executed,
        "reply": result.reply,
        "judgement": str(judgement),
        "asked": asks,
        "correct": correct,
        "attribution_stage": None
        if correct
        else _attribution(agent, corpus, probe, result.recalled),
        "seconds": round(elapsed, 4),
    }


@dataclass
class ReplayStats:
    """What a replay did; `ingest_s` and `probe_s` are summed over the workers."""

    histories: int = 0
    probes: int = 0
    skipped: int = 0
    ingest_s: float = 0.0
    probe_s: float = 0.0
    seconds: float = 0.0  # wall time of the whole call
    jobs: int = 1


# The settings that decide a run's results: resuming with any of them changed would
# mix two runs in one file.
RESUME_KEYS = ("model", "memory", "gl", "ledger_writer", "gate_mode", "judge_model")


def run_config(settings: Settings, corpus: Corpus, jobs: int) -> dict[str, Any]:
    return {
        "corpus": str(corpus.path),
        "corpus_digest": corpus.digest(),
        "model": settings.model,
        "memory": settings.memory,
        "gl": settings.gl,
        "ledger_writer": settings.ledger_writer,
        "gate_mode": settings.gate_mode,
        "llm_cache": settings.llm_cache,
        "jobs": jobs,
        "versions": {p: version(p) for p in ("grounding", "langgraph", "chromadb", "litellm")},
    }


def shared_cache_path() -> Path:
    """The model response cache every replayed history shares (under the cache dir)."""
    return cache_dir() / "llm-cache.sqlite"


# --- one history (in this process or in a worker) ----------------------------------

_loaded: dict[tuple[str, str], tuple[Corpus, dict[str, History], dict[str, list[ProbeSpec]]]] = {}
_judges: dict[tuple[str, str | None, str | None], Any] = {}


def _corpus_for(task: HistoryTask) -> tuple[Corpus, History, list[ProbeSpec]]:
    key = (str(task.corpus_dir), task.corpus_digest)
    if key not in _loaded:
        corpus = load_corpus(task.corpus_dir)
        if corpus.digest() != task.corpus_digest:
            raise ReplayError(f"{task.corpus_dir}: the corpus changed while the run was going")
        histories = {h.id: h for h in build_histories(corpus)}
        _loaded.clear()  # one corpus at a time is all a run needs
        _loaded[key] = (corpus, histories, build_probes(corpus))
    corpus, histories, probes = _loaded[key]
    wanted = set(task.probe_ids)
    history = histories[task.history_id]
    return corpus, history, [p for p in probes[history.id] if p.id in wanted]


def _judge_for(task: HistoryTask) -> Any:
    if not task.judge_model:
        return None
    s = task.settings
    key = (task.judge_model, s.api_base, s.api_key)
    if key not in _judges:
        from scenarios.llm_judge import LLMJudge

        _judges[key] = LLMJudge(task.judge_model, api_base=s.api_base, api_key=s.api_key)
    return _judges[key]


def texts_to_embed(
    settings: Settings, history: History, probes: list[ProbeSpec]
) -> tuple[list[str], list[str]]:
    """Texts worth embedding before this history runs: (sure, likely).

    Sure: the memory's documents and, when memory recalls by similarity, each probe's
    request (the recall query). Likely: every turn's text (about a third of them come
    back whole, as the context of a rule or the turn the ledger writer compares).
    Embedding them ahead only fills the cache: the vectors are the same.
    """
    turns = [t for session in history_turns(history) for t in session]
    sure = documents_to_embed(settings.memory, turns)
    if settings.memory in ("chunks", "facts"):
        sure += [p.request for p in probes]
    return sure, [t.text for t in turns]


def replay_history(task: HistoryTask, emit: Callable[[dict[str, Any]], None]) -> HistoryStats:
    """Ingest one history into a fresh profile, freeze it, run its probes; emit each record.

    The profile is thrown away afterwards, so its memory stays in this process
    (`in_process_memory`) instead of being synced to disk session by session.
    """
    corpus, history, todo = _corpus_for(task)
    move_judge = _judge_for(task)
    stats = HistoryStats(history.id)
    with in_process_memory(task.home):
        agent = build_agent(
            task.settings,
            task.home,
            namespace=f"h-{history.id}",
            profile_text=corpus.personas[history.persona].name,
            cache_path=task.cache_path,
        )
    try:
        t0 = time.perf_counter()
        # What the history is sure to embed, in one batch (none left if prefetched), on one
        # thread: the other core has a prefetch or another worker to run.
        sure, _ = texts_to_embed(task.settings, history, todo)
        MiniLMEmbedder(parallel=False).embed_arrays(sure)
        ingest(agent, history)
        stats.ingest_s = time.perf_counter() - t0
        for probe in todo:
            t1 = time.perf_counter()
            record = run_probe(agent, corpus, probe)
            if move_judge is not None:
                record["move"] = move_judge.label(
                    probe.request, record["executed"], record["reply"]
                )
            stats.probe_s += time.perf_counter() - t1
            stats.probes += 1
            emit(record)
    finally:
        agent.store.close()
        agent.memory.drop()  # a Chroma server outlives the work dir
    return stats


def _run_in_process(
    corpus: Corpus,
    tasks: list[HistoryTask],
    on_record: Callable[[HistoryTask, dict[str, Any]], None],
) -> list[HistoryStats]:
    key = (str(tasks[0].corpus_dir), tasks[0].corpus_digest) if tasks else None
    if key is not None and key not in _loaded:
        _loaded.clear()
        _loaded[key] = (corpus, {h.id: h for h in build_histories(corpus)}, build_probes(corpus))
    results = []
    embedder = MiniLMEmbedder()
    prefetched: list[Future[None]] = []
    try:
        for position, task in enumerate(tasks):
            # On a background thread, while this history runs (mostly Python, on one
            # core): the turns it will likely embed if it is the first (it embeds the
            # sure ones itself, in one batch), and everything the next one will.
            if position == 0:
                _, history, todo = _corpus_for(task)
                prefetched.append(
                    embedder.prefetch(texts_to_embed(task.settings, history, todo)[1])
                )
            if position + 1 < len(tasks):
                upcoming = tasks[position + 1]
                _, history, todo = _corpus_for(upcoming)
                sure, likely = texts_to_embed(upcoming.settings, history, todo)
                prefetched.append(embedder.prefetch(sure + likely))

            def emit(record: dict[str, Any], task: HistoryTask = task) -> None:
                on_record(task, record)

            try:
                results.append(replay_history(task, emit))
            except (ReplayError, SettingsError):
                raise  # a setting that cannot work is no history's fault
            except Exception as exc:
                raise ReplayError(
                    f"history {task.history_id} failed: {describe_error(exc)}"
                ) from exc
    finally:
        for future in prefetched:
            future.cancel()  # one that has started finishes; its vectors stay cached
    return results


# --- the run directory ---------------------------------------------------------------


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _check_same_run(out_dir: Path, old: dict[str, Any], new: dict[str, Any]) -> None:
    again = "Repeat the options it was started with, or start over without --resume."
    if old.get("corpus_digest") != new["corpus_digest"]:
        raise ReplayError(
            f"{out_dir}: the corpus changed since this run started (digest "
            f"{str(old.get('corpus_digest'))[:12]} now {new['corpus_digest'][:12]}); "
            f"cannot resume. Start over without --resume, or use a new --out."
        )
    changed = [
        f"{key} was {old.get(key)!r}, now {new.get(key)!r}"
        for key in RESUME_KEYS
        if old.get(key) != new.get(key)
    ]
    if changed:
        raise ReplayError(
            f"{out_dir}: this run was started with other settings ({'; '.join(changed)}); "
            f"cannot resume. {again}"
        )


def _resumable_lines(out_dir: Path, config: dict[str, Any]) -> list[str]:
    """The complete, distinct records of an interrupted run, after checking it is this run."""
    traj_path = out_dir / "trajectories.jsonl"
    if not traj_path.exists():
        return []
    config_path = out_dir / "config.json"
    try:
        old = json.loads(config_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReplayError(
            f"{out_dir}: trajectories.jsonl but no config.json, so there is no telling what "
            "run it belongs to; cannot resume. Start over without --resume."
        ) from None
    except ValueError as exc:
        raise ReplayError(f"{config_path}: not JSON ({exc}); cannot resume") from exc
    _check_same_run(out_dir, old, config)
    kept: list[str] = []
    seen: set[str] = set()
    for line in traj_path.read_text(encoding="utf-8", errors="replace").split("\n"):
        try:
            probe_id = json.loads(line)["probe_id"]
        except (ValueError, KeyError, TypeError):
            continue  # empty, or torn by a crash mid-write: that probe runs again
        if probe_id not in seen:
            seen.add(probe_id)
            kept.append(line)
    return kept


def _canonical_order(corpus: Corpus) -> dict[str, int]:
    """Probe id -> position in the order a one-job run writes (history, then probe order)."""
    probes = build_probes(corpus)
    order: dict[str, int] = {}
    for history in build_histories(corpus):
        for probe in probes[history.id]:
            order[probe.id] = len(order)
    return order


def _rewrite_in_order(traj_path: Path, order: dict[str, int]) -> list[dict[str, Any]]:
    pairs = []
    for line in traj_path.read_text(encoding="utf-8").splitlines():
        try:
            pairs.append((json.loads(line), line))
        except ValueError:
            continue
    pairs.sort(key=lambda p: order.get(p[0].get("probe_id"), len(order)))
    _write_atomic(traj_path, "".join(line + "\n" for _, line in pairs))
    return [record for record, _ in pairs]


def replay(
    corpus_dir: Path,
    out_dir: Path,
    settings: Settings,
    *,
    resume: bool = False,
    limit: int | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
    judge_model: str | None = None,
    jobs: int = 1,
    max_model_calls: int | None = None,
    pool: ReplayPool | None = None,
    corpus: Corpus | None = None,
) -> tuple[dict[str, Any], ReplayStats]:
    """Replay every history (or the first `limit`) and write the run directory.

    `jobs` worker processes replay histories side by side (1: in this process);
    `max_model_calls` bounds the model calls in flight across them (default: one
    per worker). `pool` lends workers that outlive this call (`bench`). `corpus` is
    the corpus at `corpus_dir` when the caller has loaded it already. Raises
    ReplayError when the run directory belongs to another run or a history fails;
    what was written stays, for `--resume`.
    """
    if jobs < 1:
        raise ValueError("jobs must be at least 1")
    started = time.perf_counter()
    if corpus is None:
        corpus = load_corpus(corpus_dir)
    elif corpus.path != Path(corpus_dir):
        raise ValueError(f"the corpus given was loaded from {corpus.path}, not {corpus_dir}")
    out_dir.mkdir(parents=True, exist_ok=True)
    config = run_config(settings, corpus, pool.jobs if pool else jobs)
    config["judge_model"] = judge_model
    traj_path = out_dir / "trajectories.jsonl"
    kept = _resumable_lines(out_dir, config) if resume else []
    _write_atomic(traj_path, "".join(line + "\n" for line in kept))
    _write_atomic(out_dir / "config.json", json.dumps(config, indent=2, sort_keys=True))
    for stale in out_dir.glob("work-*"):  # profiles left by a run that was killed
        shutil.rmtree(stale, ignore_errors=True)

    done = {json.loads(line)["probe_id"] for line in kept}
    histories = build_histories(corpus)[: limit or None]
    probes = build_probes(corpus)
    stats = ReplayStats(jobs=config["jobs"])
    total = sum(len(probes[h.id]) for h in histories)
    stats.skipped = sum(1 for h in histories for p in probes[h.id] if p.id in done)
    # A fresh directory per invocation: Chroma caches clients by path within a process.
    work = Path(tempfile.mkdtemp(prefix="work-", dir=out_dir))
    cache_path = shared_cache_path() if settings.llm_cache else None
    tasks = [
        HistoryTask(
            corpus_dir=Path(corpus_dir),
            corpus_digest=config["corpus_digest"],
            history_id=h.id,
            probe_ids=tuple(p.id for p in probes[h.id] if p.id not in done),
            settings=settings,
            home=work / h.id,
            cache_path=cache_path,
            judge_model=judge_model,
        )
        for h in histories
        if any(p.id not in done for p in probes[h.id])
    ]
    try:
        with traj_path.open("a", encoding="utf-8") as out:

            def write(task: HistoryTask, record: dict[str, Any]) -> None:
                out.write(json.dumps(record, sort_keys=True) + "\n")
                out.flush()
                os.fsync(out.fileno())
                stats.probes += 1
                if on_progress:
                    on_progress(task.history_id, stats.probes + stats.skipped, total)

            try:
                if pool is not None and tasks:
                    results = pool.run(tasks, write)
                elif jobs > 1 and len(tasks) > 1:
                    with ReplayPool(min(jobs, len(tasks)), max_model_calls) as own:
                        results = own.run(tasks, write)
                else:
                    results = _run_in_process(corpus, tasks, write)
            except ReplayError as exc:
                written = stats.skipped + stats.probes
                raise ReplayError(
                    f"{exc}\n{written} of {total} probes are in {traj_path}; "
                    "run the same command with --resume to finish.",
                    exc.details,
                ) from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for result in results:
        stats.histories += 1
        stats.ingest_s += result.ingest_s
        stats.probe_s += result.probe_s
    records = _rewrite_in_order(traj_path, _canonical_order(corpus))
    metrics = compute_metrics(records)
    _write_atomic(out_dir / "metrics.json", json.dumps(metrics, indent=2, sort_keys=True))
    from scenarios.report import write_report

    write_report(out_dir)
    stats.seconds = time.perf_counter() - started
    return metrics, stats


__all__ = [
    "ReplayError",
    "ReplayPool",
    "ReplayStats",
    "date",
    "history_turns",
    "replay",
    "replay_history",
    "run_probe",
]
