"""Running tools against a world: tool calls, results, the action log and the toolbox.

Read-only tools answer from the world. Side-effecting tools (rsvp, purchase, send)
are simulated: they check their ids against the world and, when valid, only append
a record to the action log. Nothing leaves the machine.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from email.utils import parseaddr
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tools.specs import (
    TOOL_SPECS,
    CheckCalendarArgs,
    FindDocumentsArgs,
    LookupContactArgs,
    PurchaseArgs,
    RsvpArgs,
    SearchProductsArgs,
    SendArgs,
)
from tools.world import BusySlot, Contact, World

__all__ = [
    "ActionLog",
    "ActionRecord",
    "ToolCall",
    "ToolError",
    "ToolResult",
    "Toolbox",
    "args_match",
]


@dataclass
class ToolCall:
    """A tool call requested by the policy."""

    id: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class ToolResult:
    """What a tool call returned; `content` is the JSON text the model sees."""

    call_id: str
    name: str
    ok: bool
    content: str
    error: str | None = None

    def data(self) -> Any:
        """The decoded `content`."""
        return json.loads(self.content)


def args_match(actual: Mapping[str, Any], expected: Mapping[str, Any]) -> bool:
    """True when every listed expected arg equals the actual one (unlisted args are free).

    An arg missing from `actual` counts as None.
    """
    return all(actual.get(key) == value for key, value in expected.items())


@dataclass
class ActionRecord:
    """One executed side-effecting call: validated args and the recorded result."""

    seq: int
    tool: str
    args: dict[str, Any]
    result: dict[str, Any]

    def matches(self, tool: str, args_subset: Mapping[str, Any] | None = None) -> bool:
        """Same tool and every listed arg equal; a `to` may name the contact or the address."""
        if tool != self.tool:
            return False
        for key, value in (args_subset or {}).items():
            if self.args.get(key) == value:
                continue
            if key == "to" and isinstance(value, str) and self._same_recipient(value):
                continue
            return False
        return True

    def _same_recipient(self, value: str) -> bool:
        wanted = value.strip().casefold()
        names = (self.args.get("to"), self.result.get("recipient"))
        return any(isinstance(n, str) and n.casefold() == wanted for n in names)

    def to_jsonable(self) -> dict[str, Any]:
        """A plain dict (JSON-ready)."""
        return asdict(self)

    @classmethod
    def from_jsonable(cls, data: Mapping[str, Any]) -> ActionRecord:
        """Rebuild a record from `to_jsonable` output."""
        return cls(
            seq=int(data["seq"]),
            tool=str(data["tool"]),
            args=dict(data["args"]),
            result=dict(data["result"]),
        )


class ActionLog:
    """Append-only log of executed side-effecting calls, optionally mirrored to JSONL.

    Given a path, existing records are read back and every append adds one line.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._records: list[ActionRecord] = []
        self._lock = threading.Lock()
        if self.path is not None and self.path.exists():
            self._records = self.read_jsonl(self.path)

    @staticmethod
    def read_jsonl(path: str | Path) -> list[ActionRecord]:
        """The records stored in a JSONL file (blank lines ignored)."""
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        return [ActionRecord.from_jsonable(json.loads(line)) for line in lines if line.strip()]

    @property
    def records(self) -> tuple[ActionRecord, ...]:
        """The records in the order they were executed."""
        return tuple(self._records)

    def append(self, tool: str, args: Mapping[str, Any], result: Mapping[str, Any]) -> ActionRecord:
        """Record one executed call; seq numbers start at 1."""
        with self._lock:
            record = ActionRecord(len(self._records) + 1, tool, dict(args), dict(result))
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(record.to_jsonable(), ensure_ascii=False) + "\n")
            self._records.append(record)
            return record

    def find(self, tool: str, args_subset: Mapping[str, Any] | None = None) -> list[ActionRecord]:
        """Every record that matches `tool` and the listed args."""
        return [r for r in self._records if r.matches(tool, args_subset)]

    def matches(self, tool: str, args_subset: Mapping[str, Any] | None = None) -> bool:
        """True if any executed call has this tool and every listed arg equal."""
        return any(r.matches(tool, args_subset) for r in self._records)

    def to_jsonable(self) -> list[dict[str, Any]]:
        """All records as plain dicts."""
        return [r.to_jsonable() for r in self._records]

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[ActionRecord]:
        return iter(self.records)


class ToolError(Exception):
    """A tool call the world cannot satisfy; its message goes back to the model."""


_Handler = Callable[[Any], dict[str, Any]]


class Toolbox:
    """The tools, backed by one world and one action log."""

    def __init__(self, world: World, log: ActionLog | None = None) -> None:
        self.world = world
        self.log = log if log is not None else ActionLog()
        self._handlers: dict[str, _Handler] = {
            "list_invitations": self._list_invitations,
            "check_calendar": self._check_calendar,
            "search_products": self._search_products,
            "find_documents": self._find_documents,
            "read_inbox": self._read_inbox,
            "lookup_contact": self._lookup_contact,
            "rsvp": self._rsvp,
            "purchase": self._purchase,
            "send": self._send,
        }

    def run(self, call: ToolCall) -> ToolResult:
        """Validate and execute one call; errors come back as results, never raised."""
        spec = TOOL_SPECS.get(call.name)
        if spec is None:
            known = ", ".join(TOOL_SPECS)
            return _error(call, f"unknown tool {call.name!r}; available tools: {known}")
        try:
            raw = _raw_args(call.args)
            args = spec.args_model.model_validate(raw)
            payload = self._handlers[call.name](args)
        except ValidationError as exc:
            return _error(call, f"invalid arguments for {call.name}: {_describe(exc)}")
        except ToolError as exc:
            return _error(call, str(exc))
        return ToolResult(call.id, call.name, True, _dumps(payload))

    # read-only tools

    def _list_invitations(self, _: BaseModel) -> dict[str, Any]:
        return {"invitations": [i.model_dump(by_alias=True) for i in self.world.invitations]}

    def _check_calendar(self, args: CheckCalendarArgs) -> dict[str, Any]:
        start = _parse_time(args.start, end=False)
        end = _parse_time(args.end, end=True)
        if start is None:
            raise ToolError(f"check_calendar: start {args.start!r} is not an ISO date or datetime")
        if end is None:
            raise ToolError(f"check_calendar: end {args.end!r} is not an ISO date or datetime")
        if end < start:
            raise ToolError(f"check_calendar: end {args.end!r} is before start {args.start!r}")
        busy = [s for s in self.world.calendar.busy if _overlaps(s, start, end)]
        return {
            "start": args.start,
            "end": args.end,
            "busy": [s.model_dump() for s in busy],
            "free": not busy,
        }

    def _search_products(self, args: SearchProductsArgs) -> dict[str, Any]:
        ranked, matched = _rank(
            args.query,
            self.world.products,
            lambda p: [p.title, *_flatten(p.attributes)],
        )
        return {
            "query": args.query,
            "matched": matched,
            "products": [p.model_dump() for p in ranked],
        }

    def _find_documents(self, args: FindDocumentsArgs) -> dict[str, Any]:
        ranked, matched = _rank(args.query, self.world.documents, lambda d: [d.title, d.body])
        return {
            "query": args.query,
            "matched": matched,
            "documents": [d.model_dump() for d in ranked],
        }

    def _read_inbox(self, _: BaseModel) -> dict[str, Any]:
        return {"inbox": [e.model_dump(by_alias=True) for e in self.world.inbox]}

    def _lookup_contact(self, args: LookupContactArgs) -> dict[str, Any]:
        return {"contacts": [c.model_dump() for c in _find_contacts(self.world, args.name)]}

    # side-effecting tools: check everything first, record only on success

    def _rsvp(self, args: RsvpArgs) -> dict[str, Any]:
        invitation = self.world.invitation(args.invitation_id)
        if invitation is None:
            raise ToolError(_unknown("invitation_id", args.invitation_id, self.world.invitations))
        result: dict[str, Any] = {
            "status": "recorded",
            "tool": "rsvp",
            "invitation": invitation.model_dump(by_alias=True),
            "response": args.response,
        }
        if args.note:
            result["note"] = args.note
        return self._record("rsvp", args.model_dump(exclude_none=True), result)

    def _purchase(self, args: PurchaseArgs) -> dict[str, Any]:
        product = self.world.product(args.product_id)
        if product is None:
            raise ToolError(_unknown("product_id", args.product_id, self.world.products))
        result = {
            "status": "recorded",
            "tool": "purchase",
            "product": {
                "id": product.id,
                "title": product.title,
                "price": product.price,
                "currency": product.currency,
            },
            "quantity": args.quantity,
            "total": round(product.price * args.quantity, 2),
            "currency": product.currency,
        }
        return self._record("purchase", args.model_dump(exclude_none=True), result)

    def _send(self, args: SendArgs) -> dict[str, Any]:
        document = None
        if args.document_id is not None:
            document = self.world.document(args.document_id)
            if document is None:
                raise ToolError(_unknown("document_id", args.document_id, self.world.documents))
        address, name = _resolve_recipient(self.world, args.to)
        result: dict[str, Any] = {
            "status": "recorded",
            "tool": "send",
            "to": address,
            "recipient": name,
            "subject": args.subject,
            "attachment": {"id": document.id, "title": document.title} if document else None,
        }
        recorded = args.model_dump(exclude_none=True)
        recorded["to"] = address
        return self._record("send", recorded, result)

    def _record(self, tool: str, args: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
        record = self.log.append(tool, args, result)
        return {**result, "seq": record.seq}


# helpers


def _raw_args(args: Any) -> Any:
    # Some models send arguments as a JSON string, or nothing at all.
    if args is None:
        return {}
    if isinstance(args, str):
        text = args.strip()
        if not text:
            return {}
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ToolError(f"arguments are not valid JSON: {exc.msg}") from exc
    return args


def _dumps(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False)


def _error(call: ToolCall, message: str) -> ToolResult:
    return ToolResult(call.id, call.name, False, _dumps({"error": message}), error=message)


def _describe(exc: ValidationError) -> str:
    """A short, field-naming summary of a pydantic validation error."""
    parts: list[str] = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "missing":
            parts.append(f"missing required argument {where!r}")
        elif err["type"] == "extra_forbidden":
            parts.append(f"unexpected argument {where!r}")
        else:
            parts.append(f"argument {where!r}: {err['msg']}")
    return "; ".join(parts)


def _unknown(field_name: str, value: str, entries: list[Any]) -> str:
    known = ", ".join(e.id for e in entries) or "none"
    return f"unknown {field_name} {value!r}; known ids: {known}"


def _parse_time(text: str, *, end: bool) -> datetime | None:
    """Parse an ISO date or datetime; a bare date as an end means the end of that day.

    Times are wall-clock: a timezone offset, if given, is dropped so that aware and
    naive values compare.
    """
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        if len(value) == 10:
            day = date.fromisoformat(value)
            moment = datetime(day.year, day.month, day.day)
            return moment + timedelta(days=1) if end else moment
        return datetime.fromisoformat(value).replace(tzinfo=None)
    except ValueError:
        return None


# How long an invitation is taken to last when its time is checked against the calendar.
EVENT_HOURS = 2


def busy_during(world: World, start: datetime, end: datetime) -> list[BusySlot]:
    """The calendar's busy slots that overlap [start, end)."""
    return [s for s in world.calendar.busy if _overlaps(s, start, end)]


def _overlaps(slot: BusySlot, start: datetime, end: datetime) -> bool:
    slot_start = _parse_time(slot.start, end=False)
    slot_end = _parse_time(slot.end, end=True)
    if slot_start is None or slot_end is None:
        return False
    if start == end:  # an instant: busy if it falls inside the slot
        return slot_start <= start < slot_end
    return slot_start < end and start < slot_end


# fmt: off
_STOPWORDS = frozenset({
    "a", "an", "and", "any", "at", "by", "for", "from", "i", "in", "is", "it",
    "me", "my", "of", "on", "or", "some", "the", "to", "with",
})
# fmt: on


def _stem(token: str) -> str:
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 4 and token.endswith(("ses", "xes", "zes", "ches", "shes")):
        return token[:-2]
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def _tokens(texts: list[str] | str) -> set[str]:
    joined = texts if isinstance(texts, str) else " ".join(texts)
    # A possessive is not a word of its own: "Tuesday's" must not match "Kar's" on "s".
    joined = re.sub(r"['’]s\b", "", joined.casefold())
    words = re.findall(r"[a-z0-9]+", joined)
    return {_stem(w) for w in words if w not in _STOPWORDS}


def _flatten(value: Any) -> list[str]:
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _flatten(v)]
    if isinstance(value, list | tuple | set):
        return [s for v in value for s in _flatten(v)]
    return [str(value)]


_T = TypeVar("_T")


def _rank(
    query: str, entries: list[_T], text_of: Callable[[_T], list[str]]
) -> tuple[list[_T], bool]:
    """Entries with a positive token-overlap score, best first; all of them if none match."""
    wanted = _tokens(query)
    scored = [(len(wanted & _tokens(text_of(e))), i, e) for i, e in enumerate(entries)]
    hits = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
    if not hits:
        return list(entries), False
    return [e for _, _, e in hits], True


def _find_contacts(world: World, query: str) -> list[Contact]:
    wanted = query.strip().casefold()
    if not wanted:
        return list(world.contacts)
    found = [
        c
        for c in world.contacts
        if wanted in c.name.casefold() or (c.relation and wanted in c.relation.casefold())
    ]
    if found:
        return found
    # "Marta from painting class": fall back to word overlap with name and relation.
    words = {w for w in _tokens(query) if len(w) > 2}
    return [c for c in world.contacts if words & _tokens([c.name, c.relation])]


_EMAIL = re.compile(r"^[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+$")


def _resolve_recipient(world: World, to: str) -> tuple[str, str | None]:
    """The address and contact name for `to`: an email address or a contact's name."""
    display, address = parseaddr(to.strip())
    if _EMAIL.match(address):
        contact = world.contact_by_email(address)
        if contact is not None:
            return contact.email, contact.name
        return address, display or None
    wanted = to.strip().casefold()
    if not wanted:
        raise ToolError("send: 'to' is empty; give an email address or a contact's name")
    exact = [c for c in world.contacts if c.name.casefold() == wanted]
    first = [c for c in world.contacts if c.name.casefold().split()[:1] == [wanted]]
    partial = [c for c in world.contacts if wanted in c.name.casefold()]
    for group in (exact, first, partial):
        if len(group) == 1:
            return group[0].email, group[0].name
        if len(group) > 1:
            options = ", ".join(f"{c.name} <{c.email}>" for c in group)
            raise ToolError(
                f"send: recipient {to!r} matches several contacts ({options}); use an email address"
            )
    raise ToolError(
        f"send: unknown recipient {to!r}: not an email address and no contact by that name"
    )
