"""The world the tools read: invitations, calendar, products, documents, inbox, contacts.

The models mirror the `world` block of a scenario file (SCENARIO_FORMAT.md). Field
names are the file's names; `from` is a Python keyword, so it is `from_` in code
and `from` on the wire (both are accepted on input, `from` is always written).
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

__all__ = [
    "BusySlot",
    "Calendar",
    "Contact",
    "Document",
    "Email",
    "Invitation",
    "Product",
    "World",
    "load_world",
    "save_world",
]


class _WorldModel(BaseModel):
    """Base for world entries: unknown keys are an error, `from` is the wire name."""

    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )


def _isoformat(value: Any) -> Any:
    # YAML turns unquoted `2027-01-15` and `2027-01-15 09:00:00` into date objects;
    # the world keeps times as the strings the author wrote.
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


TimeText = Annotated[str, BeforeValidator(_isoformat)]
"""A date or datetime kept as text; YAML date objects are turned back into ISO strings."""


class Invitation(_WorldModel):
    """An invitation waiting for an answer."""

    id: str
    from_: str = Field(alias="from")
    event: str
    when: TimeText


class BusySlot(_WorldModel):
    """A busy interval on the calendar (ISO date or datetime strings)."""

    start: TimeText
    end: TimeText
    title: str = ""


class Calendar(_WorldModel):
    """The user's calendar: only the busy slots matter."""

    busy: list[BusySlot] = Field(default_factory=list)


class Product(_WorldModel):
    """A product the user could buy."""

    id: str
    title: str
    price: float
    currency: str = "USD"
    attributes: dict[str, Any] = Field(default_factory=dict)


class Document(_WorldModel):
    """A document the user could send or consult."""

    id: str
    title: str
    body: str


class Email(_WorldModel):
    """A message in the user's inbox."""

    id: str
    from_: str = Field(alias="from")
    subject: str
    body: str


class Contact(_WorldModel):
    """Someone the user can write to."""

    name: str
    email: str
    relation: str = ""


class World(_WorldModel):
    """Everything the read-only tools can see and the side-effecting tools can name."""

    invitations: list[Invitation] = Field(default_factory=list)
    calendar: Calendar = Field(default_factory=Calendar)
    products: list[Product] = Field(default_factory=list)
    documents: list[Document] = Field(default_factory=list)
    inbox: list[Email] = Field(default_factory=list)
    contacts: list[Contact] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_ids(self) -> World:
        for key in ("invitations", "products", "documents", "inbox"):
            seen: set[str] = set()
            for entry in getattr(self, key):
                if entry.id in seen:
                    raise ValueError(f"{key}: duplicate id {entry.id!r}")
                seen.add(entry.id)
        return self

    def invitation(self, invitation_id: str) -> Invitation | None:
        """The invitation with this id, if any."""
        return next((i for i in self.invitations if i.id == invitation_id), None)

    def product(self, product_id: str) -> Product | None:
        """The product with this id, if any."""
        return next((p for p in self.products if p.id == product_id), None)

    def document(self, document_id: str) -> Document | None:
        """The document with this id, if any."""
        return next((d for d in self.documents if d.id == document_id), None)

    def email(self, email_id: str) -> Email | None:
        """The inbox message with this id, if any."""
        return next((e for e in self.inbox if e.id == email_id), None)

    def contact_by_email(self, email: str) -> Contact | None:
        """The contact with this address (case-insensitive), if any."""
        wanted = email.strip().lower()
        return next((c for c in self.contacts if c.email.lower() == wanted), None)

    def ids(self) -> set[str]:
        """Every id in the world: invitations, products, documents and inbox messages."""
        groups: list[list[Any]] = [self.invitations, self.products, self.documents, self.inbox]
        return {entry.id for group in groups for entry in group}


def load_world(path: str | Path) -> World:
    """Read a world from a JSON file."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return World.model_validate(data)


def save_world(world: World, path: str | Path) -> None:
    """Write a world as JSON, atomically (temp file in the same directory, then replace)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(world.model_dump(mode="json", by_alias=True), indent=2, ensure_ascii=False)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
