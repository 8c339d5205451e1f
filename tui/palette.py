"""The command palette's chat commands, namespaced: "ledger: revoke a1", "gl: toggle", ..."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui.screens.chat import ChatScreen
from tui.widgets.prompt import MEMORY_MODES

Command = tuple[str, Callable[[], object], str]


class ChatCommands(Provider):
    """Every chat command the palette offers; ledger entries are listed by id."""

    def _chat(self) -> ChatScreen | None:
        screen = self.screen
        return screen if isinstance(screen, ChatScreen) else None

    def commands(self) -> list[Command]:
        chat = self._chat()
        if chat is None:
            return []
        run = chat.run_slash
        commands: list[Command] = [
            (
                "gl: toggle",
                lambda: run(f"/gl {'off' if chat.gl else 'on'}"),
                "Grounding Layer on or off",
            ),
            ("session: new", partial(run, "/new"), "end this session and start the next one"),
            (
                "session: new +14d",
                partial(run, "/new +14d"),
                "end this session and start the next one 14 days later",
            ),
            ("memory: clear", chat.clear_memory, "forget everything memory holds (not the ledger)"),
        ]
        commands += [
            (f"memory: {mode}", partial(run, f"/memory {mode}"), f"switch memory to {mode}")
            for mode in MEMORY_MODES
        ]
        commands += [
            ("ledger: show", partial(run, "/ledger"), "open the ledger panel and list it"),
            ("ledger: why", partial(run, "/why"), "explain the last gate decision"),
            ("ledger: export", partial(run, "/export"), "write ledger.json and ledger.md"),
        ]
        for entry in chat.snapshot.ledger if chat.snapshot else []:
            if entry.status != "confirmed":
                commands.append(
                    (
                        f"ledger: confirm {entry.id}",
                        partial(run, f"/confirm {entry.id}"),
                        entry.content,
                    )
                )
            if entry.status != "rejected":
                commands.append(
                    (
                        f"ledger: revoke {entry.id}",
                        partial(run, f"/revoke {entry.id}"),
                        entry.content,
                    )
                )
        for name in ("ledger", "gate", "memory", "actions"):
            commands.append(
                (f"panel: {name}", partial(chat.action_toggle_panel, name), f"show or hide {name}")
            )
        commands.append(("help: commands", partial(run, "/help"), "list the commands and keys"))
        return commands

    async def discover(self) -> Hits:
        for title, callback, help_text in self.commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback, help_text in self.commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
