"""The `grounding` command line: parses arguments, then imports only what a subcommand needs.

Textual is loaded only for `chat` (without --plain) and `demo`; `replay` and the
other headless commands never import it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version

import agent  # noqa: F401  (sets the offline switches before anything else loads)
from agent.locations import config_file
from agent.settings import Settings, SettingsError, load_settings
from agent.storage import StorageError
from ledger.store import LedgerStoreError

Handler = Callable[[argparse.Namespace], int]


def _version() -> str:
    try:
        return version("grounding")
    except PackageNotFoundError:  # running from a source tree without install
        return "0+unknown"


def _settings_from(args: argparse.Namespace) -> Settings:
    overrides = {
        key: getattr(args, key, None)
        for key in (
            "model",
            "memory",
            "gl",
            "profile",
            "ledger_writer",
            "chroma_url",
            "api_base",
            "llm_cache",
        )
    }
    return load_settings(overrides)


def _add_agent_flags(p: argparse.ArgumentParser, memory: bool = True) -> None:
    p.add_argument("--model", help="litellm model string, or 'reference' (offline default)")
    if memory:
        p.add_argument("--memory", choices=["none", "history", "chunks", "facts"])
    p.add_argument(
        "--gl",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="Grounding Layer on/off (default on)",
    )
    p.add_argument("--api-base", dest="api_base", help="OpenAI-compatible server URL")
    p.add_argument("--chroma-url", dest="chroma_url", help="Chroma server http://host:port")


def _cmd_chat(args: argparse.Namespace) -> int:
    settings = _settings_from(args)
    from agent.locations import profile_dir
    from agent.storage import check_profile

    # Before the agent's libraries load (seconds): a locked or damaged file fails fast.
    check_profile(profile_dir(settings.profile), settings.profile)
    if args.plain:
        from tui.plain import run_plain

        return run_plain(settings)
    from tui.app import run_app

    return run_app(settings)


def _cmd_demo(args: argparse.Namespace) -> int:
    settings = _settings_from(args)
    from tui.demo_app import run_demo

    return run_demo(
        settings, corpus_dir=args.scenarios, scenario_id=args.scenario, condition=args.condition
    )


def _cmd_classify(args: argparse.Namespace) -> int:
    settings = _settings_from(args)
    from tui.classify_cmd import run_classify

    return run_classify(args, settings)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="grounding",
        description=(
            "A terminal personal assistant that knows what it has actually agreed with you."
        ),
        epilog=(
            f"Config file: {config_file()} (moved by GROUNDING_HOME). "
            "Every setting also reads GROUNDING_<NAME> from the environment; "
            "flags override both."
        ),
    )
    parser.add_argument("--version", action="version", version=f"grounding {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    chat = sub.add_parser(
        "chat", help="chat with the assistant (Textual TUI, or --plain line REPL)"
    )
    _add_agent_flags(chat)
    chat.add_argument("--profile", help="profile name (default 'default')")
    chat.add_argument("--plain", action="store_true", help="line REPL on stdin/stdout (no TUI)")
    chat.add_argument(
        "--cache",
        dest="llm_cache",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="cache model responses in SQLite (default: the llm_cache setting, off)",
    )
    chat.set_defaults(handler=_cmd_chat)

    demo = sub.add_parser(
        "demo",
        help="one scenario's probe, Grounding Layer off and on side by side (Textual TUI)",
        description=(
            "Shows a scenario's history session by session, then sends its probe to two "
            "agents with the same model and memory: left GL off, right GL on. Without "
            "SCENARIO_ID, a list to choose from."
        ),
    )
    demo.add_argument("scenario", nargs="?", metavar="SCENARIO_ID", help="scenario id")
    demo.add_argument(
        "--condition",
        choices=list("NGIRS"),
        default="I",
        help="how the user answered the proposal in the history (default I: ignored)",
    )
    demo.add_argument(
        "--scenarios",
        metavar="DIR",
        help="corpus directory (default: the bundled corpus)",
    )
    demo.add_argument("--model", help="litellm model string, or 'reference' (offline default)")
    demo.add_argument("--memory", choices=["none", "history", "chunks", "facts"])
    demo.add_argument("--api-base", dest="api_base", help="OpenAI-compatible server URL")
    demo.set_defaults(handler=_cmd_demo)

    classify = sub.add_parser(
        "classify",
        help="label grounding acts in JSONL (assistant, user) lines; score them if labelled",
        description=(
            "Reads JSONL objects with 'assistant' and 'user' from --input or stdin and writes "
            "them to stdout with 'label' (and 'scope' for scoped) added. Per-label counts go "
            "to stderr; when the input carries a 'label', it is kept as 'gold' and the "
            "accuracy and a confusion matrix go to stderr too."
        ),
    )
    classify.add_argument("--input", metavar="FILE", help="JSONL file (default: stdin)")
    classify.add_argument(
        "--writer",
        dest="ledger_writer",
        choices=["rules", "llm"],
        help="grounding-act classifier (default: the ledger_writer setting, rules)",
    )
    classify.add_argument("--model", help="litellm model string for --writer llm")
    classify.add_argument("--api-base", dest="api_base", help="OpenAI-compatible server URL")
    classify.set_defaults(handler=_cmd_classify)

    from tui.bench_cmds import register as register_bench

    register_bench(sub)
    from tui.recover_cmd import register as register_recover

    register_recover(sub)
    for register in _EXTRA_COMMANDS:
        register(sub)
    return parser


# Subcommands that live in other modules register themselves here; each module is
# imported lazily by its handler, so `--help` stays fast.
_EXTRA_COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = []  # type: ignore[type-arg]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    try:
        return handler(args)
    except SettingsError as exc:
        print(f"grounding: {exc}", file=sys.stderr)
        return 2
    except (StorageError, LedgerStoreError) as exc:  # a profile file: locked, damaged, full
        print(f"grounding: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
