"""Hostile and malformed corpora: the loader reports, it never raises.

Starts from a copy of a real persona and five of its scenarios (scenarios/corpus/maya)
and breaks them: hypothesis mutates the parsed fields (wrong types, missing and
unknown fields, odd unicode) and the raw bytes (NUL, invalid UTF-8, BOM, RTL marks,
YAML syntax, truncation); fixed cases cover what a generator finds slowly (a 20 MB
file, alias bombs, deep nesting, symlink loops, a directory or a pipe where a file
belongs). The property: every problem is one line naming the file and the field (or
`<file>`), a file that did not load is always named, no exception escapes, and
`grounding replay` on a corpus with errors writes no trajectories.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scenarios.loader import MAX_FILE_BYTES, CorpusError, CorpusIssue, load_corpus
from scenarios.validate import format_report, load_valid_corpus, validate_corpus
from tests.conftest import ROOT, cli_env

REAL = ROOT / "scenarios" / "corpus"
PERSONA = "personas/maya.yaml"
GROUNDING = str(Path(sys.executable).parent / "grounding")


def _scenario_files() -> list[str]:
    return [f"maya/{p.name}" for p in sorted((REAL / "maya").glob("*.yaml"))[:5]]


SCENARIOS = _scenario_files()
FILES = [PERSONA, *SCENARIOS]


def make_corpus(root: Path, files: list[str] = FILES) -> Path:
    """A copy of the real persona maya and (by default) five of her scenarios."""
    for rel in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REAL / rel, root / rel)
    return root


# --- the property ---------------------------------------------------------------------


def check_reports(root: Path, broken: str | None, *, refused: bool = True) -> list[CorpusIssue]:
    """Validate `root`; assert every issue is a clear one-line report. `broken` is the
    file that was changed: when it did not load, an error must name it. With `refused`,
    also check what replay uses: any error stops it, listing them all."""
    report = validate_corpus(root)  # must not raise
    text = format_report(report)
    text.encode("utf-8")  # printable on any UTF-8 terminal (no lone surrogates)
    for issue in [*report.errors, *report.warnings]:
        line = str(issue)
        assert "\n" not in line and "\r" not in line and "Traceback" not in line, line
        assert issue.file and issue.field and issue.reason, line
        assert issue.file.isprintable() and issue.field.isprintable(), line
        assert f"  {line}" in text
    if broken is not None and not _loaded(report.counts, root, broken):
        named = [e for e in report.errors if e.file.rstrip("/") == broken]
        assert named, f"{broken} did not load, and no error names it:\n{text}"
    if refused and report.errors:
        with pytest.raises(CorpusError) as info:
            load_valid_corpus(root)
        assert all(str(issue) in str(info.value) for issue in report.errors)
    elif refused:
        assert load_valid_corpus(root).digest() == load_corpus(root).digest()
    return report.errors


def _loaded(counts: dict[str, Any], root: Path, rel: str) -> bool:
    """Did `rel` make it into the corpus? (Every other file is an untouched copy.)"""
    if rel == PERSONA:
        return bool(counts["personas"] == 1)
    files = len(list((root / "maya").glob("*.yaml")))
    return bool(counts["personas"] == 1 and counts["scenarios"] == files)


def test_the_copy_of_the_real_corpus_is_clean(tmp_path: Path) -> None:
    root = make_corpus(tmp_path / "corpus")
    assert check_reports(root, None) == []
    assert len(load_corpus(root).scenarios["maya"]) == 5


# --- hypothesis: field mutations -----------------------------------------------------

ODD_TEXT = [
    "",
    " ",
    "\x00",
    "\ud800",  # a lone surrogate
    "\ufeff",  # BOM
    "\u200f\u202e",  # RTL mark, right-to-left override
    "line one\nline two",
    "\t",
    "yes",
    "null",
    "~",
    "2027-01-01",
    "&anchor",
    "*alias",
    "!!python/object/apply:os.system",
    "{[",
    "x" * 20_000,  # a very long line
    "🙂" * 50,
    "Europe/" + "../" * 50,
]
texts = st.one_of(st.text(max_size=30), st.sampled_from(ODD_TEXT))
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True),
    st.dates(min_value=date(1, 1, 1)),
    texts,
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(data, dict):
        for key, value in data.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += _paths(value, (*prefix, index))
    return found


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


def mutate_fields(data: dict[str, Any], draw: Callable[..., Any]) -> None:
    """One of: set a value anywhere, delete a key or item, add an unknown key."""
    path = draw(st.sampled_from(_paths(data)[1:]))
    parent = _at(data, path[:-1])
    op = draw(st.sampled_from(["set", "delete", "add"]))
    if op == "set":
        parent[path[-1]] = draw(values)
    elif op == "delete":
        del parent[path[-1]]
    else:
        target = parent if isinstance(parent, dict) else data
        target[draw(texts)] = draw(values)


def _small(rel: str) -> list[str]:
    """The persona and one scenario (the one mutated, if a scenario is): every example
    parses a quarter of the YAML. The too-few-scenarios error it always has is one more
    report to check."""
    return [PERSONA, rel if rel != PERSONA else SCENARIOS[0]]


FAST = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@FAST
@given(st.sampled_from(FILES), st.integers(min_value=1, max_value=3), st.data())
def test_field_mutations_are_reported_never_raised(rel: str, times: int, data: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = make_corpus(Path(tmp) / "corpus", _small(rel))
        content = yaml.safe_load((root / rel).read_text(encoding="utf-8"))
        for _ in range(times):
            mutate_fields(content, data.draw)
        (root / rel).write_text(
            yaml.safe_dump(content, allow_unicode=True, sort_keys=False), encoding="utf-8"
        )
        check_reports(root, rel, refused=False)


# --- hypothesis: byte mutations --------------------------------------------------------

SNIPPETS = [
    b"\x00",
    b"\xef\xbb\xbf",  # BOM
    b"\xed\xa0\x80",  # a surrogate encoded as UTF-8 (invalid)
    b"\xff\xfe",
    b"\xc3",  # a cut multi-byte sequence
    "\u200f\u202e".encode(),
    b"\x1b[31m",  # a terminal escape
    b"\x85",
    b"\t",
    b"\r",
    b"\n  - ",
    b": ",
    b"{",
    b"[",
    b"]",
    b"'",
    b'"',
    b"&a ",
    b"*a",
    b"!!python/object/apply:os.system [ls]",
    b"? ",
    b"%YAML 1.1\n---\n",
    b"\n---\n",
    b"x" * 5000,
]
WHOLE_FILES = [
    b"",
    b"\xef\xbb\xbf",
    b"\n\n# only a comment\n",
    b"- a list\n- not a mapping\n",
    b"just a string",
    b"null",
    b"id: [\n",
    b"\x00" * 10,
    b"id: x\nid: y\n",
]


@FAST
@given(
    st.sampled_from(FILES),
    st.lists(
        st.tuples(
            st.sampled_from(["insert", "replace", "truncate", "whole"]),
            st.floats(min_value=0, max_value=1),
            st.one_of(st.sampled_from(SNIPPETS), st.binary(min_size=1, max_size=6)),
            st.sampled_from(WHOLE_FILES),
        ),
        min_size=1,
        max_size=3,
    ),
)
def test_byte_mutations_are_reported_never_raised(
    rel: str, edits: list[tuple[str, float, bytes, bytes]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = make_corpus(Path(tmp) / "corpus", _small(rel))
        raw = (root / rel).read_bytes()
        for op, where, snippet, whole in edits:
            at = int(where * len(raw))
            if op == "insert":
                raw = raw[:at] + snippet + raw[at:]
            elif op == "replace":
                raw = raw[:at] + snippet + raw[at + len(snippet) :]
            elif op == "truncate":
                raw = raw[:at]
            else:
                raw = whole
        (root / rel).write_bytes(raw)
        check_reports(root, rel, refused=False)


# --- fixed hostile cases --------------------------------------------------------------

SCENARIO = SCENARIOS[0]
Change = Callable[[Path, str], None]  # (corpus root, scenario file) -> break it


def _bomb(levels: int = 8) -> str:
    lines = ["a0: &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def _in_args(root: Path, rel: str, value: str) -> None:
    """Put a YAML value as the probe target's invitation id (a field validate reads)."""
    data = yaml.safe_load((root / rel).read_text(encoding="utf-8"))
    data["probe"]["target"]["args"]["invitation_id"] = "PLACEHOLDER"
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    (root / rel).write_text(text.replace("PLACEHOLDER", value, 1), encoding="utf-8")


def _write(data: bytes) -> Change:
    def change(root: Path, rel: str) -> None:
        (root / rel).write_bytes(data)

    return change


def _append(text: str) -> Change:
    def change(root: Path, rel: str) -> None:
        old = (root / rel).read_text(encoding="utf-8")
        (root / rel).write_text(old + text, encoding="utf-8")

    return change


def _replace_with(make: Callable[[Path], None]) -> Change:
    def change(root: Path, rel: str) -> None:
        (root / rel).unlink()
        make(root / rel)

    return change


def _nul(root: Path, rel: str) -> None:
    (root / rel).write_bytes((root / rel).read_bytes().replace(b"\n", b"\x00\n", 3))


def _long_timezone(root: Path, _rel: str) -> None:
    lines = (root / PERSONA).read_text(encoding="utf-8").splitlines()
    tz = "a/" * 3000 + "b"
    fixed = [f'timezone: "{tz}"' if x.startswith("timezone:") else x for x in lines]
    (root / PERSONA).write_text("\n".join(fixed) + "\n", encoding="utf-8")


NESTED_BOMB = (
    "[&b0 [1, 2, 3, 4, 5, 6, 7, 8, 9], "
    + ", ".join(f"&b{i} [" + ", ".join([f"*b{i - 1}"] * 9) + "]" for i in range(1, 8))
    + "]"
)

HOSTILE: dict[str, tuple[Change, str, str]] = {
    # name: (change, field of the error, its reason contains)
    "alias_bomb": (_write(_bomb().encode()), "<file>", "alias bomb"),
    "alias_bomb_in_args": (
        lambda root, rel: _in_args(root, rel, NESTED_BOMB),
        "<file>",
        "alias bomb",
    ),
    "recursive_alias": (_write(b"id: &a [*a]\n"), "<file>", "its own anchor"),
    "deep_nesting": (_write(b"id: " + b"[" * 100_000), "<file>", "nested more than 100 deep"),
    "deep_mappings": (
        _write(b"id: " + b"{a: " * 20_000 + b"1" + b"}" * 20_000),
        "<file>",
        "nested more than 100 deep",
    ),
    "deep_block_lists": (_write(b"- " * 300_000 + b"x\n"), "<file>", "nested too deeply"),
    "nul_byte": (_nul, "<file>", "U+0000 (NUL) is not allowed"),
    "lone_surrogate_bytes": (_write(b"id: \xed\xa0\x80\n"), "<file>", "not UTF-8"),
    "utf16": (_write("id: x\n".encode("utf-16")), "<file>", "not UTF-8"),
    "bom_only": (_write(b"\xef\xbb\xbf"), "<file>", "file is empty"),
    "rtl_in_key": (_append("\u202estakes\u200f: low\n"), "\\u202estakes\\u200f", "unknown field"),
    "newline_in_key": (_append('"a\\nb": 1\n'), "a\\u000ab", "unknown field"),
    "long_timezone": (_long_timezone, "timezone", "unknown IANA time zone"),
    "python_tag": (
        _write(b"id: !!python/object/apply:os.system [echo hi]\n"),
        "<file>",
        "could not determine a constructor",
    ),
    "directory_for_a_file": (_replace_with(lambda p: p.mkdir()), "<directory>", "unexpected"),
    "symlink_loop": (_replace_with(lambda p: p.symlink_to(p.name)), "<file>", "symbolic link"),
    "broken_symlink": (
        _replace_with(lambda p: p.symlink_to("nowhere.yaml")),
        "<file>",
        "broken symbolic link",
    ),
    "named_pipe": (_replace_with(os.mkfifo), "<file>", "not a regular file"),
    "too_large": (
        _write(b"#" * (MAX_FILE_BYTES + 1)),
        "<file>",
        f"the limit is {MAX_FILE_BYTES}",
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_file_gets_a_clear_error(name: str, tmp_path: Path) -> None:
    change, field, reason = HOSTILE[name]
    root = make_corpus(tmp_path / "corpus")
    change(root, SCENARIO)
    broken = PERSONA if field == "timezone" else SCENARIO
    started = time.monotonic()
    errors = check_reports(root, broken)
    assert time.monotonic() - started < 10
    expected = [e for e in errors if e.file.rstrip("/") == broken and e.field == field]
    assert any(reason in e.reason for e in expected), "\n".join(map(str, errors))


# --- the command line -----------------------------------------------------------------


def _run(home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [GROUNDING, *args],
        capture_output=True,
        text=True,
        env=cli_env(home),
        timeout=timeout,
    )


def test_validate_refuses_a_20_mb_file_without_parsing_it(tmp_path: Path) -> None:
    root = make_corpus(tmp_path / "corpus")
    size = 20 * 1024 * 1024
    with (root / SCENARIO).open("wb") as handle:  # valid YAML all the way: a comment
        handle.write(b"# " + b"x" * (size - 3) + b"\n")
    started = time.monotonic()
    out = _run(tmp_path / "home", "validate", str(root))
    elapsed = time.monotonic() - started
    assert out.returncode == 1
    assert f"{SCENARIO}: <file>: file is {size} bytes; the limit is {MAX_FILE_BYTES}" in out.stdout
    assert "Traceback" not in out.stdout + out.stderr
    assert elapsed < 20


def test_validate_lists_every_hostile_file_in_one_run(tmp_path: Path) -> None:
    root = make_corpus(tmp_path / "corpus")
    kinds = ("nul_byte", "symlink_loop", "alias_bomb", "deep_nesting", "named_pipe")
    for name, rel in zip(kinds, SCENARIOS, strict=True):
        HOSTILE[name][0](root, rel)
    out = _run(tmp_path / "home", "validate", str(root))
    assert out.returncode == 1, out.stdout
    assert "Traceback" not in out.stdout + out.stderr
    for rel in SCENARIOS:
        assert f"  {rel}: <file>: " in out.stdout


@pytest.mark.parametrize("defect", ["nul_byte", "target_not_in_world"])
def test_replay_on_a_corpus_with_errors_writes_no_trajectories(defect: str, tmp_path: Path) -> None:
    root = make_corpus(tmp_path / "corpus")
    if defect == "nul_byte":
        _nul(root, SCENARIO)
        where = f"{SCENARIO}: <file>:"
    else:  # loads fine; only `validate`'s rule 5 sees it
        _in_args(root, SCENARIO, "inv-nobody")
        where = f"{SCENARIO}: probe.target.args.invitation_id: 'inv-nobody' is not in world"
    run = tmp_path / "run"
    out = _run(tmp_path / "home", "replay", "--scenarios", str(root), "--out", str(run))
    assert out.returncode != 0
    assert "nothing replayed" in out.stderr and where in out.stderr
    assert "Traceback" not in out.stderr
    assert not (run / "trajectories.jsonl").exists() and not run.exists()
