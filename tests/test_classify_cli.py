"""`grounding classify`: JSONL in, JSONL out, per-label counts and scoring on stderr."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, cli_env
from tui.cli import build_parser, main

GROUNDING = str(Path(sys.executable).parent / "grounding")
LABELLED = ROOT / "tests" / "data" / "classify_labelled.jsonl"
LABELS = {"accept", "scoped", "implicit", "revise", "reject", "no_uptake", "no_proposal"}


def classify(
    home: Path, *args: str, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [GROUNDING, "classify", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=cli_env(home, **env),
        timeout=60,
    )


def objects(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


@pytest.fixture(scope="module")
def labelled_run(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    home = tmp_path_factory.mktemp("home")
    return classify(home, "--input", str(LABELLED))


def test_rules_classifier_scores_at_least_95_percent(
    labelled_run: subprocess.CompletedProcess[str],
) -> None:
    assert labelled_run.returncode == 0, labelled_run.stderr
    gold = [json.loads(line) for line in LABELLED.read_text().splitlines() if line.strip()]
    out = objects(labelled_run.stdout)
    assert len(out) == len(gold)
    # Output keeps input order and content; the gold label moves to `gold`.
    for g, o in zip(gold, out, strict=True):
        assert (o["id"], o["assistant"], o["user"]) == (g["id"], g["assistant"], g["user"])
        assert o["gold"] == g["label"]
    right = sum(1 for g, o in zip(gold, out, strict=True) if o["label"] == g["label"])
    accuracy = right / len(gold)
    assert accuracy >= 0.95, f"accuracy {accuracy:.3f}"
    # The command's own figure agrees with the one computed here.
    assert f"accuracy: {accuracy:.3f} ({right}/{len(gold)}" in labelled_run.stderr


def test_every_output_has_a_label_and_scoped_ones_a_scope(
    labelled_run: subprocess.CompletedProcess[str],
) -> None:
    out = objects(labelled_run.stdout)
    assert all(o["label"] in LABELS for o in out)
    scoped = [o for o in out if o["label"] == "scoped"]
    assert scoped
    for o in scoped:
        assert isinstance(o["scope"], str) and o["scope"].strip()
        # The scope is the user's own words.
        assert o["scope"].lower() in o["user"].lower()
    # A gold scope never masquerades as a predicted one.
    assert all("scope" not in o for o in out if o["label"] != "scoped")
    assert any("gold_scope" in o for o in out)


def test_stderr_has_counts_and_a_confusion_matrix(
    labelled_run: subprocess.CompletedProcess[str],
) -> None:
    err = labelled_run.stderr
    out = objects(labelled_run.stdout)
    for label in LABELS:
        count = sum(1 for o in out if o["label"] == label)
        assert any(line.split() == [label, str(count)] for line in err.splitlines()), label
    assert "confusion matrix" in err
    rows = {
        line.split()[0]: [int(x) for x in line.split()[1:]]
        for line in err.split("confusion matrix", 1)[1].splitlines()
        if line.split() and line.split()[0] in LABELS
    }
    assert set(rows) == LABELS
    assert sum(sum(r) for r in rows.values()) == len(out)
    # The diagonal holds the correct answers.
    order = ["accept", "scoped", "implicit", "revise", "reject", "no_uptake", "no_proposal"]
    diagonal = sum(rows[label][i] for i, label in enumerate(order))
    assert diagonal == sum(1 for o in out if o["label"] == o["gold"])


def test_stdin_unlabelled_input(grounding_home: Path) -> None:
    lines = [
        {
            "assistant": "From now on, should I decline every invitation from the PTA?",
            "user": "Only the ones on weeknights.",
        },
        {"assistant": "The dentist is on Tuesday at 3pm.", "user": "Thanks!", "extra": [1, 2]},
    ]
    stdin = "".join(json.dumps(o) + "\n" for o in lines) + "\n"  # a trailing blank line is fine
    run = classify(grounding_home, stdin=stdin)
    assert run.returncode == 0, run.stderr
    out = objects(run.stdout)
    assert [o["label"] for o in out] == ["scoped", "no_proposal"]
    assert "weeknights" in out[0]["scope"]
    assert out[1]["extra"] == [1, 2]  # other fields pass through
    assert all("gold" not in o for o in out)
    assert "accuracy" not in run.stderr
    assert "classified 2 line(s)" in run.stderr


def test_input_dash_reads_stdin(grounding_home: Path) -> None:
    obj = {"assistant": "Going forward I'll cc Dana on vendor emails.", "user": "Sounds good."}
    run = classify(grounding_home, "--input", "-", stdin=json.dumps(obj) + "\n")
    assert run.returncode == 0, run.stderr
    assert objects(run.stdout)[0]["label"] == "accept"


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"assistant": "hi"}', "'user'"),
        ('{"assistant": "hi", "user": "yo", "label": "maybe"}', "unknown label"),
    ],
)
def test_bad_line_exits_2_and_names_the_line(grounding_home: Path, bad: str, needle: str) -> None:
    good = json.dumps({"assistant": "From now on I'll buy oat milk.", "user": "Sure."})
    run = classify(grounding_home, stdin=f"{good}\n\n{bad}\n{good}\n")
    assert run.returncode == 2
    assert "line 3:" in run.stderr  # the blank line still counts
    assert needle in run.stderr
    # The input is checked before anything is classified: nothing half-written.
    assert run.stdout == ""
    assert "Traceback" not in run.stderr


def test_missing_input_file(grounding_home: Path, tmp_path: Path) -> None:
    run = classify(grounding_home, "--input", str(tmp_path / "nope.jsonl"))
    assert run.returncode == 2
    assert "nope.jsonl" in run.stderr and "Traceback" not in run.stderr


def test_llm_writer_needs_a_model(grounding_home: Path) -> None:
    run = classify(grounding_home, "--writer", "llm", stdin='{"assistant": "a", "user": "b"}\n')
    assert run.returncode == 2
    assert "--model" in run.stderr
    assert run.stdout == ""


def test_classify_is_registered_next_to_chat() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    choices = dict(sub.choices or {})  # type: ignore[call-overload]
    assert "classify" in choices and "chat" in choices
    args = parser.parse_args(["classify", "--writer", "llm", "--model", "openai/x"])
    assert (args.ledger_writer, args.model, args.input) == ("llm", "openai/x", None)


def test_llm_writer_uses_the_llm_classifier(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # In-process (litellm is slow to import; the other tests cover the installed command).
    pytest.importorskip("ledger.llm_classifier")
    from tests.fakellm import FakeLLM

    def responder(request: dict[str, Any]) -> str:
        prompt = request["messages"][-1]["content"]
        if "weekends" in prompt:
            return json.dumps({"label": "scoped", "scope": "only on weekends"})
        return json.dumps({"label": "accept"})

    rows = [
        {"assistant": "From now on I'll RSVP yes to game nights.", "user": "Sure thing."},
        {
            "assistant": "From now on I'll RSVP yes to game nights.",
            "user": "Only on weekends.",
            "label": "scoped",
        },
    ]
    monkeypatch.setenv("GROUNDING_API_KEY", "sk-local")
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(json.dumps(r) + "\n" for r in rows)))
    with FakeLLM(responder=responder) as fake:
        code = main(
            ["classify", "--writer", "llm", "--model", "openai/fake", "--api-base", fake.url]
        )
        requests = list(fake.requests)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    out = objects(captured.out)
    assert [o["label"] for o in out] == ["accept", "scoped"]
    assert out[1]["scope"] == "only on weekends"
    assert out[1]["gold"] == "scoped"
    assert len(requests) == 6  # three agreeing votes per line
    assert all(r["model"] == "fake" for r in requests)
    assert "accuracy: 1.000 (1/1" in captured.err
