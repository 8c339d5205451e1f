"""Read a scenario corpus directory into typed models, or explain exactly what is wrong.

The loader never stops at the first problem: it reads every file, validates what it
can and reports all issues as `file: field: reason` lines (`CorpusError`). Layout and
field rules are those of SCENARIO_FORMAT.md.
"""

from __future__ import annotations

import hashlib
import re
import stat
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, SequenceNode

from scenarios.corpus_model import Persona, Scenario

__all__ = [
    "MAX_FILE_BYTES",
    "MIN_SCENARIOS",
    "Corpus",
    "CorpusError",
    "CorpusIssue",
    "load_corpus",
    "scan_corpus",
]

MAX_FILE_BYTES = 1024 * 1024
"""Files larger than this (1 MB) are rejected without being parsed."""

MAX_ALIAS_EXPANSION = 10_000
"""YAML aliases (`*name`) may add at most this many values to a file: no alias bombs."""

MAX_NESTING = 100
"""Flow brackets ([ {) may nest this deep. PyYAML's scanner slows down with the square
of the depth: a line of 10,000 brackets costs seconds before any error."""

MAX_REASON_CHARS = 300
"""A reason longer than this is cut (a 1 MB key must not make a 1 MB message)."""

MIN_SCENARIOS = 5
"""Every persona needs at least this many scenarios (one per Latin-square condition)."""

PERSONAS_DIR = "personas"
SUFFIX = ".yaml"

# Field names for issues that concern a whole file, directory or corpus.
WHOLE_FILE = "<file>"
WHOLE_DIR = "<directory>"
WHOLE_CORPUS = "<corpus>"


@dataclass(frozen=True, order=True)
class CorpusIssue:
    """One problem (or warning) in a corpus: where it is and why it matters."""

    file: str
    field: str
    reason: str

    def __post_init__(self) -> None:
        # One line each, whatever the file names and keys hold (newlines, RTL marks, NUL).
        for name in ("file", "field", "reason"):
            object.__setattr__(self, name, _printable(getattr(self, name)))

    def __str__(self) -> str:
        return f"{self.file}: {self.field}: {self.reason}"


class CorpusError(Exception):
    """The corpus cannot be used; `errors` lists every problem found."""

    def __init__(self, errors: list[CorpusIssue]) -> None:
        self.errors = list(errors)
        super().__init__(self.__str__())

    def __str__(self) -> str:
        count = len(self.errors)
        head = f"invalid scenario corpus: {count} error{'s' if count != 1 else ''}"
        return "\n".join([head, *(str(issue) for issue in self.errors)])


@dataclass(frozen=True)
class Corpus:
    """A loaded corpus: personas by id and each persona's scenarios sorted by id."""

    path: Path
    personas: dict[str, Persona]
    scenarios: dict[str, list[Scenario]]
    file_hashes: dict[str, str] = field(default_factory=dict)

    def digest(self) -> str:
        """sha256 over every corpus file (relative path and bytes) in sorted path order."""
        hasher = hashlib.sha256()
        for rel in sorted(self.file_hashes):
            hasher.update(rel.encode("utf-8") + b"\0" + self.file_hashes[rel].encode() + b"\n")
        return hasher.hexdigest()

    def all_scenarios(self) -> list[Scenario]:
        """Every scenario, persona by persona (personas sorted by id)."""
        return [s for pid in sorted(self.scenarios) for s in self.scenarios[pid]]

    def scenario(self, scenario_id: str) -> Scenario:
        """The scenario with this id (KeyError if there is none)."""
        for scenario in self.all_scenarios():
            if scenario.id == scenario_id:
                return scenario
        raise KeyError(scenario_id)


def load_corpus(path: str | Path) -> Corpus:
    """Load and check a corpus directory; raise `CorpusError` listing every problem."""
    corpus, errors = scan_corpus(path)
    if errors:
        raise CorpusError(errors)
    return corpus


def scan_corpus(path: str | Path) -> tuple[Corpus, list[CorpusIssue]]:
    """Load everything that can be loaded and return it with the list of problems.

    The corpus holds only the files that passed; the validator uses it to check the
    content rules of the valid files even when other files are broken.
    """
    root = Path(path)
    scan = _Scan(root)
    scan.run()
    return scan.corpus(), sorted(scan.issues, key=_issue_order)


def _issue_order(issue: CorpusIssue) -> tuple[bool, str]:
    # Corpus-level issues first, then file by file, in the order they were found.
    return (issue.field != WHOLE_CORPUS, issue.file)


@dataclass
class _Raw:
    """A file that parsed to a mapping (not necessarily a valid model)."""

    rel: str
    stem: str
    data: dict[str, Any]
    node: Node


class _Scan:
    """One pass over a corpus directory, accumulating models and issues."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.issues: list[CorpusIssue] = []
        self.hashes: dict[str, str] = {}
        self.personas: dict[str, Persona] = {}
        self.scenarios: dict[str, list[Scenario]] = {}

    def add(self, file: str, field_name: str, reason: str) -> None:
        reason = _printable(reason)
        if len(reason) > MAX_REASON_CHARS:
            reason = reason[: MAX_REASON_CHARS - 3] + "..."
        self.issues.append(CorpusIssue(file, field_name, reason))

    def corpus(self) -> Corpus:
        scenarios = {
            pid: sorted(self.scenarios.get(pid, []), key=lambda s: s.id)
            for pid in sorted(self.personas)
        }
        return Corpus(
            path=self.root,
            personas=dict(sorted(self.personas.items())),
            scenarios=scenarios,
            file_hashes=dict(sorted(self.hashes.items())),
        )

    def run(self) -> None:
        if not self.root.is_dir():
            reason = "does not exist" if not self.root.exists() else "is not a directory"
            self.add(str(self.root), WHOLE_CORPUS, f"corpus path {reason}")
            return
        declared = self.read_personas()
        seen_scenarios: dict[str, str] = {}
        counts: dict[str, int] = {}
        for directory in sorted(p for p in self.root.iterdir() if p.is_dir() and not _hidden(p)):
            if directory.name == PERSONAS_DIR:
                continue
            # Every .yaml file counts, parsed or not: a broken file is reported once.
            counts[directory.name] = sum(
                1 for p in directory.iterdir() if p.suffix == SUFFIX and not _hidden(p)
            )
            for raw in self.read_dir(directory):
                self.check_scenario(raw, directory.name, declared, seen_scenarios)
        for stem, rel in sorted(declared.items()):
            count = counts.get(stem, 0)
            if count < MIN_SCENARIOS:
                self.add(
                    f"{stem}/",
                    WHOLE_DIR,
                    f"persona {stem!r} has {count} scenario file{'s' if count != 1 else ''}; "
                    f"at least {MIN_SCENARIOS} are required (see {rel})",
                )

    def read_personas(self) -> dict[str, str]:
        """Validate persona files; return every declared persona (file stem -> file)."""
        directory = self.root / PERSONAS_DIR
        if not directory.is_dir():
            self.add(f"{PERSONAS_DIR}/", WHOLE_CORPUS, "missing personas/ directory")
            return {}
        # A persona file that fails to parse still declares its persona, so its
        # scenarios are not also reported as belonging to an unknown persona.
        declared = {
            p.stem: p.relative_to(self.root).as_posix()
            for p in sorted(directory.iterdir())
            if p.suffix == SUFFIX and p.is_file() and not _hidden(p)
        }
        seen: dict[str, str] = {}
        for raw in self.read_dir(directory):
            self.check_id(raw, seen)
            persona = self.validate(raw, Persona)
            if isinstance(persona, Persona) and persona.id == raw.stem:
                self.personas[persona.id] = persona
        return declared

    def check_scenario(
        self, raw: _Raw, dirname: str, declared: dict[str, str], seen: dict[str, str]
    ) -> None:
        self.check_id(raw, seen)
        persona_id = raw.data.get("persona")
        if isinstance(persona_id, str):
            if persona_id != dirname:
                self.add(
                    raw.rel,
                    "persona",
                    f"scenario is in directory {dirname + '/'!r} "
                    f"but its persona is {persona_id!r}; move it or fix the persona",
                )
            if persona_id not in declared:
                self.add(
                    raw.rel,
                    "persona",
                    f"unknown persona {persona_id!r} (no {PERSONAS_DIR}/{persona_id}{SUFFIX})",
                )
        scenario = self.validate(raw, Scenario)
        if (
            isinstance(scenario, Scenario)
            and scenario.id == raw.stem
            and scenario.persona == dirname
            and dirname in self.personas
        ):
            self.scenarios.setdefault(dirname, []).append(scenario)

    def check_id(self, raw: _Raw, seen: dict[str, str]) -> None:
        """File name equals id; ids are unique within their kind."""
        value = raw.data.get("id")
        if not isinstance(value, str):
            return  # the model reports a missing or mistyped id
        if value != raw.stem:
            self.add(raw.rel, "id", f"file name {raw.stem + SUFFIX!r} does not match id {value!r}")
        if value in seen:
            self.add(raw.rel, "id", f"duplicate id {value!r} (also in {seen[value]})")
        else:
            seen[value] = raw.rel

    def validate(self, raw: _Raw, model: type[BaseModel]) -> BaseModel | None:
        try:
            return model.model_validate(raw.data)
        except ValidationError as exc:
            for error in exc.errors():
                loc = tuple(error["loc"])
                line = _line_of(raw.node, loc)
                where = f" (line {line})" if line else ""
                self.add(raw.rel, _dotted(loc), _pydantic_reason(error) + where)
            return None
        except Exception as exc:  # a field check that broke on hostile input: still a report
            self.add(raw.rel, WHOLE_FILE, f"cannot be checked ({type(exc).__name__}: {exc})")
            return None

    def read_dir(self, directory: Path) -> Iterator[_Raw]:
        """Every `.yaml` file of a directory that parses to a mapping; others become issues."""
        for entry in sorted(directory.iterdir()):
            if _hidden(entry):
                continue
            rel = entry.relative_to(self.root).as_posix()
            if entry.is_dir():
                self.add(
                    rel + "/",
                    WHOLE_DIR,
                    "unexpected directory (scenario directories hold only .yaml files)",
                )
                continue
            if entry.suffix != SUFFIX:
                hint = f"; rename it to {entry.stem}{SUFFIX}" if entry.suffix == ".yml" else ""
                self.add(rel, WHOLE_FILE, f"unexpected file: only {SUFFIX} files belong here{hint}")
                continue
            raw = self.read_file(entry, rel)
            if raw is not None:
                yield raw

    def read_file(self, path: Path, rel: str) -> _Raw | None:
        try:
            info = path.stat()
            if not stat.S_ISREG(info.st_mode):
                self.add(rel, WHOLE_FILE, "not a regular file (a pipe, socket or device)")
                return None
            size = info.st_size
            if size <= MAX_FILE_BYTES:
                with path.open("rb") as handle:  # at most one byte more: it may have grown
                    data = handle.read(MAX_FILE_BYTES + 1)
                size = max(size, len(data))
        except OSError as exc:
            link = "broken symbolic link: " if path.is_symlink() else ""
            self.add(rel, WHOLE_FILE, f"cannot read the file: {link}{exc.strerror or exc}")
            return None
        if size > MAX_FILE_BYTES:
            self.add(
                rel,
                WHOLE_FILE,
                f"file is {size} bytes; the limit is {MAX_FILE_BYTES} (1 MB): not parsed",
            )
            return None
        self.hashes[rel] = hashlib.sha256(data).hexdigest()
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            self.add(
                rel,
                WHOLE_FILE,
                f"not UTF-8 text: invalid byte 0x{data[exc.start]:02x} at line {line}",
            )
            return None
        if not text.strip():
            self.add(rel, WHOLE_FILE, "file is empty")
            return None
        nesting = _nesting_problem(text)
        if nesting is not None:
            self.add(rel, WHOLE_FILE, nesting)
            return None
        try:
            loader = _UniqueKeyLoader(text)
            try:
                node = loader.get_single_node()
                expansion = _alias_problem(node) if node is not None else None
                if expansion is not None:
                    self.add(rel, WHOLE_FILE, expansion)
                    return None
                value = loader.construct_document(node) if node is not None else None
            finally:
                loader.dispose()
        except yaml.MarkedYAMLError as exc:
            self.add(rel, WHOLE_FILE, _yaml_reason(exc))
            return None
        except yaml.reader.ReaderError as exc:
            self.add(rel, WHOLE_FILE, _reader_reason(exc, text))
            return None
        except yaml.YAMLError as exc:
            self.add(rel, WHOLE_FILE, f"invalid YAML: {exc}")
            return None
        except RecursionError:
            self.add(rel, WHOLE_FILE, "invalid YAML: lists or mappings nested too deeply")
            return None
        if node is None or value is None:
            self.add(
                rel, WHOLE_FILE, "file is empty (no YAML document, only comments or blank lines)"
            )
            return None
        if not isinstance(value, dict):
            kind = "a list" if isinstance(value, list) else f"a {type(value).__name__}"
            self.add(rel, WHOLE_FILE, f"top level must be a mapping of fields, got {kind}")
            return None
        return _Raw(rel=rel, stem=path.stem, data=value, node=node)


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys instead of silently keeping the last one."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:
                continue  # an unhashable key (a list, a mapping): the base class reports it
            if duplicate:
                raise ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"duplicate key {key!r}",
                    key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _hidden(path: Path) -> bool:
    return path.name.startswith(".")


def _printable(text: str) -> str:
    """`text` with every unprintable character (newline, NUL, RTL mark, lone surrogate)
    written as an escape, so an issue stays one honest line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)


_BRACKET = re.compile(r"[\[\]{}]")


def _nesting_problem(text: str) -> str | None:
    """Brackets nested (or left open) deeper than MAX_NESTING, counted without parsing
    (quotes ignored: no real scenario holds a hundred unclosed brackets)."""
    depth = 0
    for match in _BRACKET.finditer(text):
        depth = depth + 1 if match.group() in "[{" else max(0, depth - 1)
        if depth > MAX_NESTING:
            line = text.count("\n", 0, match.start()) + 1
            return (
                f"invalid YAML at line {line}: lists or mappings nested more than "
                f"{MAX_NESTING} deep"
            )
    return None


def _alias_problem(root: Node) -> str | None:
    """Why the aliases of a YAML document cannot be expanded (None if they can).

    Expanding aliases may not add more than MAX_ALIAS_EXPANSION values: a few lines of
    nested aliases (a "billion laughs") or an alias inside its own anchor would
    otherwise take the validator's time and memory. Iterative, so depth costs nothing.
    """
    unique: set[int] = set()
    stack: list[Node] = [root]
    while stack:  # the distinct nodes
        node = stack.pop()
        if id(node) in unique:
            continue
        unique.add(id(node))
        stack.extend(_children(node))
    budget = len(unique) + MAX_ALIAS_EXPANSION
    expanded = 0
    stack = [root]
    while stack:  # the nodes as the constructed data holds them
        node = stack.pop()
        expanded += 1
        if expanded > budget:
            return (
                f"invalid YAML: aliases (*name) expand to more than {MAX_ALIAS_EXPANSION} "
                "extra values (an alias bomb, or an alias inside its own anchor): "
                "write the values out"
            )
        stack.extend(_children(node))
    return None


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def _reader_reason(exc: yaml.reader.ReaderError, text: str) -> str:
    """A forbidden character (NUL, other control characters): where it is."""
    position = max(0, min(int(exc.position), len(text)))
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    char: object = exc.character  # PyYAML gives the code point (an int)
    code = char if isinstance(char, int) else None
    what = f"the character U+{code:04X}" if code is not None else "a character"
    name = " (NUL)" if code == 0 else ""
    return f"invalid YAML at line {line}, column {column}: {what}{name} is not allowed in YAML text"


def _yaml_reason(exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    problem = " ".join((exc.problem or exc.context or "syntax error").split())
    if mark is None:
        return f"invalid YAML: {problem}"
    return f"invalid YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}"


def _dotted(loc: tuple[int | str, ...]) -> str:
    """('probe', 'world', 'invitations', 0, 'id') -> 'probe.world.invitations[0].id'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out or WHOLE_FILE


def _pydantic_reason(error: Any) -> str:
    kind = error.get("type", "")
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field (not part of the corpus format)"
    message = str(error.get("msg", "invalid value"))
    message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    value = error.get("input")
    if isinstance(value, bool) and kind.startswith("string"):
        message += " (YAML read an unquoted yes/no/true/false/on/off as a boolean: quote it)"
    elif kind not in {"model_type", "dict_type", "list_type", "value_error"} and isinstance(
        value, str | int | float
    ):
        shown = repr(value)
        message += f", got {shown[:60] + '...' if len(shown) > 60 else shown}"
    return message


def _line_of(node: Node, loc: tuple[int | str, ...]) -> int | None:
    """1-based line of the deepest YAML node on the error's path (None if none)."""
    line: int | None = node.start_mark.line + 1 if loc else None
    current: Node | None = node
    for part in loc:
        nxt: Node | None = None
        if isinstance(current, MappingNode) and isinstance(part, str):
            for key_node, value_node in current.value:
                if getattr(key_node, "value", None) == part:
                    nxt = value_node
                    break
        elif (
            isinstance(current, SequenceNode)
            and isinstance(part, int)
            and 0 <= part < len(current.value)
        ):
            nxt = current.value[part]
        if nxt is None:
            break
        current = nxt
        line = current.start_mark.line + 1
    return line
