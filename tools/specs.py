"""Tool specifications: names, descriptions, pydantic argument models, OpenAI schemas."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "SIDE_EFFECTING",
    "TOOL_SPECS",
    "CheckCalendarArgs",
    "FindDocumentsArgs",
    "ListInvitationsArgs",
    "LookupContactArgs",
    "PurchaseArgs",
    "ReadInboxArgs",
    "RsvpArgs",
    "SearchProductsArgs",
    "SendArgs",
    "ToolSpec",
    "openai_tools",
]


class _Args(BaseModel):
    """Base for tool arguments: unknown arguments are an error."""

    model_config = ConfigDict(extra="forbid")


class ListInvitationsArgs(_Args):
    """No arguments."""


class CheckCalendarArgs(_Args):
    """A time range to check."""

    start: str = Field(description="Start of the range, ISO date or datetime (2027-01-15T18:00).")
    end: str = Field(
        description="End of the range, ISO date or datetime; a date means the whole day."
    )


class SearchProductsArgs(_Args):
    """A product search."""

    query: str = Field(description="Words describing the product.")


class FindDocumentsArgs(_Args):
    """A document search."""

    query: str = Field(description="Words from the document's title or content.")


class ReadInboxArgs(_Args):
    """No arguments."""


class LookupContactArgs(_Args):
    """A contact search."""

    name: str = Field(description="The person's name, or a relation such as 'coworker'.")


class RsvpArgs(_Args):
    """An answer to an invitation."""

    invitation_id: str = Field(description="Id of the invitation, from list_invitations.")
    response: Literal["yes", "no", "maybe"] = Field(description="The answer.")
    note: str | None = Field(default=None, description="Optional short message to the host.")


class PurchaseArgs(_Args):
    """An order for a product."""

    product_id: str = Field(description="Id of the product, from search_products.")
    quantity: int = Field(default=1, ge=1, le=100, description="How many to buy.")


class SendArgs(_Args):
    """An email to send."""

    to: str = Field(description="Recipient email address, or a contact's name.")
    subject: str = Field(description="Subject line.")
    body: str = Field(description="Message text.")
    document_id: str | None = Field(
        default=None, description="Optional id of a document to attach, from find_documents."
    )


@dataclass(frozen=True)
class ToolSpec:
    """One tool: what the model is told about it and how its arguments are checked."""

    name: str
    description: str
    args_model: type[BaseModel]
    side_effecting: bool

    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments, cleaned for function calling."""
        return _clean_schema(self.args_model.model_json_schema())

    def openai(self) -> dict[str, Any]:
        """The OpenAI function-calling entry for this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters(),
            },
        }


_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "list_invitations",
        "List the invitations waiting for an answer (id, from, event, when).",
        ListInvitationsArgs,
        side_effecting=False,
    ),
    ToolSpec(
        "check_calendar",
        "Check the user's calendar between start and end; returns the busy slots that "
        "overlap the range and whether the user is free.",
        CheckCalendarArgs,
        side_effecting=False,
    ),
    ToolSpec(
        "search_products",
        "Search the shop for products matching a query; returns id, title, price, "
        "currency and attributes, best matches first.",
        SearchProductsArgs,
        side_effecting=False,
    ),
    ToolSpec(
        "find_documents",
        "Search the user's documents by title and content; best matches first.",
        FindDocumentsArgs,
        side_effecting=False,
    ),
    ToolSpec(
        "read_inbox",
        "Read the messages in the user's inbox.",
        ReadInboxArgs,
        side_effecting=False,
    ),
    ToolSpec(
        "lookup_contact",
        "Find contacts by name or relation; returns name, email and relation.",
        LookupContactArgs,
        side_effecting=False,
    ),
    ToolSpec(
        "rsvp",
        "Answer an invitation on the user's behalf (yes, no or maybe), with an optional note.",
        RsvpArgs,
        side_effecting=True,
    ),
    ToolSpec(
        "purchase",
        "Buy a product on the user's behalf.",
        PurchaseArgs,
        side_effecting=True,
    ),
    ToolSpec(
        "send",
        "Send an email on the user's behalf, optionally attaching a document.",
        SendArgs,
        side_effecting=True,
    ),
)

TOOL_SPECS: dict[str, ToolSpec] = {spec.name: spec for spec in _SPECS}
"""All tools by name: read-only first, then side-effecting, in a stable order."""

SIDE_EFFECTING: frozenset[str] = frozenset(s.name for s in _SPECS if s.side_effecting)
"""The consequential tools: the ones the execution gate checks."""


def openai_tools(names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """OpenAI function-calling schemas for the named tools (all tools when None).

    Raises KeyError for an unknown name.
    """
    selected = list(TOOL_SPECS) if names is None else list(names)
    return [TOOL_SPECS[name].openai() for name in selected]


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's `title` noise and collapse `X | None` to X (the arg stays optional)."""
    cleaned = _clean_node(schema)
    cleaned.pop("description", None)  # the args model's docstring; the tool's description says it
    cleaned.setdefault("properties", {})
    cleaned["type"] = "object"
    return cleaned


def _clean_node(node: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    collapsed = False
    for key, value in node.items():
        if key == "title":
            continue
        if key == "properties" and isinstance(value, dict):
            # Keys here are argument names (one could be called "title"): keep them all.
            out[key] = {name: _clean_node(prop) for name, prop in value.items()}
        elif key == "anyOf" and isinstance(value, list):
            options = [_clean_node(v) for v in value if v != {"type": "null"}]
            if len(options) == 1 and len(options) < len(value):
                out.update(options[0])
                collapsed = True
            else:
                out[key] = options
        elif isinstance(value, dict):
            out[key] = _clean_node(value)
        elif isinstance(value, list):
            out[key] = [_clean_node(v) if isinstance(v, dict) else v for v in value]
        else:
            out[key] = value
    if collapsed and "default" in out and out["default"] is None:
        # A null default next to a non-null type confuses strict schema checkers.
        del out["default"]
    return out
