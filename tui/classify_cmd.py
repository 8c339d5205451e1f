"""`grounding classify`: label grounding acts in JSONL, and score them against gold labels.

Input: one JSON object per line with string fields ``assistant`` (the assistant turn)
and ``user`` (the user's next turn); blank lines are skipped. Output (stdout): the
same objects, one per line, with ``label`` added, plus ``scope`` for ``scoped`` and
``revision`` for ``revise``. Per-label counts go to stderr.

When an input object already carries a ``label``, it is kept as ``gold`` (and an
input ``scope`` as ``gold_scope``), and stderr also gets the accuracy and a
confusion matrix (rows: gold, columns: predicted).

The whole input is read and checked before anything is classified, so a bad line
stops the command (exit 2, ``line N: ...`` on stderr) before any output or any
model call.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from agent.settings import Settings
from ledger.model import Act
from ledger.writer import ReplyClassifier, RulesClassifier

LABELS: tuple[str, ...] = tuple(a.value for a in Act)


class InputError(ValueError):
    """A line of the input is not a usable object; the message starts with 'line N:'."""


def parse_lines(lines: Iterable[str]) -> list[tuple[int, dict[str, Any]]]:
    """Validate every input line; return (line number, object) for the non-blank ones."""
    rows: list[tuple[int, dict[str, Any]]] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"line {number}: not valid JSON ({exc.msg} at column {exc.colno})"
            ) from None
        if not isinstance(obj, dict):
            raise InputError(f"line {number}: expected a JSON object, got {type(obj).__name__}")
        for key in ("assistant", "user"):
            if not isinstance(obj.get(key), str):
                raise InputError(f"line {number}: missing string field {key!r}")
        gold = obj.get("label")
        if gold is not None and gold not in LABELS:
            raise InputError(
                f"line {number}: unknown label {gold!r} (expected one of {', '.join(LABELS)})"
            )
        rows.append((number, obj))
    return rows


def make_classifier(writer: str, settings: Settings) -> ReplyClassifier:
    """The rules classifier, or the LLM classifier on the configured model."""
    if writer == "rules":
        # The same reading as the agent's ledger writer: rules, MiniLM's meaning check and
        # the reply model.
        from agent.embeddings import MiniLMEmbedder, embedding_cosine, reply_acceptance

        embedder = MiniLMEmbedder()
        return RulesClassifier(embedding_cosine(embedder), reply_acceptance(embedder))
    if settings.model == "reference":
        raise InputError(
            "--writer llm needs a litellm model: pass --model (e.g. openai/gpt-4o-mini, "
            "ollama/llama3) or set `model` in the config file"
        )
    from ledger.llm_classifier import LLMClassifier

    return LLMClassifier(
        settings.model,
        api_base=settings.api_base,
        api_key=settings.api_key,
        timeout=settings.timeout,
    )


def label_row(classifier: ReplyClassifier, obj: dict[str, Any]) -> dict[str, Any]:
    """The output object for one input object."""
    out = dict(obj)
    if "label" in out:
        out["gold"] = out.pop("label")
    if "scope" in out:
        out["gold_scope"] = out.pop("scope")
    result = classifier.classify_reply(obj["assistant"], obj["user"])
    out["label"] = result.act.value
    if result.act is Act.scoped:
        out["scope"] = result.scope or obj["user"].strip()
    elif result.act is Act.revise and result.revision:
        out["revision"] = result.revision
    return out


def summary(outputs: list[dict[str, Any]]) -> str:
    """Per-label counts; with gold labels, accuracy and a confusion matrix too."""
    counts = Counter(o["label"] for o in outputs)
    lines = [f"classified {len(outputs)} line(s)"]
    lines += [f"  {label:<12} {counts.get(label, 0)}" for label in LABELS]
    scored = [o for o in outputs if "gold" in o]
    if not scored:
        return "\n".join(lines)
    right = sum(1 for o in scored if o["gold"] == o["label"])
    lines.append(f"accuracy: {right / len(scored):.3f} ({right}/{len(scored)} with a gold label)")
    pairs = Counter((o["gold"], o["label"]) for o in scored)
    abbrev = {label: label[:6] for label in LABELS}
    width = max(len(label) for label in LABELS)
    lines.append("confusion matrix (rows: gold, columns: predicted):")
    corner = "gold\\pred"
    lines.append(f"  {corner:<{width}}" + " ".join(f"{abbrev[c]:>6}" for c in LABELS))
    for gold in LABELS:
        cells = " ".join(f"{pairs.get((gold, p), 0):>6}" for p in LABELS)
        lines.append(f"  {gold:<{width}}{cells}")
    return "\n".join(lines)


def _read(path: str | None, stdin: TextIO) -> list[str]:
    if path is None or path == "-":
        return stdin.read().splitlines()
    try:
        return Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc


def run_classify(
    args: argparse.Namespace,
    settings: Settings,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """The command: 0 on success, 2 on unusable input or options."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    writer = getattr(args, "ledger_writer", None) or settings.ledger_writer
    try:
        rows = parse_lines(_read(getattr(args, "input", None), stdin))
        classifier = make_classifier(writer, settings)
    except InputError as exc:
        print(f"grounding classify: {exc}", file=stderr)
        return 2
    outputs: list[dict[str, Any]] = []
    for number, obj in rows:
        try:
            out = label_row(classifier, obj)
        except Exception as exc:  # a classifier bug: name the line, keep what is done
            print(
                f"grounding classify: line {number}: the {writer} classifier failed "
                f"({type(exc).__name__}: {exc})",
                file=stderr,
            )
            return 1
        stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        stdout.flush()
        outputs.append(out)
    print(summary(outputs), file=stderr)
    return 0
