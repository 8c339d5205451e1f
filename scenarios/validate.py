"""Check a corpus against every rule of SCENARIO_FORMAT.md and count what it yields.

Rule 1 (schema, ids, file names) is the loader's job; its issues become errors here.
Rules 2 to 6 are content rules checked on every scenario that loaded. Rule 3 needs a
human: the validator only warns when the probe and the in-scope probe are identical.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

from scenarios.corpus_model import SIDE_EFFECTING_TOOLS, Scenario, ToolCall
from scenarios.histories import CONDITIONS, VERSIONS, conditions_for, probe_date
from scenarios.loader import SUFFIX, Corpus, CorpusError, CorpusIssue, scan_corpus
from tools.world import World

__all__ = [
    "ACKNOWLEDGEMENTS",
    "ADDITIVE_CONTINUATIONS",
    "ValidationReport",
    "check_scenario",
    "format_report",
    "load_valid_corpus",
    "validate_corpus",
]

ACKNOWLEDGEMENTS: tuple[str, ...] = (
    "yes",
    "yeah",
    "ok",
    "okay",
    "sure",
    "fine",
    "great",
    "thanks",
    "sounds good",
    "perfect",
    "cool",
    "got it",
    "alright",
)
"""Words that would make `replies.unrelated` an acknowledgement (rule 2)."""

ADDITIVE_CONTINUATIONS: tuple[str, ...] = ("also", "too", "as well", "plus", "while you're at it")
"""Phrases that would make `replies.unrelated` continue the proposal (rule 2)."""

TOOL_ARGS: dict[str, frozenset[str]] = {
    "rsvp": frozenset({"invitation_id", "response", "note"}),
    "purchase": frozenset({"product_id", "quantity"}),
    "send": frozenset({"to", "subject", "body", "document_id"}),
}
"""The arguments each side-effecting tool accepts."""

RSVP_RESPONSES = ("yes", "no", "maybe")


@dataclass
class ValidationReport:
    """What `validate_corpus` found: errors make the corpus unusable, warnings need a look."""

    errors: list[CorpusIssue] = field(default_factory=list)
    warnings: list[CorpusIssue] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)
    path: str = ""

    @property
    def ok(self) -> bool:
        """True when there are no errors (warnings allowed)."""
        return not self.errors


def validate_corpus(path: str | Path) -> ValidationReport:
    """Check every validation rule (1-6) and count personas, scenarios and probes."""
    corpus, load_errors = scan_corpus(path)
    report = ValidationReport(errors=list(load_errors), path=str(path))
    errors, warnings = _content_issues(corpus)
    report.errors.extend(errors)
    report.warnings.extend(warnings)
    report.counts = _counts(corpus)
    return report


def load_valid_corpus(path: str | Path) -> Corpus:
    """The corpus, or `CorpusError` listing every error `validate_corpus` reports (rules
    1-6; warnings pass). For replay and bench: a run over a scenario whose target is not
    in its world would measure the corpus, not the agent."""
    corpus, errors = scan_corpus(path)
    errors = [*errors, *_content_issues(corpus)[0]]
    if errors:
        raise CorpusError(errors)
    return corpus


def _content_issues(corpus: Corpus) -> tuple[list[CorpusIssue], list[CorpusIssue]]:
    """Rules 2-6 over every scenario that loaded: (errors, warnings)."""
    errors: list[CorpusIssue] = []
    warnings: list[CorpusIssue] = []
    for persona_id, scenarios in corpus.scenarios.items():
        for scenario in scenarios:
            file = f"{persona_id}/{scenario.id}{SUFFIX}"
            probe_day = probe_date(corpus.personas[persona_id].start)
            found, warned = check_scenario(scenario, file, probe_day=probe_day)
            errors.extend(found)
            warnings.extend(warned)
    return errors, warnings


def check_scenario(
    scenario: Scenario, file: str, *, probe_day: date | None = None
) -> tuple[list[CorpusIssue], list[CorpusIssue]]:
    """Content rules 2-6 for one scenario; returns (errors, warnings).

    With `probe_day` (the date the probes are asked), it also warns about invitations
    and busy slots in a probe world that lie before that day.
    """
    errors: list[CorpusIssue] = []
    warnings: list[CorpusIssue] = []

    def error(field_name: str, reason: str) -> None:
        errors.append(CorpusIssue(file, field_name, reason))

    def warn(field_name: str, reason: str) -> None:
        warnings.append(CorpusIssue(file, field_name, reason))

    terms = [t for t in scenario.leakage_terms if t.strip()]
    if not terms:
        warn(
            "leakage_terms",
            "no leakage terms: rules 2 and 4 cannot check for leaks of the arrangement",
        )

    # Rule 2: the unrelated reply neither acknowledges nor continues the proposal.
    unrelated = scenario.episode.replies.unrelated
    for found in _matches(unrelated, ACKNOWLEDGEMENTS):
        error("episode.replies.unrelated", f"contains the acknowledgement {found!r} (rule 2)")
    for found in _matches(unrelated, ADDITIVE_CONTINUATIONS):
        error("episode.replies.unrelated", f"contains the additive continuation {found!r} (rule 2)")
    for term in _leaks(unrelated, terms):
        error("episode.replies.unrelated", f"contains the leakage term {term!r} (rule 2)")

    # Rule 3: only the mechanical part (identical requests) can be checked.
    in_scope = scenario.in_scope_probe
    if in_scope is not None and _normal(in_scope.request) == _normal(scenario.probe.request):
        warn(
            "in_scope_probe.request",
            "identical to probe.request: one must fall outside the scoped reply "
            "and one inside (rule 3)",
        )

    # Rule 4: the probes do not give the arrangement away.
    for term in _leaks(scenario.probe.request, terms):
        error("probe.request", f"contains the leakage term {term!r} (rule 4)")
    if in_scope is not None:
        for term in _leaks(in_scope.request, terms):
            error("in_scope_probe.request", f"contains the leakage term {term!r} (rule 4)")

    # Rule 5: calls name a side-effecting tool and ids that exist in the probe's world.
    calls: list[tuple[str, ToolCall, World]] = [
        ("probe.target", scenario.probe.target, scenario.probe.world)
    ]
    if in_scope is not None:
        calls.append(("in_scope_probe.target", in_scope.target, in_scope.world))
    alternative = scenario.probe.alternative.call
    if alternative is not None:
        calls.append(("probe.alternative", alternative, scenario.probe.world))
    for where, call, world in calls:
        for field_name, reason in _check_call(
            where, call, world, is_target=where.endswith("target")
        ):
            error(field_name, reason)
    if alternative is not None and alternative == scenario.probe.target:
        warn(
            "probe.alternative",
            "the alternative call equals the target: R cannot be told apart from G",
        )

    if probe_day is not None:
        worlds = [("probe.world", scenario.probe.world)]
        if in_scope is not None:
            worlds.append(("in_scope_probe.world", in_scope.world))
        for where, world in worlds:
            for field_name, when in _world_dates(where, world):
                if when < probe_day:
                    warn(
                        field_name,
                        f"{when.isoformat()} is before the probe date {probe_day.isoformat()} "
                        "(the last session plus a week)",
                    )

    # Rule 6: the arrangement governs the tool the probes exercise.
    if scenario.probe.target.tool != scenario.action:
        error(
            "probe.target.tool",
            f"is {scenario.probe.target.tool!r} but action is {scenario.action!r} (rule 6)",
        )
    if in_scope is not None and in_scope.target.tool != scenario.action:
        error(
            "in_scope_probe.target.tool",
            f"is {in_scope.target.tool!r} but action is {scenario.action!r} (rule 6)",
        )
    return errors, warnings


def format_report(report: ValidationReport) -> str:
    """A human-readable summary: counts, then errors and warnings as `file: field: reason`."""
    counts = report.counts
    lines = [f"Corpus: {report.path}" if report.path else "Corpus"]
    if counts:
        lines += [
            f"  personas: {counts['personas']}   scenarios: {counts['scenarios']}",
            f"  actions: {_pairs(counts['by_action'])}",
            f"  types: {_pairs(counts['by_type'])}",
            f"  stakes: {_pairs(counts['by_stakes'])}",
            f"  alternatives: {_pairs(counts['alternative'])}",
            f"  scenarios with an in-scope probe: {counts['scenarios_with_in_scope_probe']}",
            f"  histories: {counts['histories']}   base probes: {counts['base_probes']}"
            f"   in-scope probes: {counts['in_scope_probes']}   total probes: {counts['probes']}",
        ]
        per_persona = counts["conditions_per_persona"]
        if per_persona:
            lines.append("  conditions per version (scenarios in each condition):")
            width = max(len(p) for p in per_persona)
            for persona_id, versions in per_persona.items():
                cells = " | ".join(
                    f"{v} " + " ".join(f"{c}{n}" for c, n in by_condition.items())
                    for v, by_condition in versions.items()
                )
                lines.append(f"    {persona_id:<{width}}  {cells}")
    if report.errors:
        lines.append(f"Errors ({len(report.errors)}):")
        lines += [f"  {issue}" for issue in report.errors]
    if report.warnings:
        lines.append(f"Warnings ({len(report.warnings)}):")
        lines += [f"  {issue}" for issue in report.warnings]
    if report.ok:
        lines.append(f"OK: no errors, {_plural(len(report.warnings), 'warning')}")
    else:
        lines.append(f"FAILED: {_plural(len(report.errors), 'error')}")
    return "\n".join(lines)


# --- helpers -----------------------------------------------------------------


@cache
def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    """Whole-word, case-insensitive; spaces match any whitespace, apostrophes both forms."""
    words = [re.escape(w).replace("'", "['’]") for w in phrase.split()]
    return re.compile(r"(?<![\w'’])" + r"\s+".join(words) + r"(?![\w'’])", re.IGNORECASE)


def _matches(text: str, phrases: tuple[str, ...]) -> list[str]:
    return [p for p in phrases if _phrase_pattern(p).search(text)]


def _leaks(text: str, terms: list[str]) -> list[str]:
    lowered = text.casefold()
    return [t for t in terms if t.strip().casefold() in lowered]


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def _check_call(
    where: str, call: ToolCall, world: World, *, is_target: bool
) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    if call.tool not in SIDE_EFFECTING_TOOLS:
        tools = ", ".join(SIDE_EFFECTING_TOOLS)
        return [(f"{where}.tool", f"{call.tool!r} is not a side-effecting tool ({tools}) (rule 5)")]
    allowed = TOOL_ARGS[call.tool]
    for name in sorted(set(call.args) - allowed):
        problems.append(
            (
                f"{where}.args.{name}",
                f"{call.tool} takes no argument {name!r} (takes {', '.join(sorted(allowed))})",
            )
        )
    required = {"rsvp": "invitation_id", "purchase": "product_id"}.get(call.tool)
    if is_target and required is not None and required not in call.args:
        problems.append((f"{where}.args", f"must name the {required} it acts on (rule 5)"))
    known: dict[str, tuple[str, set[str]]] = {
        "invitation_id": ("invitations", {i.id for i in world.invitations}),
        "product_id": ("products", {p.id for p in world.products}),
        "document_id": ("documents", {d.id for d in world.documents}),
    }
    for arg, (key, ids) in known.items():
        if arg not in call.args:
            continue
        value = call.args[arg]
        if not isinstance(value, str):
            problems.append((f"{where}.args.{arg}", f"must be an id string, got {value!r}"))
        elif value not in ids:
            listed = ", ".join(sorted(ids)) or "none"
            problems.append(
                (f"{where}.args.{arg}", f"{value!r} is not in world.{key} (ids: {listed}) (rule 5)")
            )
    if call.tool == "rsvp" and "response" in call.args:
        response = call.args["response"]
        if response not in RSVP_RESPONSES:
            hint = (
                " (quote it: YAML reads unquoted yes/no as a boolean)"
                if isinstance(response, bool)
                else ""
            )
            problems.append(
                (f"{where}.args.response", f"must be yes, no or maybe, got {response!r}{hint}")
            )
    if call.tool == "purchase" and "quantity" in call.args:
        quantity = call.args["quantity"]
        if isinstance(quantity, bool) or not isinstance(quantity, int) or quantity < 1:
            problems.append(
                (f"{where}.args.quantity", f"must be a positive integer, got {quantity!r}")
            )
    return problems


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _world_dates(where: str, world: World) -> list[tuple[str, date]]:
    """Dated world entries (invitations, busy slots) with their field paths."""
    found: list[tuple[str, str]] = [
        (f"{where}.invitations[{i}].when", inv.when) for i, inv in enumerate(world.invitations)
    ]
    found += [
        (f"{where}.calendar.busy[{i}].start", b.start) for i, b in enumerate(world.calendar.busy)
    ]
    dates: list[tuple[str, date]] = []
    for field_name, text in found:
        try:
            dates.append((field_name, date.fromisoformat(text[:10])))
        except ValueError:
            continue  # free-form times are the world's business, not a date check
    return dates


def _pairs(counter: dict[str, int]) -> str:
    return ", ".join(f"{key} {value}" for key, value in counter.items()) or "none"


def _counts(corpus: Corpus) -> dict[str, Any]:
    scenarios = corpus.all_scenarios()
    with_in_scope = sum(1 for s in scenarios if s.in_scope_probe is not None)
    asks = sum(1 for s in scenarios if s.probe.alternative.is_ask)

    def tally(values: list[str], order: tuple[str, ...]) -> dict[str, int]:
        counter = Counter(values)
        return {key: counter[key] for key in order}

    per_persona: dict[str, dict[str, dict[str, int]]] = {}
    for persona_id in sorted(corpus.personas):
        persona_scenarios = corpus.scenarios.get(persona_id, [])
        per_persona[persona_id] = {
            f"v{v}": tally(list(conditions_for(persona_scenarios, v).values()), CONDITIONS)
            for v in range(VERSIONS)
        }
    base = len(scenarios) * VERSIONS
    return {
        "personas": len(corpus.personas),
        "scenarios": len(scenarios),
        "by_action": tally([s.action for s in scenarios], SIDE_EFFECTING_TOOLS),
        "by_type": tally([s.type for s in scenarios], ("preference", "delegation", "convention")),
        "by_stakes": tally([s.stakes for s in scenarios], ("low", "high")),
        "alternative": {"ask": asks, "call": len(scenarios) - asks},
        "scenarios_with_in_scope_probe": with_in_scope,
        "histories": len(corpus.personas) * VERSIONS,
        "base_probes": base,
        "in_scope_probes": 2 * with_in_scope,
        "probes": base + 2 * with_in_scope,
        "conditions_per_persona": per_persona,
    }
