"""Reports over run directories: loading, tables, McNemar, JSON and PNG charts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scenarios.metrics import compute_metrics
from scenarios.report import (
    Run,
    bench_table,
    compare_table,
    format_metric,
    load_run,
    report_json,
    write_report,
)


def rec(
    persona: str, scenario: str, condition: str, judgement: str, correct: bool, version: int = 0
) -> dict[str, Any]:
    return {
        "history_id": f"{persona}-v{version}",
        "persona": persona,
        "version": version,
        "scenario_id": scenario,
        "condition": condition,
        "probe_kind": "base",
        "request": "Kevin invited me to drinks.",
        "tool_calls": [],
        "final_reply": "Should I RSVP?",
        "judgement": judgement,
        "correct": correct,
        "asked": judgement == "asked",
        "attribution_stage": None,
    }


def records(run: str) -> list[dict[str, Any]]:
    """Twelve N probes (s0..s11) and one G/I pair of p1 (G in version 0, I in version 1).

    A is right on s0-s7, s10, s11 and both G/I probes; B on s8-s11 and the G probe.
    On N: b = 8 (s0-s7), c = 2 (s8, s9). Over all base probes the I probe adds one to b.
    """
    right_a = {f"s{i}" for i in (0, 1, 2, 3, 4, 5, 6, 7, 10, 11)}
    right_b = {f"s{i}" for i in (8, 9, 10, 11)}
    right = right_a if run == "A" else right_b
    out = []
    for i in range(12):
        scenario = f"s{i}"
        correct = scenario in right
        out.append(
            rec(
                "p1" if i < 6 else "p2",
                scenario,
                "N",
                "asked" if correct else "executed_target",
                correct,
            )
        )
    out.append(rec("p1", "g", "G", "executed_target", True))
    if run == "A":
        out.append(rec("p1", "g", "I", "asked", True, version=1))
    else:
        out.append(rec("p1", "g", "I", "executed_target", False, version=1))
    return out


def make_run(
    root: Path,
    name: str,
    *,
    memory: str = "history",
    gl: bool = True,
    model: str = "reference",
    trajectories: list[dict[str, Any]] | None = None,
    with_metrics: bool = True,
) -> Path:
    run_dir = root / name
    run_dir.mkdir(parents=True)
    lines = trajectories if trajectories is not None else records("A")
    config = {"model": model, "memory": memory, "gl": gl, "corpus_hash": "abc", "writer": "rules"}
    (run_dir / "config.json").write_text(json.dumps(config))
    (run_dir / "trajectories.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    if with_metrics:
        metrics = compute_metrics(lines, n_boot=200, seed=0)
        (run_dir / "metrics.json").write_text(json.dumps(metrics))
    return run_dir


@pytest.fixture
def two_runs(tmp_path: Path) -> list[Run]:
    a = make_run(tmp_path, "run-a", gl=True, trajectories=records("A"))
    b = make_run(tmp_path, "run-b", gl=False, trajectories=records("B"))
    return [load_run(a), load_run(b)]


def test_load_run_reads_the_three_files(tmp_path: Path) -> None:
    run = load_run(make_run(tmp_path, "r", memory="facts", gl=False, model="openai/gpt-4o"))
    assert run.label == "facts, GL off, openai/gpt-4o"
    assert (run.memory, run.gl, run.model) == ("facts", False, "openai/gpt-4o")
    assert len(run.trajectories) == 14
    assert run.metrics["counts"]["probes"] == 14


def test_load_run_computes_missing_metrics(tmp_path: Path) -> None:
    run = load_run(make_run(tmp_path, "r", with_metrics=False))
    # A: 14 base probes, wrong on s8 and s9.
    assert run.metrics["accuracy"]["value"] == pytest.approx(12 / 14)


def test_load_run_rejects_a_directory_that_is_not_a_run(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not a run directory"):
        load_run(tmp_path)
    bad = make_run(tmp_path, "bad")
    (bad / "trajectories.jsonl").write_text('{"a": 1}\nnot json\n')
    (bad / "metrics.json").unlink()
    with pytest.raises(ValueError, match=r"trajectories\.jsonl:2"):
        load_run(bad)


def test_format_metric() -> None:
    assert format_metric({"value": 0.923, "ci": [0.851, 0.968], "n": 10}) == "0.92 [0.85, 0.97]"
    assert format_metric({"value": -0.25, "ci": [-1.0, 0.3333], "n": 6}) == "-0.25 [-1.00, 0.33]"
    assert format_metric({"value": -0.0001, "ci": None, "n": 6}) == "0.00"
    assert format_metric({"value": None, "ci": None, "n": 0}) == "n/a"
    assert format_metric(None) == "n/a"


def test_compare_table_for_one_run(tmp_path: Path) -> None:
    run = load_run(make_run(tmp_path, "r", memory="chunks", gl=True))
    table = compare_table([run])
    header, rule, row = table.splitlines()
    assert header == (
        "| run | sensitivity | selectivity | fcg | ue | accuracy | revision_accuracy"
        " | exposure | overgeneralization | overconservatism |"
    )
    assert rule.count("---") == 10
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[0] == "chunks, GL on, reference"
    # Sensitivity, fcg and ue come from p1 only, so every resample agrees with the value.
    assert cells[1] == "1.00 [1.00, 1.00]"
    assert cells[2] == "n/a"  # no S probes
    assert cells[3] == "0.00 [0.00, 0.00]"
    assert cells[5].startswith("0.86 [")  # 12 / 14
    assert "McNemar" not in table


def test_compare_table_for_two_runs_appends_mcnemar(two_runs: list[Run]) -> None:
    table = compare_table(two_runs)
    assert "| history, GL on, reference | 1.00 [1.00, 1.00] |" in table
    assert "| history, GL off, reference | 0.00 [0.00, 0.00] |" in table
    assert "A = history, GL on, reference, B = history, GL off, reference" in table
    # N: b = 8, c = 2 -> 0.109375; all base: b = 9, c = 2 -> 2 * 67 / 2048.
    assert "| N | 12 | 8 | 2 | 0.1094 |" in table
    assert "| accuracy | 14 | 9 | 2 | 0.06543 |" in table
    assert "| G | 1 | 0 | 0 | 1 |" in table


def test_same_labels_are_told_apart_by_directory(tmp_path: Path) -> None:
    runs = [load_run(make_run(tmp_path, name)) for name in ("one", "two", "three")]
    table = compare_table(runs)
    assert "history, GL on, reference (one)" in table
    assert "history, GL on, reference (three)" in table
    assert "McNemar" not in table


def test_report_json(two_runs: list[Run]) -> None:
    data = report_json(two_runs)
    assert [r["label"] for r in data["runs"]] == [
        "history, GL on, reference",
        "history, GL off, reference",
    ]
    assert data["runs"][0]["config"]["corpus_hash"] == "abc"
    assert data["mcnemar"]["N"]["p_value"] == pytest.approx(0.109375)
    assert data["mcnemar"]["accuracy"]["b"] == 9
    json.dumps(data)  # serialisable as is
    assert report_json(two_runs[:1])["mcnemar"] is None


def _is_png(path: Path) -> bool:
    return path.is_file() and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_write_report_for_a_single_run_directory(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "r")
    report = write_report(run_dir)
    assert report == run_dir / "report.md"
    text = report.read_text()
    assert "history, GL on, reference" in text
    assert "1.00 [1.00, 1.00]" in text
    assert "![Sensitivity and selectivity](sensitivity_selectivity.png)" in text
    assert _is_png(run_dir / "sensitivity_selectivity.png")
    assert _is_png(run_dir / "accuracy_by_condition.png")


def test_write_report_for_several_runs(tmp_path: Path, two_runs: list[Run]) -> None:
    out = tmp_path / "bench"
    report = write_report(out, two_runs)
    text = report.read_text()
    assert "McNemar" in text
    assert "Memory x grounding layer" in text
    assert _is_png(out / "sensitivity_selectivity.png")
    assert _is_png(out / "accuracy_by_condition.png")


def test_bench_table_is_memory_by_gl(tmp_path: Path) -> None:
    runs = []
    for memory in ("history", "none"):
        for gl in (True, False):
            trajectories = records("A" if gl else "B")
            runs.append(
                load_run(
                    make_run(
                        tmp_path, f"{memory}-{gl}", memory=memory, gl=gl, trajectories=trajectories
                    )
                )
            )
    runs.append(load_run(make_run(tmp_path, "llm", memory="facts", gl=True, model="ollama/qwen3")))
    table = bench_table(runs)
    assert "Model `reference`:" in table
    assert "Model `ollama/qwen3`:" in table
    lines = table.split("Model `reference`:")[1].splitlines()
    header = next(line for line in lines if line.startswith("| memory"))
    assert "| sensitivity (GL off) | sensitivity (GL on) |" in header
    assert header.count("|") == 1 + 1 + 6 * 2
    rows = [line for line in lines if line.startswith(("| none", "| history"))]
    assert [row.split("|")[1].strip() for row in rows] == ["none", "history"]
    # sensitivity off (B) 0.00, on (A) 1.00; accuracy off 5/14, on 12/14.
    assert rows[0].startswith(
        "| none | 0.00 | 1.00 | n/a | n/a | 1.00 | 0.00 | 1.00 | 0.00 | 0.36 | 0.86 |"
    )
    facts = next(line for line in table.splitlines() if line.startswith("| facts"))
    assert facts.startswith("| facts | 1.00 | n/a |")


def test_report_module_imports_neither_matplotlib_nor_textual() -> None:
    code = (
        "import sys, scenarios.report, scenarios.metrics, scenarios.judge;"
        "bad = {'matplotlib', 'textual'} & set(sys.modules);"
        "sys.exit(f'imported: {bad}' if bad else 0)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parent.parent)
