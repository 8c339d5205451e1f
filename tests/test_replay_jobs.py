"""`replay --jobs N`: worker processes give the run a one-job run gives; kill -9 and
--resume lose and duplicate nothing; a failed history is named; the response cache
switch (`--no-cache`) for replay, bench and chat against the fake model server."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.settings import load_settings
from scenarios.pool import HistoryTask, ReplayError, ReplayPool
from scenarios.replay import replay
from tests.conftest import cli_env
from tests.fakellm import FakeLLM
from tui.cli import main

CORPUS = Path(__file__).parent / "data" / "corpus_min"
GROUNDING = str(Path(sys.executable).parent / "grounding")
LIMIT = 2  # maya-v0 (7 probes) and maya-v1 (6 probes): one history per worker with --jobs 2
TOTAL = 13


def canonical(run: Path) -> list[str]:
    """Each probe's record as canonical JSON, in file order, without its timing."""
    out = []
    for line in (run / "trajectories.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record.pop("seconds")
        out.append(json.dumps(record, sort_keys=True))
    return out


def metrics(run: Path) -> dict[str, Any]:
    return json.loads((run / "metrics.json").read_text())


def complete_lines(path: Path) -> list[str]:
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8", errors="replace")
    return text.split("\n")[:-1]  # the part after the last newline may be torn


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An uninterrupted one-job run of the first two histories (reference policy)."""
    root = tmp_path_factory.mktemp("reference")
    with pytest.MonkeyPatch.context() as mp:
        for key in list(os.environ):
            if key.startswith("GROUNDING_"):
                mp.delenv(key)
        mp.setenv("GROUNDING_HOME", str(root / "home"))
        replay(CORPUS, root / "run", load_settings({}), limit=LIMIT)
    yield root / "run"


def test_reference_run_is_what_the_tests_expect(reference: Path) -> None:
    records = [json.loads(x) for x in canonical(reference)]
    assert len(records) == TOTAL
    assert [r["history_id"] for r in records] == ["maya-v0"] * 7 + ["maya-v1"] * 6


def test_two_jobs_give_the_one_job_run(reference: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    _, stats = replay(CORPUS, run, load_settings({}), limit=LIMIT, jobs=2)
    assert stats.jobs == 2 and stats.histories == 2 and stats.probes == TOTAL
    # Same records in the same (canonical) order, and the same metrics to the last digit.
    assert canonical(run) == canonical(reference)
    assert metrics(run) == metrics(reference)
    assert json.loads((run / "config.json").read_text())["jobs"] == 2
    assert not list(run.glob("work-*"))  # the worker profiles are gone


def test_jobs_must_be_positive(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for argv in (
        ["replay", "--scenarios", str(CORPUS), "--out", str(tmp_path), "--jobs", "0"],
        ["replay", "--scenarios", str(CORPUS), "--out", str(tmp_path), "--jobs", "-2"],
        ["bench", "--scenarios", str(CORPUS), "--out", str(tmp_path), "--jobs", "0"],
        ["replay", "--scenarios", str(CORPUS), "--out", str(tmp_path), "--max-model-calls", "0"],
    ):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        assert "must be 1 or more" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["replay", "--scenarios", str(CORPUS), "--out", str(tmp_path), "--jobs", "two"])
    assert "expected a whole number, got 'two'" in capsys.readouterr().err
    assert not (tmp_path / "trajectories.jsonl").exists()


def _start(run: Path, home: Path, jobs: int) -> subprocess.Popen[bytes]:
    argv = [GROUNDING, "replay", "--scenarios", str(CORPUS), "--out", str(run)]
    return subprocess.Popen(
        [*argv, "--limit", str(LIMIT), "--jobs", str(jobs)],
        env=cli_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, workers included
    )


def _wait_for_lines(proc: subprocess.Popen[bytes], traj: Path, n: int) -> None:
    deadline = time.monotonic() + 90
    while len(complete_lines(traj)) < n:
        assert proc.poll() is None, "the replay ended before it could be interrupted"
        assert time.monotonic() < deadline, "no trajectory lines in 90 s"
        time.sleep(0.02)


def _resume(run: Path, jobs: int, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    argv = ["replay", "--scenarios", str(CORPUS), "--out", str(run), "--limit", str(LIMIT)]
    assert main([*argv, "--jobs", str(jobs), "--resume"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(
    ("jobs", "resume_jobs"),
    [(2, 1), pytest.param(1, 2, marks=pytest.mark.slow)],
    ids=["killed-2-jobs", "killed-1-job"],
)
def test_kill_9_mid_run_then_resume_loses_and_duplicates_nothing(
    jobs: int,
    resume_jobs: int,
    reference: Path,
    tmp_path: Path,
    grounding_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = tmp_path / "run"
    traj = run / "trajectories.jsonl"
    proc = _start(run, grounding_home, jobs)
    try:
        _wait_for_lines(proc, traj, 2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the parent and every worker
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert not (run / "metrics.json").exists()
    written = [json.loads(x)["probe_id"] for x in complete_lines(traj)]
    assert 2 <= len(written) < TOTAL
    # As if it had died in the middle of writing the next record: a torn last line.
    missing = next(x for x in canonical(reference) if json.loads(x)["probe_id"] not in written)
    with traj.open("a", encoding="utf-8") as f:
        f.write(missing[: len(missing) // 2])

    out = _resume(run, resume_jobs, capsys)  # the number of jobs is no part of a run

    assert f"{TOTAL - len(written)} probes ({len(written)} resumed)" in out
    ids = [json.loads(x)["probe_id"] for x in canonical(run)]
    assert len(ids) == len(set(ids)) == TOTAL
    assert canonical(run) == canonical(reference)
    assert metrics(run) == metrics(reference)


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def _is_worker(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return False
    return b"spawn_main" in cmdline and b"resource_tracker" not in cmdline


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_a_dead_worker_fails_the_run_naming_its_history_and_resume_finishes_it(
    reference: Path, tmp_path: Path, grounding_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    traj = run / "trajectories.jsonl"
    proc = _start(run, grounding_home, 2)
    try:
        _wait_for_lines(proc, traj, 1)
        workers = [p for p in _children(proc.pid) if _is_worker(p)]
        assert len(workers) == 2
        os.kill(workers[0], signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    message = err.decode()
    assert proc.returncode == 1, message
    assert re.search(r"history maya-v[01]: its worker process died \(exit code -9\)", message)
    assert "run the same command with --resume to finish" in message
    assert not (run / "metrics.json").exists()
    written = len(complete_lines(traj))
    assert f"{written} of {TOTAL} probes are in" in message

    out = _resume(run, 2, capsys)

    assert f"({written} resumed)" in out
    assert canonical(run) == canonical(reference)
    assert metrics(run) == metrics(reference)


def test_an_exception_in_a_worker_names_the_history(tmp_path: Path) -> None:
    task = HistoryTask(
        corpus_dir=CORPUS,
        corpus_digest="0" * 64,  # not this corpus: the worker refuses to replay it
        history_id="maya-v1",
        probe_ids=("maya-v1/maya-ink-reorder/base",),
        settings=load_settings({}),
        home=tmp_path / "h",
        cache_path=None,
    )
    got: list[dict[str, Any]] = []
    with (
        ReplayPool(1) as pool,
        pytest.raises(
            ReplayError, match=r"^history maya-v1 failed in a worker: ReplayError: "
        ) as exc,
    ):
        pool.run([task], lambda _task, record: got.append(record))
    assert "the corpus changed while the run was going" in str(exc.value)
    assert "Traceback" in exc.value.details
    assert got == []


# --- resuming someone else's run is refused ------------------------------------------


def _replay_cli(run: Path, *extra: str, corpus: Path = CORPUS) -> list[str]:
    argv = ["replay", "--scenarios", str(corpus), "--out", str(run), "--limit", str(LIMIT)]
    return [*argv, *extra]


def test_resume_refuses_another_runs_directory(
    reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(reference, run)
    lines = (run / "trajectories.jsonl").read_text().splitlines()
    (run / "trajectories.jsonl").write_text("\n".join(lines[:5]) + "\n")
    before = (run / "trajectories.jsonl").read_bytes()
    capsys.readouterr()

    assert main(_replay_cli(run, "--resume", "--no-gl")) == 1
    err = capsys.readouterr().err
    assert "this run was started with other settings (gl was True, now False)" in err
    assert "cannot resume" in err

    assert main(_replay_cli(run, "--resume", "--memory", "none")) == 1
    assert "memory was 'chunks', now 'none'" in capsys.readouterr().err

    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS, corpus)
    scenario = corpus / "maya" / "maya-ink-reorder.yaml"
    scenario.write_text(scenario.read_text() + "\n# edited after the run started\n")
    assert main(_replay_cli(run, "--resume", corpus=corpus)) == 1
    assert "the corpus changed since this run started" in capsys.readouterr().err

    (run / "config.json").unlink()
    assert main(_replay_cli(run, "--resume")) == 1
    assert "no config.json" in capsys.readouterr().err
    # Nothing was touched by the refused attempts.
    assert (run / "trajectories.jsonl").read_bytes() == before


# --- the response cache ---------------------------------------------------------------


@pytest.fixture
def model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROUNDING_API_KEY", "sk-local")


def _model_replay(fake: FakeLLM, run: Path, *extra: str, limit: int = 1) -> int:
    """Replay the first `limit` histories with the fake model; the model requests it made."""
    before = len(fake.requests)
    argv = ["replay", "--scenarios", str(CORPUS), "--out", str(run), "--limit", str(limit)]
    assert main([*argv, "--model", "openai/fake", "--api-base", fake.url, *extra]) == 0
    return len(fake.requests) - before


def test_replay_caches_model_responses_unless_no_cache(
    model_env: None, tmp_path: Path, grounding_home: Path
) -> None:
    with FakeLLM() as fake:
        first = _model_replay(fake, tmp_path / "a")
        again = _model_replay(fake, tmp_path / "b")
        uncached = _model_replay(fake, tmp_path / "c", "--no-cache")
    assert first >= 7  # at least one decision per probe of maya-v0
    assert again == 0
    assert uncached == first
    assert (grounding_home / "cache" / "llm-cache.sqlite").is_file()
    assert canonical(tmp_path / "a") == canonical(tmp_path / "b") == canonical(tmp_path / "c")
    configs = [json.loads((tmp_path / r / "config.json").read_text()) for r in "abc"]
    assert [c["llm_cache"] for c in configs] == [True, True, False]


def test_chat_no_cache(
    model_env: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GROUNDING_LLM_CACHE", "true")  # the setting says cache
    with FakeLLM() as fake:
        counts = []
        for flag in ("--cache", "--cache", "--no-cache", "--no-cache"):
            monkeypatch.setattr(sys, "stdin", io.StringIO("hello there\n/quit\n"))
            before = len(fake.requests)
            argv = ["chat", "--plain", "--model", "openai/fake", "--api-base", fake.url]
            assert main([*argv, "--memory", "none", flag]) == 0
            counts.append(len(fake.requests) - before)
    assert counts == [1, 0, 1, 1]
    assert capsys.readouterr().out.count("[assistant] ok") == 4


@pytest.mark.slow
def test_max_model_calls_bounds_concurrent_calls_across_workers(
    model_env: None, tmp_path: Path
) -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0, "seen": 0}
    second = threading.Event()

    def responder(request: dict[str, Any]) -> str:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
            state["seen"] += 1
            first = state["seen"] == 1
        if first:  # hold the first call until another one arrives (or 15 s pass)
            second.wait(timeout=15)
        else:
            second.set()
        time.sleep(0.1)
        with lock:
            state["now"] -= 1
        return "ok"

    def reset() -> int:
        peak = state["peak"]
        state.update(now=0, peak=0, seen=0)
        second.clear()
        return peak

    with FakeLLM(responder=responder) as fake:
        bounded = _model_replay(
            fake, tmp_path / "a", "--jobs", "2", "--max-model-calls", "1", limit=2
        )
        bounded_peak = reset()
        cached = _model_replay(fake, tmp_path / "b", "--jobs", "2", limit=2)
        free = _model_replay(fake, tmp_path / "c", "--jobs", "2", "--no-cache", limit=2)
        free_peak = reset()
    assert bounded >= TOTAL and bounded_peak == 1
    assert cached == 0  # both workers read the cache the first run filled
    assert free == bounded and free_peak == 2  # without the bound the workers do overlap
    assert canonical(tmp_path / "a") == canonical(tmp_path / "b") == canonical(tmp_path / "c")


@pytest.mark.slow
def test_bench_with_two_jobs_gives_the_one_job_cells(
    reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench"
    argv = ["bench", "--scenarios", str(CORPUS), "--out", str(out), "--limit", str(LIMIT)]
    assert main([*argv, "--jobs", "2"]) == 0
    assert "matrix in" in capsys.readouterr().out
    # The chunks-gl-on cell is the reference run's configuration.
    assert canonical(out / "chunks-gl-on") == canonical(reference)
    assert metrics(out / "chunks-gl-on") == metrics(reference)
    for cell in ("none", "history", "chunks"):
        for gl in ("off", "on"):
            run = out / f"{cell}-gl-{gl}"
            assert len(canonical(run)) == TOTAL
            assert json.loads((run / "config.json").read_text())["jobs"] == 2
