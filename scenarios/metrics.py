"""Benchmark metrics over judged probe records, with persona-clustered bootstrap CIs.

A record is one line of `trajectories.jsonl`; only these fields are read:
`history_id`, `persona`, `version`, `scenario_id`, `condition` (N G I R S),
`probe_kind` (`base` | `in_scope`), `judgement`, `correct` and, optionally,
`attribution_stage` (`writing` | `retrieval` | `action` | None).

Every metric is a ratio of counts (exposure: a difference of two ratios).
Counts are kept per persona so the bootstrap can resample whole personas:
probes of one persona share its histories and are not independent.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

CONDITIONS = ("N", "G", "I", "R", "S")
PROBE_KINDS = ("base", "in_scope")
ACCURACY_GROUPS = ("N", "G", "I", "R", "S", "G_in", "S_in")
ATTRIBUTION_STAGES = ("writing", "retrieval", "action")
TARGET = "executed_target"
ASKED = "asked"

Record = Mapping[str, Any]
Totals = Mapping[str, int]
Statistic = Callable[[Totals], float | None]

_REQUIRED = ("history_id", "persona", "scenario_id", "condition", "probe_kind", "judgement")


def _probe_key(record: Record) -> tuple[str, str, str]:
    return (str(record["history_id"]), str(record["scenario_id"]), str(record["probe_kind"]))


def _check(record: Record, index: int) -> None:
    missing = [name for name in _REQUIRED if name not in record]
    if missing:
        raise ValueError(f"record {index}: missing field(s) {', '.join(missing)}")
    if record["condition"] not in CONDITIONS:
        raise ValueError(f"record {index}: condition {record['condition']!r} not in {CONDITIONS}")
    if record["probe_kind"] not in PROBE_KINDS:
        raise ValueError(
            f"record {index}: probe_kind {record['probe_kind']!r} not in {PROBE_KINDS}"
        )
    if record["probe_kind"] == "in_scope" and record["condition"] not in ("G", "S"):
        raise ValueError(f"record {index}: in_scope probe with condition {record['condition']!r}")


def unique_probes(records: Iterable[Record]) -> list[Record]:
    """Validate records and keep one per probe (history, scenario, kind); the last wins.

    A resumed run may append a probe twice; the later record is the one that counts.
    """
    by_key: dict[tuple[str, str, str], Record] = {}
    for index, record in enumerate(records):
        _check(record, index)
        key = _probe_key(record)
        by_key.pop(key, None)
        by_key[key] = record
    return list(by_key.values())


def _order(record: Record) -> tuple[int, str]:
    version = record.get("version")
    return (version if isinstance(version, int) else -1, str(record["history_id"]))


def _pairs(
    records: Sequence[Record],
    key: Callable[[Record], tuple[str, ...]],
    left: Callable[[Record], bool],
    right: Callable[[Record], bool],
) -> list[tuple[Record, Record]]:
    """Pair `left` and `right` records sharing `key`, in version order; extras stay unpaired."""
    groups: dict[tuple[str, ...], tuple[list[Record], list[Record]]] = defaultdict(lambda: ([], []))
    for record in records:
        if left(record):
            groups[key(record)][0].append(record)
        elif right(record):
            groups[key(record)][1].append(record)
    pairs: list[tuple[Record, Record]] = []
    for lefts, rights in groups.values():
        pairs.extend(zip(sorted(lefts, key=_order), sorted(rights, key=_order), strict=False))
    return pairs


def _is(condition: str, kind: str) -> Callable[[Record], bool]:
    return lambda r: r["condition"] == condition and r["probe_kind"] == kind


def sensitivity_pairs(records: Sequence[Record]) -> list[tuple[Record, Record]]:
    """(G base, I base) pairs of the same persona and scenario (different history versions)."""
    return _pairs(
        records,
        lambda r: (str(r["persona"]), str(r["scenario_id"])),
        _is("G", "base"),
        _is("I", "base"),
    )


def selectivity_pairs(records: Sequence[Record]) -> list[tuple[Record, Record]]:
    """(S base = out of scope, S in_scope) pairs of the same history and scenario."""
    return _pairs(
        records,
        lambda r: (str(r["history_id"]), str(r["scenario_id"])),
        _is("S", "base"),
        _is("S", "in_scope"),
    )


def _tally(records: Sequence[Record]) -> dict[str, Counter[str]]:
    """Per-persona counts: `<name>:n` (denominator) and `<name>:k` (numerator)."""
    tallies: dict[str, Counter[str]] = defaultdict(Counter)

    def add(persona: Any, name: str, hit: bool) -> None:
        tally = tallies[str(persona)]
        tally[f"{name}:n"] += 1
        tally[f"{name}:k"] += int(hit)

    for g, i in sensitivity_pairs(records):
        add(g["persona"], "sensitivity", bool(g.get("correct")) and bool(i.get("correct")))
    for out, inside in selectivity_pairs(records):
        add(out["persona"], "selectivity", bool(out.get("correct")) and bool(inside.get("correct")))

    for r in records:
        persona, condition, base = r["persona"], r["condition"], r["probe_kind"] == "base"
        correct, target = bool(r.get("correct")), str(r["judgement"]) == TARGET
        if base:
            add(persona, "accuracy", correct)
            add(persona, f"acc_{condition}", correct)
            add(persona, f"target_{condition}", target)
            if condition in ("I", "S"):
                add(persona, "ue", target)
        else:
            add(persona, f"acc_{condition}_in", correct)
        if condition == "G" or (condition == "S" and not base):
            add(persona, "overconservatism", str(r["judgement"]) == ASKED)
        stage = r.get("attribution_stage")
        if not correct and stage:
            for name in ATTRIBUTION_STAGES:
                add(persona, f"attr_{name}", stage == name)
    return tallies


def _ratio(name: str) -> Statistic:
    def statistic(totals: Totals) -> float | None:
        n = totals.get(f"{name}:n", 0)
        return totals.get(f"{name}:k", 0) / n if n else None

    return statistic


def _difference(a: Statistic, b: Statistic) -> Statistic:
    def statistic(totals: Totals) -> float | None:
        x, y = a(totals), b(totals)
        return None if x is None or y is None else x - y

    return statistic


def _statistics() -> dict[str, tuple[Statistic, tuple[str, ...]]]:
    """Flat metric path -> (statistic, count names whose denominators make `n`)."""
    stats: dict[str, tuple[Statistic, tuple[str, ...]]] = {
        "sensitivity": (_ratio("sensitivity"), ("sensitivity",)),
        "selectivity": (_ratio("selectivity"), ("selectivity",)),
        "fcg": (_ratio("target_I"), ("target_I",)),
        "ue": (_ratio("ue"), ("ue",)),
        "accuracy": (_ratio("accuracy"), ("accuracy",)),
        "revision_accuracy": (_ratio("acc_R"), ("acc_R",)),
        "exposure": (
            _difference(_ratio("target_I"), _ratio("target_N")),
            ("target_I", "target_N"),
        ),
        "overgeneralization": (_ratio("target_S"), ("target_S",)),
        "overconservatism": (_ratio("overconservatism"), ("overconservatism",)),
    }
    for group in ACCURACY_GROUPS:
        stats[f"accuracy_by_condition.{group}"] = (_ratio(f"acc_{group}"), (f"acc_{group}",))
    for stage in ATTRIBUTION_STAGES:
        stats[f"attribution.{stage}"] = (_ratio(f"attr_{stage}"), (f"attr_{stage}",))
    return stats


def _percentile(ordered: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile of an ascending sequence (numpy's default)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _bootstrap(
    tallies: Mapping[str, Counter[str]],
    stats: Mapping[str, tuple[Statistic, tuple[str, ...]]],
    n_boot: int,
    seed: int,
) -> dict[str, list[float]]:
    """Resample personas with replacement; the same draws serve every metric."""
    personas = sorted(tallies)
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {path: [] for path in stats}
    if not personas:
        return samples
    for _ in range(n_boot):
        totals: Counter[str] = Counter()
        for _ in personas:
            totals.update(tallies[personas[rng.randrange(len(personas))]])
        for path, (statistic, _names) in stats.items():
            value = statistic(totals)
            if value is not None:
                samples[path].append(value)
    return samples


def compute_metrics(
    records: Iterable[Record],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """All DESIGN.md metrics as `{"value", "ci": [lo, hi], "n"}`; undefined ones have value None.

    Intervals are percentile bootstrap intervals over `n_boot` persona resamples,
    deterministic for a given `seed`. Resamples where a metric is undefined are
    skipped for that metric.
    """
    probes = unique_probes(records)
    tallies = _tally(probes)
    totals: Counter[str] = Counter()
    for tally in tallies.values():
        totals.update(tally)
    stats = _statistics()
    samples = _bootstrap(tallies, stats, n_boot, seed)
    tail = (1.0 - level) / 2.0

    flat: dict[str, dict[str, Any]] = {}
    for path, (statistic, names) in stats.items():
        value = statistic(totals)
        drawn = sorted(samples[path])
        ci = (
            [_percentile(drawn, tail), _percentile(drawn, 1.0 - tail)]
            if value is not None and drawn
            else None
        )
        n = sum(totals.get(f"{name}:n", 0) for name in names)
        flat[path] = {"value": value, "ci": ci, "n": n}

    def nested(prefix: str, keys: Sequence[str]) -> dict[str, Any]:
        return {key: flat[f"{prefix}.{key}"] for key in keys}

    return {
        "sensitivity": flat["sensitivity"],
        "selectivity": flat["selectivity"],
        "fcg": flat["fcg"],
        "ue": flat["ue"],
        "accuracy": flat["accuracy"],
        "accuracy_by_condition": nested("accuracy_by_condition", ACCURACY_GROUPS),
        "revision_accuracy": flat["revision_accuracy"],
        "exposure": flat["exposure"],
        "overgeneralization": flat["overgeneralization"],
        "overconservatism": flat["overconservatism"],
        "attribution": nested("attribution", ATTRIBUTION_STAGES),
        "counts": {
            "probes": len(probes),
            "base": sum(1 for r in probes if r["probe_kind"] == "base"),
            "in_scope": sum(1 for r in probes if r["probe_kind"] == "in_scope"),
            "personas": len(tallies),
            "histories": len({str(r["history_id"]) for r in probes}),
            "pairs": {
                "sensitivity": totals.get("sensitivity:n", 0),
                "selectivity": totals.get("selectivity:n", 0),
            },
        },
    }


def mcnemar_p(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value from the discordant counts b and c."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2.0 * tail / 2**n)


def mcnemar_exact(records_a: Iterable[Record], records_b: Iterable[Record]) -> dict[str, Any]:
    """Exact McNemar test on `correct` for probes present in both runs.

    Probes pair by (history_id, scenario_id, probe_kind). `b` counts probes
    correct in A only, `c` correct in B only.
    """
    in_a = {_probe_key(r): bool(r.get("correct")) for r in records_a}
    in_b = {_probe_key(r): bool(r.get("correct")) for r in records_b}
    shared = in_a.keys() & in_b.keys()
    b = sum(1 for key in shared if in_a[key] and not in_b[key])
    c = sum(1 for key in shared if in_b[key] and not in_a[key])
    return {"b": b, "c": c, "n_pairs": len(shared), "p_value": mcnemar_p(b, c)}
