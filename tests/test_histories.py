"""History assembly: Latin square, session layout, gaps, determinism, no evaluation leaks."""

from __future__ import annotations

import shutil
from datetime import date, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import yaml

from scenarios.corpus_model import Scenario
from scenarios.histories import (
    CONDITIONS,
    MIN_GAP_DAYS,
    PROBE_DELAY_DAYS,
    SESSIONS,
    DialogueTurn,
    History,
    Session,
    build_histories,
    build_probes,
    condition_for,
    history_digest,
    render_transcript,
)
from scenarios.loader import Corpus, load_corpus

CORPUS = Path(__file__).parent / "data" / "corpus_min"


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus(CORPUS)


@pytest.fixture(scope="module")
def histories(corpus: Corpus) -> list[History]:
    return build_histories(corpus)


def _dump(path: Path, data: dict[str, Any]) -> None:
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


@pytest.fixture(scope="module")
def big_corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    """A full-size persona: 16 scenarios, every dialogue text tagged with its scenario."""
    root = tmp_path_factory.mktemp("big")
    shutil.copytree(CORPUS / "personas", root / "personas")
    (root / "maya").mkdir()
    sources = sorted((CORPUS / "maya").glob("*.yaml"))
    for n in range(16):
        data = yaml.safe_load(sources[n % len(sources)].read_text(encoding="utf-8"))
        new_id = f"{data['id']}-{n:02d}"
        data["id"] = new_id
        tag = f" [{new_id}]"
        episode = data["episode"]
        for key in ("user", "proposal", "neutral"):
            episode[key] += tag
        for group in ("replies", "follow_ups"):
            for key in episode[group]:
                episode[group][key] += tag
        for part in ("touchpoint", "revision"):
            data[part]["user"] += tag
            data[part]["assistant"] += tag
        _dump(root / "maya" / f"{new_id}.yaml", data)
    return load_corpus(root)


def all_texts(history: History) -> list[str]:
    return [turn.text for session in history.sessions for turn in session.turns]


def session_of(history: History, text: str) -> Session:
    found = [s for s in history.sessions if any(t.text == text for t in s.turns)]
    assert len(found) == 1, f"{text!r} in {len(found)} sessions"
    return found[0]


def conditions(corpus: Corpus, history: History) -> dict[str, str]:
    probes = build_probes(corpus)[history.id]
    return {p.scenario_id: p.condition for p in probes if p.kind == "base"}


# --- Latin square ----------------------------------------------------------------


def test_latin_square_assignment(corpus: Corpus, histories: list[History]) -> None:
    assert [h.id for h in histories] == [f"maya-v{v}" for v in range(5)]
    scenario_ids = [s.id for s in corpus.scenarios["maya"]]
    seen: dict[str, set[str]] = {sid: set() for sid in scenario_ids}
    for history in histories:
        by_scenario = conditions(corpus, history)
        for position, sid in enumerate(scenario_ids):
            expected = "NGIRS"[(position + history.version) % 5]
            assert by_scenario[sid] == expected == condition_for(position, history.version)
            seen[sid].add(by_scenario[sid])
        assert sorted(by_scenario.values()) == sorted(CONDITIONS)
    assert all(found == set(CONDITIONS) for found in seen.values())


# --- layout --------------------------------------------------------------------


@pytest.mark.parametrize("which", ["tiny", "big"])
def test_layout(request: pytest.FixtureRequest, which: str) -> None:
    corpus: Corpus = request.getfixturevalue("corpus" if which == "tiny" else "big_corpus")
    persona = corpus.personas["maya"]
    fillers = {f.user for f in persona.fillers}
    scenarios: list[Scenario] = corpus.scenarios["maya"]
    for history in build_histories(corpus):
        sessions = history.sessions
        assert len(sessions) == SESSIONS == 18
        assert [s.index for s in sessions] == list(range(1, 19))
        assert len({s.id for s in sessions}) == 18
        # Two to five months from the persona's start, dates strictly increasing.
        assert sessions[0].date == persona.start
        assert all(a.date < b.date for a, b in pairwise(sessions))
        last = sessions[-1].date
        assert _add_months(persona.start, 2) <= last <= _add_months(persona.start, 5)
        # Exactly one filler exchange per session.
        for session in sessions:
            users = [t.text for t in session.turns if t.speaker == "user"]
            assert sum(u in fillers for u in users) == 1, session.id
        by_scenario = conditions(corpus, history)
        for scenario in scenarios:
            episode = session_of(history, scenario.episode.user)
            touchpoint = session_of(history, scenario.touchpoint.user)
            assert (touchpoint.date - episode.date).days >= MIN_GAP_DAYS
            texts = all_texts(history)
            if by_scenario[scenario.id] == "R":
                revision = session_of(history, scenario.revision.user)
                assert (revision.date - episode.date).days >= MIN_GAP_DAYS
            else:
                assert scenario.revision.user not in texts


def _add_months(day: date, months: int) -> date:
    month = day.month - 1 + months
    return date(day.year + month // 12, month % 12 + 1, min(day.day, 28))


def test_events_share_sessions_in_the_big_corpus(big_corpus: Corpus) -> None:
    history = build_histories(big_corpus)[0]
    turns = sum(len(s.turns) for s in history.sessions)
    assert turns >= 18 * 2 + 16 * 3 + 16 * 2
    assert max(len(s.turns) for s in history.sessions) > 6


def test_placement_is_the_same_in_every_version(histories: list[History]) -> None:
    # Matched histories: the same dates and the same touchpoint sessions everywhere.
    assert len({tuple(s.date for s in h.sessions) for h in histories}) == 1


# --- content by condition --------------------------------------------------------


def test_condition_texts(corpus: Corpus, histories: list[History]) -> None:
    for history in histories:
        texts = set(all_texts(history))
        for scenario in corpus.scenarios["maya"]:
            episode = scenario.episode
            condition = conditions(corpus, history)[scenario.id]
            follow = episode.follow_ups
            assert follow is not None
            assert episode.user in texts and scenario.touchpoint.user in texts
            if condition == "N":
                assert episode.neutral in texts and episode.proposal not in texts
                assert episode.replies.unrelated in texts and follow.unrelated in texts
            else:
                assert episode.proposal in texts and episode.neutral not in texts
            if condition == "I":
                assert episode.replies.unrelated in texts and follow.unrelated in texts
                assert episode.replies.accept not in texts and episode.replies.scoped not in texts
            if condition in ("G", "R"):
                assert episode.replies.accept in texts and follow.accept in texts
                assert episode.replies.unrelated not in texts
            if condition == "S":
                assert episode.replies.scoped in texts and follow.scoped in texts
                assert episode.replies.accept not in texts
            assert (scenario.revision.user in texts) == (condition == "R")


def test_episode_turn_order(corpus: Corpus, histories: list[History]) -> None:
    scenario = corpus.scenarios["maya"][0]
    history = next(h for h in histories if conditions(corpus, h)[scenario.id] == "I")
    turns = list(session_of(history, scenario.episode.user).turns)
    start = next(i for i, t in enumerate(turns) if t.text == scenario.episode.user)
    assert scenario.episode.follow_ups is not None
    assert [(t.speaker, t.text) for t in turns[start : start + 4]] == [
        ("user", scenario.episode.user),
        ("assistant", scenario.episode.proposal),
        ("user", scenario.episode.replies.unrelated),
        ("assistant", scenario.episode.follow_ups.unrelated),
    ]


# --- determinism -------------------------------------------------------------------


def test_byte_for_byte_determinism(tmp_path: Path) -> None:
    shutil.copytree(CORPUS, tmp_path / "copy")
    first = [history_digest(h) for h in build_histories(load_corpus(CORPUS))]
    second = [history_digest(h) for h in build_histories(load_corpus(tmp_path / "copy"))]
    assert first == second
    assert len(set(first)) == 5  # the versions really differ
    transcripts = [render_transcript(h) for h in build_histories(load_corpus(CORPUS))]
    assert transcripts == [render_transcript(h) for h in build_histories(load_corpus(CORPUS))]
    probes_a = {
        k: [p.model_dump_json() for p in v] for k, v in build_probes(load_corpus(CORPUS)).items()
    }
    probes_b = {
        k: [p.model_dump_json() for p in v]
        for k, v in build_probes(load_corpus(tmp_path / "copy")).items()
    }
    assert probes_a == probes_b


def test_digest_changes_with_content(histories: list[History]) -> None:
    history = histories[0]
    session = history.sessions[0]
    changed_turn = session.turns[0].model_copy(update={"text": session.turns[0].text + "!"})
    changed = history.model_copy(
        update={
            "sessions": (
                session.model_copy(update={"turns": (changed_turn, *session.turns[1:])}),
                *history.sessions[1:],
            )
        }
    )
    assert history_digest(changed) != history_digest(history)


# --- transcript ------------------------------------------------------------------


def test_render_transcript(histories: list[History]) -> None:
    history = histories[0]
    text = render_transcript(history)
    third = history.sessions[2]
    assert f"=== Session 3 · {third.date.isoformat()} ===" in text
    assert text.count("=== Session ") == 18
    first_turn = history.sessions[0].turns[0]
    assert f"{'User' if first_turn.speaker == 'user' else 'Assistant'}: {first_turn.text}" in text
    lines = [line for line in text.splitlines() if line and not line.startswith("===")]
    assert all(line.startswith(("User: ", "Assistant: ")) for line in lines)


# --- probes --------------------------------------------------------------------------


def test_probes(corpus: Corpus, histories: list[History]) -> None:
    probes = build_probes(corpus)
    assert list(probes) == [h.id for h in histories]
    with_scope = {s.id for s in corpus.scenarios["maya"] if s.in_scope_probe is not None}
    total = 0
    for history in histories:
        specs = probes[history.id]
        base = [p for p in specs if p.kind == "base"]
        in_scope = [p for p in specs if p.kind == "in_scope"]
        assert len(base) == 5
        assert all(p.condition in ("G", "S") and p.scenario_id in with_scope for p in in_scope)
        assert all(
            p.date == history.sessions[-1].date + timedelta(days=PROBE_DELAY_DAYS) for p in specs
        )
        assert len({p.id for p in specs}) == len(specs)
        for p in specs:
            scenario = corpus.scenario(p.scenario_id)
            if p.kind == "base":
                assert (
                    p.request == scenario.probe.request
                    and p.alternative == scenario.probe.alternative
                )
                expected = {"N": "ask", "G": "target", "I": "ask", "S": "ask"}.get(p.condition)
                if p.condition == "R":
                    expected = "ask" if scenario.probe.alternative.is_ask else "alternative"
                assert p.expected == expected
            else:
                assert scenario.in_scope_probe is not None
                assert p.request == scenario.in_scope_probe.request and p.alternative is None
                assert p.target == scenario.in_scope_probe.target and p.expected == "target"
        total += len(specs)
    assert total == 5 * 5 + 2 * len(with_scope)


# --- evaluation-only fields never reach the dialogue --------------------------------


def test_dialogue_models_carry_only_dialogue() -> None:
    assert set(DialogueTurn.model_fields) == {"speaker", "text"}
    assert set(Session.model_fields) == {"id", "index", "date", "turns"}
    assert set(History.model_fields) == {"id", "persona", "version", "sessions"}


def test_no_evaluation_only_string_in_sessions(tmp_path: Path) -> None:
    marker = "ZZPOISON"
    root = tmp_path / "poisoned"
    shutil.copytree(CORPUS, root)
    persona_path = root / "personas" / "maya.yaml"
    persona = yaml.safe_load(persona_path.read_text(encoding="utf-8"))
    persona["background"] += f" {marker}-background"
    _dump(persona_path, persona)
    for path in sorted((root / "maya").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["arrangement"] += f" {marker}-arrangement"
        data["alternative"] += f" {marker}-alternative"
        data["leakage_terms"].append(f"{marker}-leak")
        data["probe"]["request"] += f" {marker}-request"
        data["probe"]["target"]["args"]["note" if data["action"] == "rsvp" else "subject"] = (
            f"{marker}-target"
        )
        if "in_scope_probe" in data:
            data["in_scope_probe"]["request"] += f" {marker}-in-scope"
        _dump(path, data)
    corpus = load_corpus(root)
    # Type and stakes are enums: give each scenario's values to the check instead.
    forbidden = {f"{marker}-"} | {s.type for s in corpus.all_scenarios()} | {"stakes", "condition"}
    for history in build_histories(corpus):
        payload = history.model_dump_json()
        transcript = render_transcript(history)
        assert marker not in payload and marker not in transcript
        for text in all_texts(history):
            assert not any(word in text.lower() for word in forbidden), text
        for session in history.sessions:
            assert set(session.model_dump()) == {"id", "index", "date", "turns"}
    # The probes do carry them: that is the evaluation side.
    specs = [p for v in build_probes(corpus).values() for p in v]
    assert any(marker in p.request for p in specs)
