"""The scale bench's generated inputs: recombined corpora pass the real loader and
validator, lengthened histories keep the target history intact at the end, and the
growth exponent is a log-log slope."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from datetime import timedelta
from pathlib import Path
from types import ModuleType

import pytest

from scenarios.histories import build_histories, build_probes
from scenarios.loader import load_corpus
from scenarios.validate import validate_corpus

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "corpus_min"  # one persona, 5 scenarios


def _load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_scale", ROOT / "bench" / "bench_scale.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_scale"] = module
    spec.loader.exec_module(module)
    return module


bench = _load_bench()


@pytest.fixture(scope="module")
def four_copies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bench.make_corpus(CORPUS, 20, tmp_path_factory.mktemp("scale") / "corpus-20")


def test_recombined_corpus_is_valid_v1_with_renamed_and_redated_personas(
    four_copies: Path,
) -> None:
    report = validate_corpus(four_copies)
    assert report.errors == []
    corpus = load_corpus(four_copies)
    real = load_corpus(CORPUS)
    assert sorted(corpus.personas) == ["maya", "maya-c1", "maya-c2", "maya-c3"]
    assert sum(len(v) for v in corpus.scenarios.values()) == 20
    for copy in (1, 2, 3):
        persona = corpus.personas[f"maya-c{copy}"]
        assert persona.start == real.personas["maya"].start - timedelta(days=7 * copy)
        ids = [s.id for s in corpus.scenarios[persona.id]]
        assert ids == [f"{s.id}-c{copy}" for s in real.scenarios["maya"]]
    # 4 personas x 5 versions, and the copies' probes ask what the original's ask
    assert len(build_histories(corpus)) == 20
    probes = build_probes(corpus)
    assert [p.request for p in probes["maya-c2-v3"]] == [p.request for p in probes["maya-v3"]]


def test_sizes_that_are_not_whole_personas_are_refused(tmp_path: Path) -> None:
    assert bench.make_corpus(CORPUS, 5, tmp_path / "same") == CORPUS
    with pytest.raises(SystemExit, match="not a sum of whole personas"):
        bench.make_corpus(CORPUS, 12, tmp_path / "twelve")


def test_lengthened_history_ends_with_the_target_and_dates_strictly_increase(
    four_copies: Path,
) -> None:
    histories = build_histories(load_corpus(four_copies))
    target = next(h for h in histories if h.id == "maya-v2")
    long = bench.lengthen(target, histories, 50)  # one whole other history and 14 sessions
    assert long.id == target.id and len(long.sessions) == 50
    dates = [s.date for s in long.sessions]
    assert all(a < b for a, b in itertools.pairwise(dates))
    assert len({s.id for s in long.sessions}) == 50
    assert [s.index for s in long.sessions] == list(range(1, 51))
    tail = long.sessions[-18:]
    assert [(s.id, s.date, s.turns) for s in tail] == [
        (s.id, s.date, s.turns) for s in target.sessions
    ]
    # what comes before is other personas' dialogue only, never the target persona's
    earlier = long.sessions[:-18]
    assert all(not s.id.startswith("maya-s") for s in earlier)
    assert {s.id.split("-s")[0] for s in earlier} <= {"maya-c1", "maya-c2", "maya-c3"}
    # the other personas have 15 histories of 18 sessions between them
    assert len(bench.lengthen(target, histories, 18 + 15 * 18).sessions) == 288
    with pytest.raises(ValueError, match="too few"):
        bench.lengthen(target, histories, 18 + 15 * 18 + 1)


def test_growth_exponent_is_the_log_log_slope() -> None:
    assert bench.growth_exponent([(18, 2.0), (72, 8.0), (288, 32.0)]) == pytest.approx(1.0)
    assert bench.growth_exponent([(10, 3.0), (40, 6.0), (160, 12.0)]) == pytest.approx(0.5)
    assert bench.growth_exponent([(10, 1.0), (10, 2.0)]) is None
    assert bench.percentile([1.0, 2.0, 3.0, 4.0, 5.0], 0.95) == pytest.approx(4.8)
