"""Replay end to end on the tiny corpus, and the leakage test: evaluation-only fields never
reach the agent's input, its memory or its ledger."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent.context import AgentInput
from agent.factory import Agent
from agent.settings import load_settings
from scenarios import replay as replay_mod
from scenarios.replay import replay

CORPUS = Path(__file__).parent / "data" / "corpus_min"
MARKER = "ZQXMARKER"


def test_replay_writes_run_dir(tmp_path: Path) -> None:
    metrics, stats = replay(CORPUS, tmp_path / "run", load_settings({"gl": True}))
    run = tmp_path / "run"
    for name in ("config.json", "trajectories.jsonl", "metrics.json", "report.md"):
        assert (run / name).exists(), name
    lines = (run / "trajectories.jsonl").read_text().splitlines()
    assert len(lines) == stats.probes > 0
    record = json.loads(lines[0])
    for key in ("history_id", "scenario_id", "condition", "probe_kind", "judgement", "correct"):
        assert key in record
    config = json.loads((run / "config.json").read_text())
    assert config["gl"] is True and config["model"] == "reference"
    assert metrics["accuracy"]["value"] is not None


def test_resume_skips_done_probes(tmp_path: Path) -> None:
    run = tmp_path / "run"
    replay(CORPUS, run, load_settings({}))
    lines = (run / "trajectories.jsonl").read_text().splitlines()
    # simulate a crash: drop the last two probes and tear the last line
    (run / "trajectories.jsonl").write_text("\n".join(lines[:-2]) + "\n" + lines[-2][:20])
    _, stats = replay(CORPUS, run, load_settings({}), resume=True)
    after = [json.loads(x) for x in (run / "trajectories.jsonl").read_text().splitlines()]
    assert stats.probes == 2
    assert sorted(r["probe_id"] for r in after) == sorted(json.loads(x)["probe_id"] for x in lines)


def _poison(src: Path, dest: Path) -> None:
    shutil.copytree(src, dest)
    for path in dest.rglob("*.yaml"):
        data = yaml.safe_load(path.read_text())
        if "persona" in data:  # a scenario
            data["arrangement"] = f"{MARKER} {data['arrangement']}"
            data["alternative"] = f"{MARKER} {data['alternative']}"
            data["type"] = data["type"]  # enums cannot carry a marker; they are checked by value
            data["leakage_terms"] = [*data["leakage_terms"], MARKER]
        else:
            data["background"] = f"{MARKER} {data['background']}"
        path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_evaluation_only_fields_never_reach_the_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus"
    _poison(CORPUS, corpus)
    seen: list[str] = []
    agents: list[Agent] = []
    real_decide = None

    def spy(self: Any, inp: AgentInput) -> Any:
        seen.append(json.dumps(inp.to_messages()))
        return real_decide(self, inp)  # type: ignore[misc]

    from agent.reference import ReferencePolicy

    real_decide = ReferencePolicy.decide
    monkeypatch.setattr(ReferencePolicy, "decide", spy)
    real_ingest = replay_mod.ingest

    stored: list[str] = []

    def ingest(agent: Agent, history: Any) -> None:
        agents.append(agent)
        real_ingest(agent, history)
        stored.extend(i.text for i in agent.memory.all_items())
        stored.append(json.dumps([a.model_dump(mode="json") for a in agent.store.all()]))

    monkeypatch.setattr(replay_mod, "ingest", ingest)
    replay(corpus, tmp_path / "run", load_settings({"gl": True}))
    assert seen and agents
    assert not [s for s in seen if MARKER in s]
    assert len(stored) > len(agents)  # memory items and one ledger dump per history
    assert not [s for s in stored if MARKER in s]
