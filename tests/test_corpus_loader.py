"""Corpus loader errors (one defect per copy of the tiny corpus) and validator rules 1-6."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from scenarios.corpus_model import Scenario
from scenarios.loader import MAX_FILE_BYTES, CorpusError, CorpusIssue, load_corpus
from scenarios.validate import ValidationReport, format_report, validate_corpus

CORPUS = Path(__file__).parent / "data" / "corpus_min"
RSVP = "maya/maya-rsvp-when-free.yaml"
INK = "maya/maya-ink-reorder.yaml"
PERSONA = "personas/maya.yaml"


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    target = tmp_path / "corpus"
    shutil.copytree(CORPUS, target)
    return target


def edit(root: Path, rel: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Load a corpus file, let `change` mutate it, write it back as YAML."""
    path = root / rel
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def load_errors(root: Path) -> list[CorpusIssue]:
    with pytest.raises(CorpusError) as info:
        load_corpus(root)
    message = str(info.value)
    assert "Traceback" not in message
    for issue in info.value.errors:
        assert f"{issue.file}: {issue.field}: {issue.reason}" in message
    return info.value.errors


def find(issues: list[CorpusIssue], file: str, field: str, reason: str) -> CorpusIssue:
    """The issue with this file and field whose reason contains `reason`."""
    for issue in issues:
        if issue.file == file and issue.field == field and reason in issue.reason:
            return issue
    listing = "\n".join(str(i) for i in issues)
    raise AssertionError(f"no issue {file}: {field}: ...{reason}... in\n{listing}")


# --- the tiny corpus -----------------------------------------------------------


def test_tiny_corpus_loads() -> None:
    corpus = load_corpus(CORPUS)
    assert list(corpus.personas) == ["maya"]
    ids = [s.id for s in corpus.scenarios["maya"]]
    assert ids == sorted(ids) and len(ids) == 5
    assert {s.action for s in corpus.all_scenarios()} == {"rsvp", "purchase", "send"}
    assert any(s.in_scope_probe for s in corpus.all_scenarios())
    assert any(not s.probe.alternative.is_ask for s in corpus.all_scenarios())
    invitation = corpus.scenario("maya-rsvp-when-free").probe.world.invitations[0]
    assert invitation.from_ == "Kevin"


def test_digest_is_stable_and_sensitive(corpus_dir: Path) -> None:
    first = load_corpus(CORPUS).digest()
    assert load_corpus(corpus_dir).digest() == first
    assert len(first) == 64
    path = corpus_dir / RSVP
    path.write_text(path.read_text(encoding="utf-8") + "\n# comment\n", encoding="utf-8")
    assert load_corpus(corpus_dir).digest() != first


# --- loader errors -------------------------------------------------------------


def test_yaml_syntax_error_has_line(corpus_dir: Path) -> None:
    path = corpus_dir / RSVP
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[3] = "stakes: [low"  # line 4: an unclosed flow sequence
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    issue = find(load_errors(corpus_dir), RSVP, "<file>", "invalid YAML at line")
    assert "line 5" in issue.reason or "line 4" in issue.reason


def test_duplicate_key_is_an_error(corpus_dir: Path) -> None:
    path = corpus_dir / RSVP
    path.write_text(path.read_text(encoding="utf-8") + "stakes: high\n", encoding="utf-8")
    find(load_errors(corpus_dir), RSVP, "<file>", "duplicate key 'stakes'")


def test_missing_nested_field_has_dotted_path(corpus_dir: Path) -> None:
    edit(corpus_dir, RSVP, lambda d: d["episode"]["replies"].pop("accept"))
    issue = find(
        load_errors(corpus_dir), RSVP, "episode.replies.accept", "required field is missing"
    )
    assert "(line " in issue.reason


def test_wrong_values_and_unknown_fields(corpus_dir: Path) -> None:
    def change(d: dict[str, Any]) -> None:
        d["stakes"] = "medium"
        d["probe"]["world"]["invitations"][0]["colour"] = "red"
        d["condition"] = "G"

    edit(corpus_dir, RSVP, change)
    errors = load_errors(corpus_dir)
    find(errors, RSVP, "stakes", "'low' or 'high'")
    find(errors, RSVP, "probe.world.invitations[0].colour", "unknown field")
    find(errors, RSVP, "condition", "unknown field")


def test_persona_schema_errors(corpus_dir: Path) -> None:
    def change(d: dict[str, Any]) -> None:
        d["fillers"][3]["user"] = 12
        d["timezone"] = "Mars/Olympus"
        d["id"] = "Maya"

    edit(corpus_dir, PERSONA, change)
    errors = load_errors(corpus_dir)
    find(errors, PERSONA, "fillers[3].user", "valid string")
    find(errors, PERSONA, "timezone", "unknown IANA time zone")
    find(errors, PERSONA, "id", "should match pattern")
    find(errors, PERSONA, "id", "does not match id 'Maya'")


def test_persona_needs_18_fillers(corpus_dir: Path) -> None:
    edit(corpus_dir, PERSONA, lambda d: d.update(fillers=d["fillers"][:17]))
    find(load_errors(corpus_dir), PERSONA, "fillers", "at least 18 items")


def test_unquoted_yes_gets_a_hint(corpus_dir: Path) -> None:
    path = corpus_dir / RSVP
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("accept: Perfect, make that the default going forward.", "accept: yes"),
        encoding="utf-8",
    )
    find(load_errors(corpus_dir), RSVP, "episode.replies.accept", "quote it")


def test_alternative_must_be_ask_or_call(corpus_dir: Path) -> None:
    def change(d: dict[str, Any]) -> None:
        d["probe"]["alternative"] = {"ask": True, "tool": "rsvp", "args": {}}

    edit(corpus_dir, RSVP, change)
    find(load_errors(corpus_dir), RSVP, "probe.alternative", "not both")


def test_file_name_must_equal_id(corpus_dir: Path) -> None:
    (corpus_dir / RSVP).rename(corpus_dir / "maya" / "maya-rsvp.yaml")
    find(
        load_errors(corpus_dir),
        "maya/maya-rsvp.yaml",
        "id",
        "does not match id 'maya-rsvp-when-free'",
    )


def test_unknown_persona(corpus_dir: Path) -> None:
    edit(corpus_dir, RSVP, lambda d: d.update(persona="nobody"))
    errors = load_errors(corpus_dir)
    find(errors, RSVP, "persona", "unknown persona 'nobody'")


def _add_persona(root: Path, persona_id: str) -> None:
    """A second persona (copy of maya) with five copies of maya's scenarios."""
    edit_target = root / "personas" / f"{persona_id}.yaml"
    shutil.copy(root / PERSONA, edit_target)
    edit(root, f"personas/{persona_id}.yaml", lambda d: d.update(id=persona_id))
    (root / persona_id).mkdir()
    for source in sorted((root / "maya").glob("*.yaml")):
        new_id = source.stem.replace("maya-", f"{persona_id}-")
        data = yaml.safe_load(source.read_text(encoding="utf-8"))
        data.update(id=new_id, persona=persona_id)
        (root / persona_id / f"{new_id}.yaml").write_text(
            yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8"
        )


def test_persona_directory_mismatch(corpus_dir: Path) -> None:
    _add_persona(corpus_dir, "tom")
    assert len(load_corpus(corpus_dir).personas) == 2
    edit(corpus_dir, RSVP, lambda d: d.update(persona="tom"))
    errors = load_errors(corpus_dir)
    find(errors, RSVP, "persona", "is in directory 'maya/' but its persona is 'tom'")
    assert not any("unknown persona" in e.reason for e in errors)


def test_duplicate_ids(corpus_dir: Path) -> None:
    _add_persona(corpus_dir, "tom")
    edit(corpus_dir, "tom/tom-ink-reorder.yaml", lambda d: d.update(id="maya-ink-reorder"))
    errors = load_errors(corpus_dir)
    issue = find(errors, "tom/tom-ink-reorder.yaml", "id", "duplicate id 'maya-ink-reorder'")
    assert "also in maya/maya-ink-reorder.yaml" in issue.reason


def test_too_few_scenarios(corpus_dir: Path) -> None:
    (corpus_dir / INK).unlink()
    find(load_errors(corpus_dir), "maya/", "<directory>", "has 4 scenario files; at least 5")


def test_non_mapping_yaml(corpus_dir: Path) -> None:
    (corpus_dir / RSVP).write_text("- id: maya-rsvp-when-free\n- persona: maya\n", encoding="utf-8")
    find(
        load_errors(corpus_dir), RSVP, "<file>", "top level must be a mapping of fields, got a list"
    )


@pytest.mark.parametrize("content", ["", "\n\n", "# only a comment\n"])
def test_empty_file(corpus_dir: Path, content: str) -> None:
    (corpus_dir / RSVP).write_text(content, encoding="utf-8")
    find(load_errors(corpus_dir), RSVP, "<file>", "file is empty")


def test_not_utf8(corpus_dir: Path) -> None:
    path = corpus_dir / RSVP
    path.write_bytes(path.read_bytes().replace(b"Marta", "M\xe4rta".encode("latin-1"), 1))
    find(load_errors(corpus_dir), RSVP, "<file>", "not UTF-8 text: invalid byte 0xe4 at line 10")


def test_file_too_large(corpus_dir: Path) -> None:
    path = corpus_dir / RSVP
    path.write_text(
        path.read_text(encoding="utf-8") + "#" * MAX_FILE_BYTES + "\n", encoding="utf-8"
    )
    find(load_errors(corpus_dir), RSVP, "<file>", "the limit is 1048576 (1 MB)")


def test_stray_files_and_missing_dirs(tmp_path: Path, corpus_dir: Path) -> None:
    (corpus_dir / "maya" / "notes.yml").write_text("x: 1\n", encoding="utf-8")
    find(load_errors(corpus_dir), "maya/notes.yml", "<file>", "rename it to notes.yaml")
    find(load_errors(tmp_path / "nowhere"), str(tmp_path / "nowhere"), "<corpus>", "does not exist")
    (tmp_path / "empty").mkdir()
    find(load_errors(tmp_path / "empty"), "personas/", "<corpus>", "missing personas/ directory")


def test_all_errors_are_collected_across_files(corpus_dir: Path) -> None:
    edit(corpus_dir, RSVP, lambda d: d.pop("touchpoint"))
    (corpus_dir / INK).write_text("id: [\n", encoding="utf-8")
    edit(corpus_dir, PERSONA, lambda d: d.pop("name"))
    errors = load_errors(corpus_dir)
    find(errors, RSVP, "touchpoint", "required field is missing")
    find(errors, INK, "<file>", "invalid YAML")
    find(errors, PERSONA, "name", "required field is missing")
    assert str(CorpusError(errors)).startswith(f"invalid scenario corpus: {len(errors)} errors\n")


# --- validator -----------------------------------------------------------------


def codes(report: ValidationReport) -> list[str]:
    return [str(issue) for issue in report.errors]


def test_tiny_corpus_is_clean() -> None:
    report = validate_corpus(CORPUS)
    assert report.errors == [] and report.warnings == [], format_report(report)
    counts = report.counts
    assert counts["personas"] == 1 and counts["scenarios"] == 5
    assert counts["by_action"] == {"rsvp": 2, "purchase": 2, "send": 1}
    assert counts["alternative"] == {"ask": 3, "call": 2}
    assert counts["histories"] == 5
    assert counts["base_probes"] == 25
    assert counts["in_scope_probes"] == 2 * counts["scenarios_with_in_scope_probe"]
    assert counts["probes"] == counts["base_probes"] + counts["in_scope_probes"]
    versions = counts["conditions_per_persona"]["maya"]
    assert versions["v0"] == {"N": 1, "G": 1, "I": 1, "R": 1, "S": 1}
    text = format_report(report)
    assert "scenarios: 5" in text and "OK: no errors" in text


def test_rule1_schema_errors_are_reported(corpus_dir: Path) -> None:
    edit(corpus_dir, RSVP, lambda d: d.pop("revision"))
    report = validate_corpus(corpus_dir)
    assert f"{RSVP}: revision: required field is missing (line 1)" in codes(report)
    # The other scenarios are still counted and checked.
    assert report.counts["scenarios"] == 4
    assert "FAILED: 1 error" in format_report(report)


@pytest.mark.parametrize(
    ("reply", "found"),
    [
        ("Okay, how do I get grass stains out of jeans?", "acknowledgement 'okay'"),
        ("OK. How do I get grass stains out of jeans?", "acknowledgement 'ok'"),
        ("That sounds   good. What about grass stains?", "acknowledgement 'sounds good'"),
        ("Got it. How do I get grass stains out of jeans?", "acknowledgement 'got it'"),
        ("Thanks! How do I get grass stains out of jeans?", "acknowledgement 'thanks'"),
        ("Also, how do I get grass stains out of jeans?", "additive continuation 'also'"),
        ("How do I get grass stains out of jeans too?", "additive continuation 'too'"),
        ("Tell me about grass stains as well.", "additive continuation 'as well'"),
        (
            "While you’re at it, how do I get grass stains out?",
            'additive continuation "while you\'re at it"',
        ),
        ("Is that the DEFAULT for grass stains?", "leakage term 'default'"),
    ],
)
def test_rule2_unrelated_reply(corpus_dir: Path, reply: str, found: str) -> None:
    edit(corpus_dir, RSVP, lambda d: d["episode"]["replies"].update(unrelated=reply))
    report = validate_corpus(corpus_dir)
    assert any(
        i.file == RSVP
        and i.field == "episode.replies.unrelated"
        and found in i.reason
        and "(rule 2)" in i.reason
        for i in report.errors
    ), codes(report)


@pytest.mark.parametrize(
    "reply",
    ["Is the okra fresh this week?", "Where did I put the toothpaste?", "Is Plussy a brand?"],
)
def test_rule2_uses_word_boundaries(corpus_dir: Path, reply: str) -> None:
    edit(corpus_dir, RSVP, lambda d: d["episode"]["replies"].update(unrelated=reply))
    assert validate_corpus(corpus_dir).errors == []


def test_rule3_identical_requests_warn(corpus_dir: Path) -> None:
    def change(d: dict[str, Any]) -> None:
        d["in_scope_probe"]["request"] = "  " + d["probe"]["request"].upper()

    edit(corpus_dir, RSVP, change)
    report = validate_corpus(corpus_dir)
    assert report.errors == []
    find(report.warnings, RSVP, "in_scope_probe.request", "identical to probe.request")
    assert "Warnings (1):" in format_report(report)


def test_rule4_probe_requests_do_not_leak(corpus_dir: Path) -> None:
    def change(d: dict[str, Any]) -> None:
        d["probe"]["request"] += " Reorder whatever is cheapest."
        d["in_scope_probe"]["request"] += " As soon as the printer runs low, buy."

    edit(corpus_dir, INK, change)
    errors = validate_corpus(corpus_dir).errors
    find(errors, INK, "probe.request", "leakage term 'reorder' (rule 4)")
    find(
        errors,
        INK,
        "in_scope_probe.request",
        "leakage term 'as soon as the printer runs low' (rule 4)",
    )


def test_rule5_tools_and_ids(corpus_dir: Path) -> None:
    def change_rsvp(d: dict[str, Any]) -> None:
        d["probe"]["target"]["args"]["invitation_id"] = "inv-ghost"
        d["in_scope_probe"]["target"]["args"]["invitation_id"] = (
            "inv-kevin"  # only in the probe world
        )
        d["probe"]["target"]["args"]["colour"] = "red"

    def change_ink(d: dict[str, Any]) -> None:
        d["probe"]["alternative"]["args"]["product_id"] = "ink-magenta"
        d["in_scope_probe"]["target"] = {"tool": "email", "args": {"to": "shop"}}

    edit(corpus_dir, RSVP, change_rsvp)
    edit(corpus_dir, INK, change_ink)
    errors = validate_corpus(corpus_dir).errors
    find(
        errors,
        RSVP,
        "probe.target.args.invitation_id",
        "'inv-ghost' is not in world.invitations (ids: inv-kevin)",
    )
    find(
        errors,
        RSVP,
        "in_scope_probe.target.args.invitation_id",
        "'inv-kevin' is not in world.invitations",
    )
    find(errors, RSVP, "probe.target.args.colour", "rsvp takes no argument 'colour'")
    find(errors, INK, "probe.alternative.args.product_id", "'ink-magenta' is not in world.products")
    find(errors, INK, "in_scope_probe.target.tool", "'email' is not a side-effecting tool")


def test_rule5_unquoted_response(corpus_dir: Path) -> None:
    edit(corpus_dir, RSVP, lambda d: d["probe"]["target"]["args"].update(response=True))
    find(validate_corpus(corpus_dir).errors, RSVP, "probe.target.args.response", "quote it")


def test_rule5_target_must_name_its_object(corpus_dir: Path) -> None:
    edit(corpus_dir, INK, lambda d: d["probe"]["target"].update(args={"quantity": 2}))
    find(validate_corpus(corpus_dir).errors, INK, "probe.target.args", "must name the product_id")


def test_rule6_action_equals_target_tool(corpus_dir: Path) -> None:
    edit(corpus_dir, RSVP, lambda d: d.update(action="send"))
    errors = validate_corpus(corpus_dir).errors
    find(errors, RSVP, "probe.target.tool", "is 'rsvp' but action is 'send' (rule 6)")
    find(errors, RSVP, "in_scope_probe.target.tool", "is 'rsvp' but action is 'send' (rule 6)")


def test_models_reject_unknown_tool_fields_via_loader() -> None:
    # The scenario model itself stays permissive about tool names: rule 5 explains them.
    scenario = load_corpus(CORPUS).scenario("maya-ink-reorder")
    data = scenario.model_dump(by_alias=True)
    data["probe"]["target"]["tool"] = "teleport"
    assert Scenario.model_validate(data).probe.target.tool == "teleport"


def test_broken_persona_file_is_reported_once(corpus_dir: Path) -> None:
    (corpus_dir / PERSONA).write_text("id: maya\nname: [\n", encoding="utf-8")
    errors = load_errors(corpus_dir)
    assert [e.file for e in errors] == [PERSONA], errors


def test_world_dates_before_the_probe_warn(corpus_dir: Path) -> None:
    def change(d: dict[str, Any]) -> None:
        d["probe"]["world"]["invitations"][0]["when"] = "2026-06-12T20:00"

    edit(corpus_dir, RSVP, change)
    report = validate_corpus(corpus_dir)
    assert report.errors == []
    find(
        report.warnings,
        RSVP,
        "probe.world.invitations[0].when",
        "2026-06-12 is before the probe date 2026-06-18",
    )
