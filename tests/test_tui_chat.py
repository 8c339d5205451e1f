"""The chat screen under Pilot: every binding, slash command and panel, asserted on the app's
messages and widgets.

The agent is real (reference policy, a temp GROUNDING_HOME). Where a test needs a gate
decision of a particular kind, it hands the screen a synthetic `TurnResult`, so the test
does not depend on the wording choices of the reference policy; the approval is then run
through the real session's toolbox and ledger.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Markdown, Static

from agent.context import ToolStep
from agent.factory import TurnResult
from agent.locations import profile_dir
from agent.memory import MemoryItem
from agent.settings import Settings, load_settings
from ledger.model import (
    ActionType,
    Arrangement,
    Decision,
    Evidence,
    GateResult,
    Proposer,
    Scope,
    Status,
)
from ledger.store import Change, LedgerStore
from tools.runtime import ToolCall, ToolResult
from tui.app import GroundingApp, make_app
from tui.palette import ChatCommands
from tui.screens.chat import ChatScreen, Snapshot
from tui.screens.confirm import ConfirmScreen
from tui.widgets.conversation import AssistantTurn, Note, SessionDivider, ToolCard, UserTurn
from tui.widgets.decision import DecisionCard
from tui.widgets.ledger_panel import LedgerPanel
from tui.widgets.prompt import PromptInput, SlashError, SlashSuggester, parse_slash

DAY1 = date(2026, 5, 4)
DAY2 = date(2026, 5, 18)
MARTA = "Marta invited me to her studio open house. Please RSVP yes."
SAM = "Sam invited me to board game night."


# -- helpers ------------------------------------------------------------------------------


def settings(**overrides: Any) -> Settings:
    return load_settings({"memory": "none", **overrides})


async def settle(pilot: Pilot[Any], timeout: float = 60.0) -> None:
    """Wait until the session is loaded and every queued job has finished."""
    chat = pilot.app.screen_stack[0]
    assert isinstance(chat, ChatScreen)
    waited = 0.0
    while chat.busy and chat.load_error is None:
        await pilot.pause(0.02)
        waited += 0.02
        if waited > timeout:
            raise TimeoutError(f"still busy: {chat.activity!r}")
    await pilot.pause()


async def say(pilot: Pilot[Any], text: str) -> None:
    """Type a message (set in one go: typing key by key is slow) and send it with enter."""
    prompt = pilot.app.screen.query_one("#prompt", PromptInput)
    prompt.focus()
    prompt.value = text
    await pilot.press("enter")
    await settle(pilot)


def of_type(messages: list[Message], cls: type[Message]) -> list[Any]:
    """Messages of one type, once each (the hook sees a bubbling message at every node)."""
    seen: dict[int, Message] = {}
    for m in messages:
        if isinstance(m, cls):
            seen.setdefault(id(m), m)
    return list(seen.values())


def quote(text: str, speaker: str = "user", day: date = DAY1, index: int = 1) -> Evidence:
    return Evidence(
        session_id="default-s001",
        session_date=day,
        turn_index=index,
        speaker=speaker,  # type: ignore[arg-type]
        text=text,
    )


def seed_ledger(home: Path | None = None) -> None:
    """A ledger with every status, written before the app starts."""
    path = (home or profile_dir("default")) / "ledger.sqlite"
    proposal = "Want me to RSVP yes to invitations like this whenever you're free from now on?"

    def entry(id: str, status: Status, content: str, **kw: Any) -> Arrangement:
        fields: dict[str, Any] = {
            "id": id,
            "proposer": Proposer.assistant,
            "action_type": ActionType.rsvp,
            "content": content,
            "status": status,
            "created_at": DAY1,
            "updated_at": DAY1,
            "evidence": [quote(content, "assistant", index=1), quote("Sounds good.", index=2)],
        }
        fields.update(kw)
        return Arrangement.model_validate(fields)

    entries = [
        entry(
            "a1",
            Status.pending,
            proposal,
            evidence=[
                quote(f"Done: RSVPed yes to inv-marta-openhouse. {proposal}", "assistant"),
                quote("How long do I boil an egg?", index=2),
            ],
        ),
        entry(
            "a2",
            Status.confirmed,
            "Buy the paperback edition when there is a choice",
            proposer=Proposer.user,
            action_type=ActionType.purchase,
        ),
        entry(
            "a3",
            Status.scoped,
            "Send documents to Priya as PDF attachments",
            action_type=ActionType.send,
            scope=Scope(text="only work documents", categories=["work"]),
        ),
        entry(
            "a4",
            Status.revised,
            "Decline work meetings after 6pm",
            superseded_by="a5",
            kind="convention",
        ),
        entry("a5", Status.confirmed, "Decline work meetings after 7pm", previous="a4"),
        entry(
            "a6",
            Status.rejected,
            "Reorder coffee beans every month",
            action_type=ActionType.purchase,
        ),
    ]
    with LedgerStore(path) as store:
        store.apply(
            [Change(e, "seeded for the test", e.evidence) for e in entries],
            writer="rules",
            session_id="default-s001",
            session_date=DAY1,
        )


def blocked_turn(entry_id: str | None = "a1") -> TurnResult:
    """A turn whose rsvp the gate held back (confirm), with one read-only step before it."""
    args = {"invitation_id": "inv-sam-games", "response": "yes"}
    gate = GateResult(
        decision=Decision.confirm,
        reason="I proposed this on 2026-05-04 but you never accepted it",
        tool="rsvp",
        args=args,
        entry_id=entry_id,
        evidence=[
            quote("Want me to RSVP yes to invitations like this from now on?", "assistant"),
            quote("How long do I boil an egg?", index=2),
        ],
    )
    listing = json.dumps({"invitations": [{"id": "inv-sam-games"}, {"id": "inv-dana-potluck"}]})
    steps = [
        ToolStep(
            ToolCall("call_0", "list_invitations", {}),
            ToolResult("call_0", "list_invitations", True, listing),
        ),
        ToolStep(ToolCall("call_1", "rsvp", args), None, gate),
    ]
    recalled = [
        MemoryItem(
            text=f"User: {MARTA}\nAssistant: Done: RSVPed yes to inv-marta-openhouse.",
            session_id="default-s001",
            session_date=DAY1,
            speakers=["user", "assistant"],
            turns=[],
            score=0.42,
            kind="exchange",
        )
    ]
    return TurnResult(
        request=SAM,
        reply="Before I do that: I proposed this on 2026-05-04 but you never accepted it. "
        "Should I go ahead?",
        steps=steps,
        recalled=recalled,
        ledger_ids=["a1"],
    )


async def hand_turn(pilot: Pilot[Any], result: TurnResult) -> None:
    """Show a synthetic turn as if the agent had produced it."""
    chat = chat_of(pilot)
    assert chat.session is not None
    chat.conversation.add_user(result.request)
    chat.post_message(ChatScreen.TurnCompleted(result, Snapshot.of(chat.session)))
    await pilot.pause()
    await pilot.pause()


def chat_of(pilot: Pilot[Any]) -> ChatScreen:
    app = pilot.app
    assert isinstance(app, GroundingApp)
    return app.chat


@pytest.fixture
def run_app() -> Iterator[Callable[..., GroundingApp]]:
    """Build apps for a test and close their sessions afterwards."""
    apps: list[GroundingApp] = []

    def build(s: Settings | None = None, today: date = DAY1) -> GroundingApp:
        app = make_app(s or settings(), today=today)
        apps.append(app)
        return app

    yield build
    for app in apps:
        app.close_session()


def texts(pilot: Pilot[Any], cls: type[Static]) -> list[str]:
    return [str(w.render()) for w in pilot.app.screen.query(cls)]


# -- start ----------------------------------------------------------------------------------


async def test_first_frame_then_the_session_loads(run_app: Callable[..., GroundingApp]) -> None:
    app = run_app()
    messages: list[Message] = []
    async with app.run_test(size=(100, 30), message_hook=messages.append) as pilot:
        chat = chat_of(pilot)
        assert chat.session is None  # painted before the agent is built
        welcome = chat.query_one("#welcome", Static)
        assert "Say hello to your assistant" in str(welcome.render())
        assert isinstance(app.focused, Input) and app.focused.id == "prompt"
        await settle(pilot)
        ready = of_type(messages, ChatScreen.SessionReady)
        assert len(ready) == 1 and ready[0].snapshot.session_date == DAY1
        assert chat.title == "reference · memory none · GL on"
        assert chat.sub_title == "profile default · 2026-05-04"
        assert [d.number for d in chat.query(SessionDivider)] == [1]
        assert "starting" not in chat.activity


async def test_a_message_shows_tool_cards_a_markdown_reply_and_the_gate(
    run_app: Callable[..., GroundingApp],
) -> None:
    app = run_app()
    messages: list[Message] = []
    async with app.run_test(size=(100, 30), message_hook=messages.append) as pilot:
        await settle(pilot)
        await pilot.press(*"hi", "enter")
        await settle(pilot)
        await say(pilot, MARTA)
        await say(pilot, "/why")
        assert texts(pilot, Note)[-1].startswith("allow: rsvp")
        sent = [m.text for m in of_type(messages, PromptInput.Sent)]
        assert sent == ["hi", MARTA, "/why"]
        turns = of_type(messages, ChatScreen.TurnCompleted)
        assert len(turns) == 2
        chat = chat_of(pilot)
        assert [str(u.render()) for u in chat.query(UserTurn)] == ["hi", MARTA]
        replies = list(chat.query(AssistantTurn))
        assert replies[-1].text == turns[-1].result.reply
        assert replies[-1].query_one(Markdown)
        cards = [c.step.call.name for c in chat.query(ToolCard)]
        assert "rsvp" in cards
        rsvp = next(c for c in chat.query(ToolCard) if c.step.call.name == "rsvp")
        assert "invitation_id=inv-marta-openhouse" in str(rsvp.render())
        assert "recorded" in str(rsvp.render())
        # the gate panel has the allow decision; the actions panel the executed call
        gate_cards = list(chat.query_one("#gate-panel").query(DecisionCard))
        assert [c.gate.decision for c in gate_cards] == [Decision.allow]
        actions = chat.query_one("#actions-table", DataTable)
        assert actions.row_count == 1
        assert "inv-marta-openhouse" in str(actions.get_row_at(0)[1])


async def test_new_session_writes_the_ledger_and_draws_a_divider(
    run_app: Callable[..., GroundingApp],
) -> None:
    app = run_app()
    messages: list[Message] = []
    async with app.run_test(size=(100, 30), message_hook=messages.append) as pilot:
        await settle(pilot)
        await say(pilot, MARTA)
        await say(pilot, "How long do I boil an egg?")
        await say(pilot, "/new +14d")
        done = of_type(messages, ChatScreen.CommandDone)
        assert [d.command for d in done] == ["/new"] and done[0].new_session
        assert any("a1 → pending" in line for line in done[0].notes)
        chat = chat_of(pilot)
        assert [(d.number, d.day) for d in chat.query(SessionDivider)][-1] == (2, DAY2)
        assert chat.sub_title.endswith("2026-05-18")
        table = chat.query_one("#ledger-table", DataTable)
        assert table.row_count == 1
        row = table.get_row_at(0)
        assert row[0] == "a1" and "pending" in str(row[1]) and row[2] == "assistant"


async def test_a_resumed_session_shows_its_turns(
    run_app: Callable[..., GroundingApp], grounding_home: Path
) -> None:
    from agent.session import ChatSession

    first = ChatSession(settings(), today=DAY1)
    first.send("Hello there")
    first.release()  # the process "died" without ending the session
    app = run_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert texts(pilot, UserTurn) == ["Hello there"]
        assert len(chat_of(pilot).query(AssistantTurn)) == 1


# -- ledger panel ---------------------------------------------------------------------------


async def test_ledger_panel_select_shows_evidence_and_history_then_confirm_and_revoke(
    run_app: Callable[..., GroundingApp],
) -> None:
    seed_ledger()
    app = run_app()
    messages: list[Message] = []
    async with app.run_test(size=(100, 30), message_hook=messages.append) as pilot:
        await settle(pilot)
        chat = chat_of(pilot)
        panel = chat.query_one(LedgerPanel)
        assert not panel.display  # narrow: panels are closed until asked for
        await pilot.press("ctrl+l")
        assert panel.display and chat.show_ledger
        assert not chat.query_one("#conversation").display  # in its place, not over it
        table = panel.table
        assert app.focused is table
        assert [table.get_row_at(i)[0] for i in range(table.row_count)] == [
            "a1",
            "a2",
            "a3",
            "a4",
            "a5",
            "a6",
        ]
        assert "scope: only work documents" in str(table.get_row_at(2)[4])
        await pilot.press("enter")
        await pilot.pause()
        assert of_type(messages, LedgerPanel.EntrySelected)[-1].entry_id == "a1"
        detail = str(chat.query_one("#ledger-detail-text", Static).render())
        assert "Evidence" in detail and 'user: "How long do I boil an egg?"' in detail
        assert "History" in detail and "#1 2026-05-04 rules: create → pending" in detail
        await pilot.press("down", "down", "down", "enter")  # a4, revised by a5
        await pilot.pause()
        detail = str(chat.query_one("#ledger-detail-text", Static).render())
        assert "Revision chain: a4 (revised) → a5 (confirmed)" in detail
        await pilot.press("up", "up", "up", "c")
        await settle(pilot)
        assert of_type(messages, LedgerPanel.ConfirmRequested)[-1].entry_id == "a1"
        assert chat.session is not None
        store = chat.session.agent.store
        entry = store.get("a1")
        assert entry is not None and entry.status == Status.confirmed
        assert entry.evidence[-1].text == "[TUI] confirmed a1"
        assert store.events("a1")[-1].writer == "tui"
        assert "confirmed" in str(table.get_row_at(0)[1])
        await pilot.press("r")
        await settle(pilot)
        assert of_type(messages, LedgerPanel.RevokeRequested)[-1].entry_id == "a1"
        entry = store.get("a1")
        assert entry is not None and entry.status == Status.rejected
        await pilot.press("enter")
        await pilot.pause()
        detail = str(chat.query_one("#ledger-detail-text", Static).render())
        assert "tui: update → confirmed" in detail and "tui: update → rejected" in detail
        await pilot.press("ctrl+l")
        assert not panel.display and chat.query_one("#conversation").display
        assert isinstance(app.focused, PromptInput)


# -- slash commands -------------------------------------------------------------------------


async def test_slash_commands(run_app: Callable[..., GroundingApp], grounding_home: Path) -> None:
    seed_ledger()
    app = run_app()
    messages: list[Message] = []
    async with app.run_test(size=(100, 30), message_hook=messages.append) as pilot:
        await settle(pilot)
        chat = chat_of(pilot)
        session = chat.session
        assert session is not None

        await say(pilot, "/gl off")
        assert session.agent.settings.gl is False and not chat.gl
        assert "GL off" in chat.title
        await say(pilot, "/gl on")
        assert session.agent.settings.gl is True and "GL on" in chat.title

        await say(pilot, "/memory history")
        assert session.agent.settings.memory == "history"
        assert "memory history" in chat.title

        await say(pilot, "/help")
        assert "/export" in texts(pilot, Note)[-1] and "ctrl+l" in texts(pilot, Note)[-1]

        await say(pilot, "/why")
        assert texts(pilot, Note)[-1] == "No gate decision yet in this session."

        await say(pilot, "/ledger")
        assert chat.show_ledger
        listing = texts(pilot, Note)[-1]
        assert "a1 pending assistant rsvp" in listing and "(scope: only work documents)" in listing
        await pilot.press("escape")
        assert isinstance(app.focused, PromptInput)
        chat.show_ledger = False

        await say(pilot, "/confirm a3")
        await say(pilot, "/revoke a2")
        store = session.agent.store
        assert store.get("a3").status == Status.confirmed  # type: ignore[union-attr]
        assert store.get("a2").status == Status.rejected  # type: ignore[union-attr]

        await say(pilot, "/export")
        home = profile_dir("default")
        doc = json.loads((home / "ledger.json").read_text(encoding="utf-8"))
        assert len(doc["arrangements"]) == 6
        assert "| a3 | confirmed |" in (home / "ledger.md").read_text(encoding="utf-8")
        assert str(home / "ledger.json") in texts(pilot, Note)[-1]

        await say(pilot, "/model reference")
        ready = of_type(messages, ChatScreen.SessionReady)
        assert [r.reason for r in ready] == ["start", "model"]
        assert chat.session is not session and chat.session is not None
        assert chat.session.agent.settings.memory == "history"  # other settings kept
        assert "the session was rebuilt" in texts(pilot, Note)[-1]

        done = [m.command for m in of_type(messages, ChatScreen.CommandDone)]
        assert done == ["/memory", "/confirm", "/revoke", "/export"]

        await say(pilot, "/bogus")
        assert texts(pilot, Note)[-1] == "unknown command /bogus; /help lists them"
        await say(pilot, "/gl maybe")
        assert texts(pilot, Note)[-1] == "use /gl on or /gl off"


async def test_slash_quit_leaves(run_app: Callable[..., GroundingApp]) -> None:
    app = run_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"/quit", "enter")
        await pilot.pause()
    assert app.return_code == 0


def test_parse_slash() -> None:
    assert parse_slash("/new +14d").days == 14
    assert parse_slash("/new").days == 0
    assert parse_slash("/revoke a3").arg == "a3"
    for bad, why in [
        ("/new tomorrow", "+14d"),
        ("/memory lots", "none|history"),
        ("/model", "NAME"),
        ("/confirm", "ID"),
        ("/nope", "unknown"),
    ]:
        with pytest.raises(SlashError, match=why.replace("|", r"\|").replace("+", r"\+")):
            parse_slash(bad)


async def test_slash_suggester_completes_commands_and_entry_ids() -> None:
    suggester = SlashSuggester(lambda: ["a1", "a12", "a2"])
    assert await suggester.get_suggestion("/g") == "/gl "
    assert await suggester.get_suggestion("/gl o") == "/gl on"
    assert await suggester.get_suggestion("/memory c") == "/memory chunks"
    assert await suggester.get_suggestion("/new ") == "/new +14d"
    assert await suggester.get_suggestion("/revoke a") == "/revoke a1"
    assert await suggester.get_suggestion("/revoke a2") is None  # complete already
    assert await suggester.get_suggestion("/ex") == "/export"
    assert await suggester.get_suggestion("hello") is None


async def accept_suggestion(pilot: Pilot[Any], prompt: PromptInput, expected: str) -> None:
    """Press right (accepts the suggestion) once the suggester's worker has answered."""
    for _ in range(200):
        await pilot.press("right")
        if prompt.value == expected:
            return
        await pilot.pause(0.02)
    raise AssertionError(f"{prompt.value!r} never completed to {expected!r}")


async def test_completion_history_and_multiline_paste(
    run_app: Callable[..., GroundingApp],
) -> None:
    seed_ledger()
    app = run_app()
    messages: list[Message] = []
    async with app.run_test(size=(100, 30), message_hook=messages.append) as pilot:
        await settle(pilot)
        prompt = pilot.app.screen.query_one(PromptInput)
        await pilot.press(*"/rev")
        await accept_suggestion(pilot, prompt, "/revoke ")
        await pilot.press("a")
        await accept_suggestion(pilot, prompt, "/revoke a1")
        prompt.value = ""
        await say(pilot, "/why")
        await say(pilot, "/help")
        await pilot.press("up")
        assert prompt.value == "/help"
        await pilot.press("up")
        assert prompt.value == "/why"
        await pilot.press("up")  # stays on the oldest
        assert prompt.value == "/why"
        await pilot.press("down", "down")
        assert prompt.value == ""  # back to the (empty) draft
        prompt.post_message(events.Paste("first line\nsecond line"))
        await pilot.pause()
        assert prompt.value == "first line↵second line"
        await pilot.press("enter")
        await settle(pilot)
        assert of_type(messages, PromptInput.Sent)[-1].text == "first line\nsecond line"
        assert texts(pilot, UserTurn)[-1] == "first line\nsecond line"
        await pilot.press("up")
        assert prompt.value == "first line↵second line"


# -- the gate and approval cards -------------------------------------------------------------


@pytest.mark.parametrize(("key", "choice"), [("y", "once"), ("a", "standing"), ("n", "declined")])
async def test_approval_card_keys(
    run_app: Callable[..., GroundingApp], key: str, choice: str
) -> None:
    seed_ledger()
    app = run_app()
    messages: list[Message] = []
    async with app.run_test(size=(140, 40), message_hook=messages.append) as pilot:
        await settle(pilot)
        chat = chat_of(pilot)
        assert chat.check_action("focus_approval", ()) is False  # nothing waits yet
        await hand_turn(pilot, blocked_turn("a1"))
        cards = [c for c in chat.query(DecisionCard) if c.approval is not None]
        assert len(cards) == 2  # in the conversation and in the gate panel
        assert cards[0].approval is cards[1].approval
        assert chat.check_action("focus_approval", ()) is True
        await pilot.press("ctrl+o")
        focused = app.focused
        assert isinstance(focused, DecisionCard) and focused.parent is chat.conversation
        await pilot.press(key)
        await settle(pilot)
        answered = of_type(messages, DecisionCard.Answered)
        assert [a.choice for a in answered] == [choice]
        assert all(c.approval is not None and c.approval.outcome == choice for c in cards)
        assert all(c.has_class("-answered") for c in cards)
        assert isinstance(app.focused, PromptInput)
        assert chat.session is not None
        records = chat.session.agent.actions.records
        entry = chat.session.agent.store.get("a1")
        assert entry is not None
        if choice == "declined":
            assert records == ()
            assert "was not run" in texts(pilot, Note)[-1]
            assert entry.status == Status.pending
        else:
            assert [(r.tool, r.args["invitation_id"]) for r in records] == [
                ("rsvp", "inv-sam-games")
            ]
            done = of_type(messages, ChatScreen.CommandDone)[-1]
            assert done.command == "approve" and done.step is not None
            assert done.step.result is not None and done.step.result.ok
            assert chat.query(ToolCard).last().step.call.name == "rsvp"
            assert chat.query_one("#actions-table", DataTable).row_count == 1
            expected = Status.confirmed if choice == "standing" else Status.pending
            assert entry.status == expected
        # answered cards take no more keys
        assert chat.check_action("focus_approval", ()) is False
        assert cards[0].check_action("answer", ("once",)) is False


async def test_approve_and_make_standing_without_an_entry_creates_a_user_rule(
    run_app: Callable[..., GroundingApp],
) -> None:
    app = run_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await hand_turn(pilot, blocked_turn(None))
        chat = chat_of(pilot)
        await pilot.press("ctrl+o", "a")
        await settle(pilot)
        assert chat.session is not None
        (entry,) = chat.session.agent.store.all()
        assert entry.proposer == Proposer.user and entry.status == Status.confirmed
        assert entry.content == "RSVP yes to invitations like this one without asking"
        assert entry.context == SAM
        assert chat.query_one("#ledger-table", DataTable).row_count == 1


async def test_approval_card_buttons_and_the_gate_panel_card(
    run_app: Callable[..., GroundingApp],
) -> None:
    seed_ledger()
    app = run_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await hand_turn(pilot, blocked_turn("a1"))
        chat = chat_of(pilot)
        gate_card = chat.query_one("#gate-panel").query(DecisionCard).last()
        assert gate_card.approval is not None
        reason = str(gate_card.query_one(".decision-reason", Static).render())
        assert "never accepted it" in reason and "entry a1" in reason
        quotes = [str(q.render()) for q in gate_card.query(".decision-quote").results(Static)]
        assert quotes[-1] == '> 2026-05-04 · user: "How long do I boil an egg?"'
        await pilot.click(gate_card.query_one("#declined"))
        await pilot.pause()
        assert gate_card.approval.outcome == "declined"
        assert not gate_card.query_one(".decision-buttons").display


async def test_approval_at_narrow_width_opens_the_gate_panel(
    run_app: Callable[..., GroundingApp],
) -> None:
    app = run_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await hand_turn(pilot, blocked_turn(None))
        chat = chat_of(pilot)
        chat.show_memory = True  # the conversation is out of view: the gate panel card is used
        await pilot.pause()
        await pilot.press("ctrl+o")
        assert chat.show_gate
        focused = app.focused
        assert isinstance(focused, DecisionCard) and focused.parent is not chat.conversation
        await pilot.press("y")
        await settle(pilot)
        assert chat.session is not None and len(chat.session.agent.actions.records) == 1


# -- panels -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "name"),
    [("ctrl+l", "ledger"), ("ctrl+g", "gate"), ("ctrl+r", "memory"), ("ctrl+t", "actions")],
)
async def test_panel_keys_toggle_and_show_in_the_footer(
    run_app: Callable[..., GroundingApp], key: str, name: str
) -> None:
    app = run_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        chat = chat_of(pilot)
        panel = chat.query_one(f"#{name}-panel")
        before = panel.display
        assert before == (name in ("ledger", "gate"))  # wide: ledger and gate open
        await pilot.press(key)
        await pilot.pause()
        assert panel.display is (not before) and getattr(chat, f"show_{name}") is (not before)
        await pilot.press(key)
        await pilot.pause()
        assert panel.display is before
        bindings = {b.binding.id: b.binding for b in app.active_bindings.values()}
        binding = bindings[f"panel.{name}"]
        assert binding.show and binding.tooltip and binding.key == key


async def test_memory_panel_shows_what_recall_returned(
    run_app: Callable[..., GroundingApp],
) -> None:
    app = run_app(settings(memory="chunks"))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await say(pilot, MARTA)
        await say(pilot, "/new +14d")
        await say(pilot, SAM)
        chat = chat_of(pilot)
        await pilot.press("ctrl+r")
        text = str(chat.query_one("#memory-text", Static).render())
        assert f"recalled for: {SAM}" in text
        assert "2026-05-04 · " in text and "Marta invited me" in text


async def test_memory_panel_lists_items_of_a_turn(run_app: Callable[..., GroundingApp]) -> None:
    app = run_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await hand_turn(pilot, blocked_turn())
        text = str(chat_of(pilot).query_one("#memory-text", Static).render())
        assert "1. 2026-05-04 · user, assistant · exchange · 0.42" in text


# -- palette ----------------------------------------------------------------------------------


async def test_palette_offers_namespaced_commands(run_app: Callable[..., GroundingApp]) -> None:
    seed_ledger()
    app = run_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        provider = ChatCommands(chat_of(pilot))
        titles = [title for title, _, _ in provider.commands()]
        for wanted in (
            "ledger: revoke a1",
            "ledger: confirm a1",
            "memory: clear",
            "gl: toggle",
            "session: new +14d",
            "ledger: export",
            "panel: gate",
        ):
            assert wanted in titles
        assert "ledger: confirm a2" not in titles  # already confirmed
        assert "ledger: revoke a6" not in titles  # already rejected
        assert all(": " in t for t in titles)


async def palette(pilot: Pilot[Any], query: str) -> None:
    """Open the command palette, type a query, wait for hits and run the first one."""
    from textual.command import CommandList

    await pilot.press("ctrl+p")
    await pilot.press(*query)
    for _ in range(200):
        await pilot.pause(0.02)
        if pilot.app.screen.query_one(CommandList).option_count:
            break
    await pilot.press("enter")


async def test_palette_runs_gl_toggle_and_session_new(
    run_app: Callable[..., GroundingApp],
) -> None:
    app = run_app()
    messages: list[Message] = []
    async with app.run_test(size=(100, 30), message_hook=messages.append) as pilot:
        await settle(pilot)
        chat = chat_of(pilot)
        await palette(pilot, "gl: toggle")
        await pilot.pause()
        assert chat.gl is False and "GL off" in chat.title
        await palette(pilot, "session: new +14d")
        await settle(pilot)
        assert [m.command for m in of_type(messages, ChatScreen.CommandDone)] == ["/new"]
        assert chat.snapshot is not None and chat.snapshot.session_date == DAY2


async def test_palette_memory_clear_asks_first(run_app: Callable[..., GroundingApp]) -> None:
    from agent.session import ChatSession

    first = ChatSession(settings(memory="chunks"), today=DAY1)
    first.send("Hello there")
    first.close()  # remembered: one record in memory
    app = run_app(settings(memory="chunks"))
    messages: list[Message] = []
    async with app.run_test(size=(100, 30), message_hook=messages.append) as pilot:
        await settle(pilot)
        chat = chat_of(pilot)
        assert chat.session is not None and chat.session.agent.memory.count() > 0
        chat.clear_memory()
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        assert chat.session.agent.memory.count() > 0
        chat.clear_memory()
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        assert chat.session.agent.memory.count() == 0
        assert of_type(messages, ChatScreen.CommandDone)[-1].command == "memory clear"
        assert "records forgotten" in texts(pilot, Note)[-1]


# -- errors -----------------------------------------------------------------------------------


async def test_agent_errors_are_notified_and_logged_never_a_crash(
    run_app: Callable[..., GroundingApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = run_app()
    messages: list[Message] = []
    async with app.run_test(size=(140, 40), message_hook=messages.append) as pilot:
        await settle(pilot)
        chat = chat_of(pilot)
        assert chat.session is not None

        def boom(text: str) -> TurnResult:
            raise RuntimeError("the model server is down")

        monkeypatch.setattr(chat.session, "send", boom)
        await say(pilot, "hello")
        assert app.is_running
        notes = [m.notification for m in of_type(messages, Notify)]
        assert any("the model server is down" in n.message and n.severity == "error" for n in notes)
        errors = [str(w.render()) for w in chat.query(".decision-card.-error").results(Static)]
        assert errors and "RuntimeError: the model server is down" in errors[-1]
        assert "thinking failed" in texts(pilot, Note)[-1]
        monkeypatch.undo()
        await say(pilot, "/confirm a9")  # an unknown entry: same path, still running
        assert "no ledger entry 'a9'" in texts(pilot, Note)[-1]
        await say(pilot, "hello again")
        assert len(chat.query(AssistantTurn)) == 1


async def test_a_failed_start_is_reported(
    run_app: Callable[..., GroundingApp], grounding_home: Path
) -> None:
    bad = profile_dir("default") / "ledger.sqlite"
    bad.write_text("not a database", encoding="utf-8")
    app = run_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        chat = chat_of(pilot)
        assert (
            chat.load_error is not None and "is damaged (file is not a database)" in chat.load_error
        )
        await say(pilot, "hello")
        assert "the agent did not start" in texts(pilot, Note)[-1]
        assert app.is_running


# -- layout -----------------------------------------------------------------------------------


def _overlap(a: Any, b: Any) -> bool:
    return bool(a.region.intersection(b.region).area)


@pytest.mark.parametrize("panel_key", [None, "ctrl+l", "ctrl+g"])
async def test_80x24_layout_collapses_rather_than_overlaps(
    run_app: Callable[..., GroundingApp], panel_key: str | None
) -> None:
    seed_ledger()
    app = run_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await hand_turn(pilot, blocked_turn())
        chat = chat_of(pilot)
        if panel_key:
            await pilot.press(panel_key)
            await pilot.pause()
        parts = [
            chat.query_one("Header"),
            chat.query_one("#main"),
            chat.query_one("#prompt"),
            chat.query_one("Footer"),
        ]
        for i, a in enumerate(parts):
            assert a.region.area > 0, a
            for b in parts[i + 1 :]:
                assert not _overlap(a, b), (a, b)
        conversation = chat.query_one("#conversation")
        sidebar = chat.query_one("#sidebar")
        if panel_key is None:
            assert conversation.region.width >= 76 and not sidebar.display
        else:
            assert not conversation.display and sidebar.region.width >= 76
        shown = [w for w in (conversation, sidebar) if w.display]
        assert len(shown) == 1 and chat.query_one("#main").region.contains_region(shown[0].region)
        assert chat.query_one("#prompt").region.height == 3


async def test_wide_layout_puts_panels_beside_the_conversation(
    run_app: Callable[..., GroundingApp],
) -> None:
    app = run_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        chat = chat_of(pilot)
        conversation = chat.query_one("#conversation")
        ledger = chat.query_one("#ledger-panel")
        gate = chat.query_one("#gate-panel")
        assert conversation.region.width >= 60
        assert not _overlap(conversation, ledger) and not _overlap(ledger, gate)
        assert ledger.region.x >= conversation.region.right


# -- quitting ---------------------------------------------------------------------------------


async def test_ctrl_q_quits_and_the_session_is_saved(grounding_home: Path) -> None:
    app = make_app(settings(), today=DAY1)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await say(pilot, MARTA)
        await say(pilot, "How long do I boil an egg?")
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0
    lines = app.close_session()
    assert any(line.startswith("[ledger] a1 -> pending") for line in lines)
    from agent.session import ChatSession

    again = ChatSession(settings())
    assert again.session_no == 2 and again.turns() == []
    assert [a.id for a in again.ledger()] == ["a1"]
    again.close()


def test_bindings_have_ids_and_tooltips() -> None:
    from textual.binding import Binding

    from tui.screens.confirm import ConfirmScreen
    from tui.widgets.decision import DecisionCard

    for owner in (GroundingApp, ChatScreen, LedgerPanel, DecisionCard, PromptInput, ConfirmScreen):
        for binding in owner.BINDINGS:
            assert isinstance(binding, Binding)
            assert binding.id and binding.tooltip, (owner, binding)
