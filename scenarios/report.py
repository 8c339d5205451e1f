"""Reports over replay run directories: Markdown tables, JSON and PNG charts.

A run directory holds `config.json`, `metrics.json` and `trajectories.jsonl`
(see DESIGN.md, "Run directory"). matplotlib is imported only when charts are
drawn, so loading and tabulating runs stays cheap.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scenarios.metrics import ACCURACY_GROUPS, ATTRIBUTION_STAGES, compute_metrics, mcnemar_exact

COMPARE_METRICS = (
    "sensitivity",
    "selectivity",
    "fcg",
    "ue",
    "accuracy",
    "revision_accuracy",
    "exposure",
    "overgeneralization",
    "overconservatism",
)
BENCH_METRICS = ("sensitivity", "selectivity", "fcg", "ue", "accuracy", "overconservatism")
MEMORY_ORDER = ("none", "history", "chunks", "facts")
CHARTS = {
    "sensitivity_selectivity": "sensitivity_selectivity.png",
    "accuracy_by_condition": "accuracy_by_condition.png",
}
MISSING = "n/a"


@dataclass
class Run:
    """One replay run directory, loaded."""

    path: Path
    config: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    trajectories: list[dict[str, Any]] = field(default_factory=list)

    @property
    def memory(self) -> str:
        """Memory mode from the config (`none|history|chunks|facts`), or `?`."""
        value = self.config.get("memory", self.config.get("memory_mode"))
        return str(value) if value is not None else "?"

    @property
    def gl(self) -> bool | None:
        """Whether the grounding layer (ledger + gate) was on; None when unknown."""
        for key in ("gl", "gl_enabled", "grounding_layer"):
            if key in self.config:
                value = self.config[key]
                if isinstance(value, str):
                    return value.strip().lower() in ("on", "true", "yes", "1")
                return bool(value)
        return None

    @property
    def model(self) -> str:
        """Model string from the config, or `?`."""
        value = self.config.get("model")
        return str(value) if value is not None else "?"

    @property
    def label(self) -> str:
        """`memory, GL on|off, model`: how tables and charts name this run."""
        return f"{self.memory}, GL {_gl_text(self.gl)}, {self.model}"


def _gl_text(gl: bool | None) -> str:
    return "?" if gl is None else ("on" if gl else "off")


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: invalid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: invalid JSON ({exc})") from exc
    return records


def load_run(run_dir: str | Path) -> Run:
    """Load a run directory; metrics are recomputed when `metrics.json` is absent."""
    path = Path(run_dir)
    config_path = path / "config.json"
    metrics_path = path / "metrics.json"
    trajectories_path = path / "trajectories.jsonl"
    if not any(p.is_file() for p in (config_path, metrics_path, trajectories_path)):
        raise FileNotFoundError(
            f"{path}: not a run directory (no config.json, metrics.json or trajectories.jsonl)"
        )
    config = _read_json(config_path) if config_path.is_file() else {}
    trajectories = _read_jsonl(trajectories_path) if trajectories_path.is_file() else []
    metrics = _read_json(metrics_path) if metrics_path.is_file() else compute_metrics(trajectories)
    return Run(path=path, config=config, metrics=metrics, trajectories=trajectories)


def _labels(runs: Sequence[Run]) -> list[str]:
    """Run labels, with the directory name added where two runs would look the same."""
    labels = [run.label for run in runs]
    return [
        f"{label} ({run.path.name})" if labels.count(label) > 1 else label
        for label, run in zip(labels, runs, strict=True)
    ]


def _number(value: float) -> str:
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text


def format_metric(metric: dict[str, Any] | None) -> str:
    """`0.92 [0.85, 0.97]`; `n/a` for an undefined metric."""
    if not metric or metric.get("value") is None:
        return MISSING
    text = _number(metric["value"])
    ci = metric.get("ci")
    if ci and ci[0] is not None and ci[1] is not None:
        text += f" [{_number(ci[0])}, {_number(ci[1])}]"
    return text


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _keep(condition: str | None, kind: str) -> Callable[[dict[str, Any]], bool]:
    def keep(record: dict[str, Any]) -> bool:
        same_condition = condition is None or record.get("condition") == condition
        return same_condition and record.get("probe_kind") == kind

    return keep


def _mcnemar_scopes() -> dict[str, Callable[[dict[str, Any]], bool]]:
    """Probe subsets tested for accuracy differences: all base probes, then each group."""
    scopes = {"accuracy": _keep(None, "base")}
    for group in ACCURACY_GROUPS:
        condition, _, suffix = group.partition("_")
        scopes[group] = _keep(condition, "in_scope" if suffix else "base")
    return scopes


def mcnemar_accuracy(run_a: Run, run_b: Run) -> dict[str, dict[str, Any]]:
    """Exact McNemar tests on correctness, overall (base probes) and per condition group."""
    results: dict[str, dict[str, Any]] = {}
    for scope, keep in _mcnemar_scopes().items():
        results[scope] = mcnemar_exact(
            [r for r in run_a.trajectories if keep(r)],
            [r for r in run_b.trajectories if keep(r)],
        )
    return results


def _mcnemar_table(runs: Sequence[Run]) -> str:
    labels = _labels(runs)
    rows = []
    for scope, result in mcnemar_accuracy(runs[0], runs[1]).items():
        if scope != "accuracy" and not result["n_pairs"]:
            continue
        rows.append(
            [
                scope,
                str(result["n_pairs"]),
                str(result["b"]),
                str(result["c"]),
                f"{result['p_value']:.4g}",
            ]
        )
    header = ["probes", "paired", "b (A only)", "c (B only)", "p (exact McNemar)"]
    intro = f"McNemar exact test on accuracy, A = {labels[0]}, B = {labels[1]}:"
    return intro + "\n\n" + _table(header, rows)


def compare_table(runs: Sequence[Run]) -> str:
    """Markdown table, one row per run; with two runs, McNemar p-values follow."""
    rows = [
        [label, *(format_metric(run.metrics.get(name)) for name in COMPARE_METRICS)]
        for label, run in zip(_labels(runs), runs, strict=True)
    ]
    text = _table(["run", *COMPARE_METRICS], rows)
    if len(runs) == 2:
        text += "\n\n" + _mcnemar_table(runs)
    return text


def _accuracy_table(runs: Sequence[Run]) -> str:
    rows = []
    for label, run in zip(_labels(runs), runs, strict=True):
        by_condition = run.metrics.get("accuracy_by_condition") or {}
        rows.append([label, *(format_metric(by_condition.get(g)) for g in ACCURACY_GROUPS)])
    return _table(["run", *ACCURACY_GROUPS], rows)


def _attribution_table(runs: Sequence[Run]) -> str:
    rows = []
    for label, run in zip(_labels(runs), runs, strict=True):
        attribution = run.metrics.get("attribution") or {}
        rows.append([label, *(format_metric(attribution.get(s)) for s in ATTRIBUTION_STAGES)])
    return _table(["run", *ATTRIBUTION_STAGES], rows)


def _memory_rank(memory: str) -> tuple[int, str]:
    order = MEMORY_ORDER.index(memory) if memory in MEMORY_ORDER else len(MEMORY_ORDER)
    return (order, memory)


def bench_table(runs: Sequence[Run]) -> str:
    """The memory x GL matrix: per model, one row per memory mode, GL off/on side by side.

    Cells are point estimates; `compare_table` has the intervals.
    """
    sections = []
    for model in sorted({run.model for run in runs}):
        of_model = [run for run in runs if run.model == model]
        states = [gl for gl in (False, True, None) if any(run.gl is gl for run in of_model)]
        header = ["memory"] + [f"{m} (GL {_gl_text(gl)})" for m in BENCH_METRICS for gl in states]
        rows = []
        for memory in sorted({run.memory for run in of_model}, key=_memory_rank):
            row = [memory]
            for name in BENCH_METRICS:
                for gl in states:
                    cell = [r for r in of_model if r.memory == memory and r.gl is gl]
                    metric = cell[-1].metrics.get(name) if cell else None
                    value = metric.get("value") if metric else None
                    row.append(MISSING if value is None else _number(value))
            rows.append(row)
        sections.append(f"Model `{model}`:\n\n" + _table(header, rows))
    return "\n\n".join(sections)


def report_json(runs: Sequence[Run]) -> dict[str, Any]:
    """Runs with their labels, configs and metrics; McNemar tests when there are two."""
    return {
        "runs": [
            {"label": label, "path": str(run.path), "config": run.config, "metrics": run.metrics}
            for label, run in zip(_labels(runs), runs, strict=True)
        ],
        "mcnemar": mcnemar_accuracy(runs[0], runs[1]) if len(runs) == 2 else None,
    }


def _value_and_error(metric: dict[str, Any] | None) -> tuple[float, float, float]:
    """Bar height and asymmetric error (NaN where undefined, so nothing is drawn)."""
    if not metric or metric.get("value") is None:
        return math.nan, 0.0, 0.0
    value = float(metric["value"])
    ci = metric.get("ci")
    if not ci or ci[0] is None or ci[1] is None:
        return value, 0.0, 0.0
    return value, max(0.0, value - ci[0]), max(0.0, ci[1] - value)


def _grouped_bars(
    path: Path,
    title: str,
    groups: Sequence[str],
    series: Sequence[tuple[str, Sequence[dict[str, Any] | None]]],
) -> None:
    """Draw one grouped bar chart with CI error bars to a PNG (Agg, no pyplot state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(max(6.5, 1.2 * len(groups) + 3.5), 4.8), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.subplots()
    width = 0.8 / max(1, len(series))
    for index, (name, metrics) in enumerate(series):
        heights, lows, highs = zip(*(_value_and_error(m) for m in metrics), strict=True)
        positions = [g + (index - (len(series) - 1) / 2) * width for g in range(len(groups))]
        bars = axes.bar(positions, heights, width, yerr=[lows, highs], capsize=3, label=name)
        # Undefined is not zero: say so on the axis instead of drawing nothing.
        axes.bar_label(bars, ["" if math.isnan(h) else f"{h:.2f}" for h in heights], fontsize=7)
        for position, height in zip(positions, heights, strict=True):
            if math.isnan(height):
                axes.text(position, 0.01, MISSING, ha="center", va="bottom", fontsize=7)
    long_labels = any(len(group) > 12 for group in groups)
    axes.set_xticks(range(len(groups)))
    axes.set_xticklabels(
        groups, rotation=20 if long_labels else 0, ha="right" if long_labels else "center"
    )
    axes.set_ylim(0.0, 1.12)
    axes.set_ylabel("share (95% bootstrap CI)")
    axes.set_title(title)
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    figure.tight_layout()
    figure.savefig(path, format="png")


def write_charts(out_dir: str | Path, runs: Sequence[Run]) -> list[Path]:
    """Write the sensitivity/selectivity and accuracy-by-condition charts; return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    labels = _labels(runs)
    sens_sel = out / CHARTS["sensitivity_selectivity"]
    _grouped_bars(
        sens_sel,
        "Sensitivity and selectivity per configuration",
        labels,
        [
            (name, [run.metrics.get(name) for run in runs])
            for name in ("sensitivity", "selectivity")
        ],
    )
    by_condition = out / CHARTS["accuracy_by_condition"]
    _grouped_bars(
        by_condition,
        "Accuracy by condition",
        ACCURACY_GROUPS,
        [
            (
                label,
                [(run.metrics.get("accuracy_by_condition") or {}).get(g) for g in ACCURACY_GROUPS],
            )
            for label, run in zip(labels, runs, strict=True)
        ],
    )
    return [sens_sel, by_condition]


def render_markdown(runs: Sequence[Run]) -> str:
    """The report text; charts are referenced by their file names next to report.md."""
    parts = [
        "# Grounding benchmark report",
        "Values with 95% percentile bootstrap intervals, resampled by persona.",
        "## Runs",
        "\n".join(
            f"- **{label}**: `{run.path}` ({(run.metrics.get('counts') or {}).get('probes', '?')}"
            " probes)"
            for label, run in zip(_labels(runs), runs, strict=True)
        ),
        "## Comparison",
        compare_table(runs),
        "## Accuracy by condition",
        _accuracy_table(runs),
        "## Where incorrect probes were lost",
        _attribution_table(runs),
    ]
    if len(runs) > 1:
        parts += ["## Memory x grounding layer", bench_table(runs)]
    parts += [
        "## Charts",
        f"![Sensitivity and selectivity]({CHARTS['sensitivity_selectivity']})",
        f"![Accuracy by condition]({CHARTS['accuracy_by_condition']})",
    ]
    return "\n\n".join(parts) + "\n"


def write_report(run_dir: str | Path, runs: Sequence[Run] | None = None) -> Path:
    """Write `report.md` and its PNG charts into `run_dir`; return the report's path.

    Without `runs`, the report covers the run in `run_dir` itself.
    """
    out = Path(run_dir)
    selected = list(runs) if runs is not None else [load_run(out)]
    if not selected:
        raise ValueError("write_report needs at least one run")
    write_charts(out, selected)
    report = out / "report.md"
    report.write_text(render_markdown(selected), encoding="utf-8")
    return report
