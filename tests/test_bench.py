"""`grounding bench`: the memory x Grounding Layer matrix on the small corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.embeddings import cache_info
from agent.settings import load_settings
from scenarios.bench import matrix
from scenarios.replay import replay
from tui.cli import main

CORPUS = Path(__file__).parent / "data" / "corpus_min"
CELLS = [f"{m}-gl-{g}" for m in ("none", "history", "chunks") for g in ("off", "on")]


def test_matrix_adds_facts_memory_only_with_a_real_model() -> None:
    assert [c.name for c in matrix("reference")] == CELLS
    names = [c.name for c in matrix("openai/gpt-4o-mini")]
    assert names == [*CELLS, "facts-gl-off", "facts-gl-on"]


def test_bench_writes_one_run_per_cell_and_a_combined_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "--scenarios", str(CORPUS), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "matrix in" in printed and str(out / "report.md") in printed

    for name in CELLS:
        run = out / name
        for part in ("config.json", "metrics.json", "trajectories.jsonl", "report.md"):
            assert (run / part).is_file(), f"{name}/{part}"
        config = json.loads((run / "config.json").read_text())
        memory, _, gl = name.partition("-gl-")
        assert (config["memory"], config["gl"], config["model"]) == (
            memory,
            gl == "on",
            "reference",
        )
        probes = (run / "trajectories.jsonl").read_text().splitlines()
        assert len(probes) == json.loads((run / "metrics.json").read_text())["counts"]["probes"]

    report = (out / "report.md").read_text()
    assert "## Memory x grounding layer" in report
    assert "| memory | sensitivity (GL off) | sensitivity (GL on) |" in report
    for memory in ("none", "history", "chunks"):
        assert f"\n| {memory} | " in report
    assert "## Timing" in report and "| whole matrix |" in report
    for chart in ("sensitivity_selectivity.png", "accuracy_by_condition.png"):
        assert (out / chart).stat().st_size > 0
        assert f"]({chart})" in report

    # One process for the matrix: the turns were embedded once; replaying again embeds nothing.
    misses = cache_info().misses
    replay(CORPUS, tmp_path / "again", load_settings({"memory": "chunks", "gl": True}))
    assert cache_info().misses == misses
