"""Headless replay: script benchmark histories through the same agent the user chats with.

For each history a fresh profile ingests its sessions through `Agent.remember`
(the code chat uses), then stays frozen: probes never write memory or the ledger,
so every probe starts from the same state. Only dialogue turns (and, at probe
time, the request and tool results built from the probe's world) reach the
agent; the evaluation-only fields stay on this side.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from importlib.metadata import version
from pathlib import Path
from typing import Any

from agent.factory import Agent, build_agent
from agent.settings import Settings
from ledger.model import Turn
from scenarios.histories import History, ProbeSpec, build_histories, build_probes
from scenarios.judge import is_correct, judge
from scenarios.loader import Corpus, load_corpus
from scenarios.metrics import compute_metrics


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
    histories: int = 0
    probes: int = 0
    skipped: int = 0
    ingest_s: float = 0.0
    probe_s: float = 0.0


def run_config(settings: Settings, corpus: Corpus, jobs: int) -> dict[str, Any]:
    return {
        "corpus": str(corpus.path),
        "corpus_digest": corpus.digest(),
        "model": settings.model,
        "memory": settings.memory,
        "gl": settings.gl,
        "ledger_writer": settings.ledger_writer,
        "gate_mode": settings.gate_mode,
        "jobs": jobs,
        "versions": {p: version(p) for p in ("grounding", "langgraph", "chromadb", "litellm")},
    }


def replay(
    corpus_dir: Path,
    out_dir: Path,
    settings: Settings,
    *,
    resume: bool = False,
    limit: int | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
    judge_model: str | None = None,
) -> tuple[dict[str, Any], ReplayStats]:
    """Replay every history (or the first `limit`) and write the run directory."""
    corpus = load_corpus(corpus_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    config = run_config(settings, corpus, 1)
    config["judge_model"] = judge_model
    move_judge = None
    if judge_model:
        from scenarios.llm_judge import LLMJudge

        move_judge = LLMJudge(judge_model, api_base=settings.api_base, api_key=settings.api_key)
    traj_path = out_dir / "trajectories.jsonl"
    done: set[str] = set()
    if resume and traj_path.exists():
        old = json.loads((out_dir / "config.json").read_text())
        if old.get("corpus_digest") != config["corpus_digest"]:
            raise ValueError(f"{out_dir}: the corpus changed since this run started; cannot resume")
        lines = traj_path.read_text(encoding="utf-8").splitlines()
        good = []
        for line in lines:
            try:
                done.add(json.loads(line)["probe_id"])
                good.append(line)
            except (ValueError, KeyError):
                break  # a torn last line from a crash: drop it, re-run that probe
        traj_path.write_text("".join(g + "\n" for g in good), encoding="utf-8")
    else:
        traj_path.write_text("", encoding="utf-8")
    (out_dir / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True))

    histories = build_histories(corpus)[: limit or None]
    probes = build_probes(corpus)
    stats = ReplayStats()
    total = sum(len(probes[h.id]) for h in histories)
    # A fresh directory per invocation: Chroma caches clients by path within a process.
    work = Path(tempfile.mkdtemp(prefix="work-", dir=out_dir))
    with traj_path.open("a", encoding="utf-8") as out:
        for history in histories:
            todo = [p for p in probes[history.id] if p.id not in done]
            stats.skipped += len(probes[history.id]) - len(todo)
            if not todo:
                continue
            home = work / history.id
            persona = corpus.personas[history.persona]
            agent = build_agent(
                settings, home, namespace=f"h-{history.id}", profile_text=persona.name
            )
            t0 = time.perf_counter()
            ingest(agent, history)
            stats.ingest_s += time.perf_counter() - t0
            stats.histories += 1
            for probe in todo:
                t1 = time.perf_counter()
                record = run_probe(agent, corpus, probe)
                if move_judge is not None:
                    record["move"] = move_judge.label(
                        probe.request, record["executed"], record["reply"]
                    )
                stats.probe_s += time.perf_counter() - t1
                out.write(json.dumps(record, sort_keys=True) + "\n")
                out.flush()
                os.fsync(out.fileno())
                stats.probes += 1
                if on_progress:
                    on_progress(history.id, stats.probes + stats.skipped, total)
            agent.store.close()
            agent.memory.drop()  # a Chroma server outlives the work dir
    shutil.rmtree(work, ignore_errors=True)
    records = [json.loads(line) for line in traj_path.read_text().splitlines() if line.strip()]
    metrics = compute_metrics(records)
    (out_dir / "metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True))
    from scenarios.report import write_report

    write_report(out_dir)
    return metrics, stats


__all__ = ["date", "history_turns", "replay", "run_probe"]
