"""Handlers of the headless benchmark commands: validate, replay, bench, report. No Textual here."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def cmd_validate(args: argparse.Namespace) -> int:
    from scenarios.validate import format_report, validate_corpus

    report = validate_corpus(Path(args.dir))
    print(format_report(report))
    return 1 if report.errors else 0


def cmd_replay(args: argparse.Namespace) -> int:
    from agent.settings import load_settings
    from scenarios.histories import build_histories, render_transcript
    from scenarios.loader import CorpusError
    from scenarios.validate import load_valid_corpus

    try:
        corpus = load_valid_corpus(Path(args.scenarios))  # rules 1-6, as `validate`
    except CorpusError as exc:
        print(f"grounding: the corpus has errors, nothing replayed:\n{exc}", file=sys.stderr)
        return 1
    if args.dump_histories:
        for history in build_histories(corpus)[: args.limit or None]:
            print(render_transcript(history))
        return 0
    if not args.out:
        print("grounding: replay needs --out RUN_DIR", file=sys.stderr)
        return 2
    settings = load_settings(
        {
            "model": args.model,
            "memory": args.memory,
            "gl": args.gl,
            "ledger_writer": args.ledger_writer,
            "api_base": args.api_base,
            "chroma_url": args.chroma_url,
            "llm_cache": _cache_flag(args),
        }
    )
    from rich.progress import Progress

    from scenarios.replay import ReplayError, replay

    try:
        with Progress(transient=True) as progress:
            task = progress.add_task("probes", total=None)

            def tick(history: str, done: int, total: int) -> None:
                progress.update(task, completed=done, total=total, description=history)

            metrics, stats = replay(
                Path(args.scenarios),
                Path(args.out),
                settings,
                resume=args.resume,
                limit=args.limit,
                on_progress=tick,
                judge_model=args.judge_model,
                jobs=args.jobs,
                max_model_calls=args.max_model_calls,
                corpus=corpus,  # validated above: not loaded twice
            )
    except ReplayError as exc:
        _print_replay_error(exc)
        return 1
    keys = ("sensitivity", "selectivity", "fcg", "ue", "accuracy", "revision_accuracy")
    for key in keys:
        value = metrics[key]["value"]
        print(f"{key:>18}: {'n/a' if value is None else f'{value:.3f}'}")
    workers = f", summed over {stats.jobs} workers" if stats.jobs > 1 else ""
    print(
        f"{stats.probes} probes ({stats.skipped} resumed) in {stats.histories} histories; "
        f"ingest {stats.ingest_s:.1f}s, probes {stats.probe_s:.1f}s{workers}; "
        f"wall {stats.seconds:.1f}s. Run: {args.out}"
    )
    return 0


def _cache_flag(args: argparse.Namespace) -> bool:
    """Replay and bench cache model responses unless --no-cache: a re-run costs no calls."""
    return True if args.llm_cache is None else bool(args.llm_cache)


def _print_replay_error(exc: Exception) -> None:
    details = getattr(exc, "details", "")
    if details:
        print(details.rstrip(), file=sys.stderr)
    print(f"grounding: {exc}", file=sys.stderr)


def _positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    """--jobs, --max-model-calls and --cache/--no-cache, shared by replay and bench."""
    p.add_argument(
        "--jobs",
        type=_positive_int,
        default=1,
        metavar="N",
        help="replay N histories at once in worker processes (default 1: in this process)",
    )
    p.add_argument(
        "--max-model-calls",
        dest="max_model_calls",
        type=_positive_int,
        metavar="K",
        help="at most K model calls in flight across the workers (default: one per worker)",
    )
    p.add_argument(
        "--cache",
        dest="llm_cache",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="cache model responses in SQLite under the cache dir (default on here)",
    )


def cmd_bench(args: argparse.Namespace) -> int:
    from scenarios.bench import Config, bench
    from scenarios.loader import CorpusError
    from scenarios.validate import load_valid_corpus

    try:
        load_valid_corpus(Path(args.scenarios))  # rules 1-6, as `validate`
    except CorpusError as exc:
        print(f"grounding: the corpus has errors, nothing replayed:\n{exc}", file=sys.stderr)
        return 1
    from rich.progress import Progress

    from scenarios.replay import ReplayError

    try:
        with Progress(transient=True) as progress:
            task = progress.add_task("bench", total=None)

            def tick(config: Config, history: str, done: int, total: int) -> None:
                progress.update(task, completed=done, total=total, description=config.name)

            result = bench(
                Path(args.scenarios),
                Path(args.out),
                model=args.model or "reference",
                overrides={
                    "api_base": args.api_base,
                    "chroma_url": args.chroma_url,
                    "llm_cache": _cache_flag(args),
                },
                limit=args.limit,
                on_progress=tick,
                jobs=args.jobs,
                max_model_calls=args.max_model_calls,
            )
    except ReplayError as exc:
        _print_replay_error(exc)
        return 1
    for cell in result.cells:
        m = cell.metrics
        values = "  ".join(
            f"{key} {'n/a' if m[key]['value'] is None else format(m[key]['value'], '.2f')}"
            for key in ("sensitivity", "selectivity", "fcg", "ue", "accuracy")
        )
        print(f"{cell.config.name:>16}: {values}  ({cell.seconds:.1f}s)")
    print(f"matrix in {result.seconds:.1f}s. Report: {result.report}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from scenarios.report import compare_table, load_run, report_json

    try:
        runs = [load_run(Path(d)) for d in args.run_dirs]
    except (OSError, ValueError) as exc:
        print(f"grounding: {exc}", file=sys.stderr)
        return 1
    if args.format == "json":
        print(json.dumps(report_json(runs), indent=2, sort_keys=True, default=str))
    else:
        print(compare_table(runs))
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add validate, replay, bench and report to the `grounding` parser."""
    v = sub.add_parser("validate", help="check a scenario corpus against the format")
    v.add_argument("dir")
    v.set_defaults(handler=cmd_validate)

    r = sub.add_parser("replay", help="replay benchmark histories through the agent")
    r.add_argument("--scenarios", required=True, help="corpus directory")
    r.add_argument("--out", help="run directory to write")
    r.add_argument("--model")
    r.add_argument("--memory", choices=["none", "history", "chunks", "facts"])
    r.add_argument("--gl", action=argparse.BooleanOptionalAction, default=None)
    r.add_argument("--ledger-writer", dest="ledger_writer", choices=["rules", "llm"])
    _add_run_flags(r)
    r.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted run (same corpus and settings): only missing probes run",
    )
    r.add_argument("--limit", type=int, help="only the first N histories")
    r.add_argument("--api-base", dest="api_base")
    r.add_argument(
        "--judge-model",
        dest="judge_model",
        help="litellm model that also labels each move (silent, flagged, confirm, ask_open)",
    )
    r.add_argument("--chroma-url", dest="chroma_url")
    r.add_argument(
        "--dump-histories", action="store_true", help="print the histories as transcripts"
    )
    r.set_defaults(handler=cmd_replay)

    b = sub.add_parser("bench", help="replay the memory x Grounding Layer matrix")
    b.add_argument("--scenarios", required=True, help="corpus directory")
    b.add_argument("--out", required=True, help="directory for the run directories and report")
    b.add_argument("--model", help="litellm model string (facts memory needs one)")
    b.add_argument("--limit", type=int, help="only the first N histories")
    b.add_argument("--api-base", dest="api_base")
    b.add_argument("--chroma-url", dest="chroma_url")
    _add_run_flags(b)
    b.set_defaults(handler=cmd_bench)

    p = sub.add_parser("report", help="compare replay runs")
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    p.add_argument("--format", choices=["md", "json"], default="md")
    p.set_defaults(handler=cmd_report)
