"""`grounding recover ledger|memory|chat`: the way back from a damaged profile file.

Each moves the damaged file aside (it is kept, renamed ``*.damaged-STAMP``); for
the ledger, the copy saved at the start or end of the last chat takes its place.
Imports only the standard library and `agent.storage`: it runs in a fraction of a
second, even when the rest of the stack cannot load the profile.
"""

from __future__ import annotations

import argparse

from agent.locations import profile_dir
from agent.settings import load_settings


def run_recover(args: argparse.Namespace) -> int:
    from agent.storage import recover

    settings = load_settings({"profile": args.profile})
    print(recover(profile_dir(settings.profile), args.target, settings.profile))
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "recover",
        help="move a damaged ledger, memory index or chat session file aside (and restore "
        "the ledger's saved copy)",
        description=(
            "ledger: restore the copy of the ledger saved at the start or end of the last "
            "chat (changes made after it are lost). memory: start an empty memory index "
            "(past conversations are no longer recalled; the ledger is unchanged). chat: "
            "start a new chat session (the unfinished session's turns are lost). The "
            "damaged file is renamed *.damaged-STAMP, never deleted. Close every other "
            "grounding instance of the profile first."
        ),
    )
    p.add_argument("target", choices=["ledger", "memory", "chat"])
    p.add_argument("--profile", help="profile name (default 'default')")
    p.set_defaults(handler=run_recover)
