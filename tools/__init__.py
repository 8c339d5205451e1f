"""Tools the assistant can call: a world model, tool specs, a simulated toolbox, an action log.

Read-only tools answer from a `World`; side-effecting tools (rsvp, purchase, send) are
simulated and only append to an `ActionLog`. This package imports nothing else of ours.
"""

from tools.default_world import default_world
from tools.runtime import (
    ActionLog,
    ActionRecord,
    Toolbox,
    ToolCall,
    ToolError,
    ToolResult,
    args_match,
)
from tools.specs import (
    SIDE_EFFECTING,
    TOOL_SPECS,
    CheckCalendarArgs,
    FindDocumentsArgs,
    ListInvitationsArgs,
    LookupContactArgs,
    PurchaseArgs,
    ReadInboxArgs,
    RsvpArgs,
    SearchProductsArgs,
    SendArgs,
    ToolSpec,
    openai_tools,
)
from tools.world import (
    BusySlot,
    Calendar,
    Contact,
    Document,
    Email,
    Invitation,
    Product,
    World,
    load_world,
    save_world,
)

__all__ = [
    "SIDE_EFFECTING",
    "TOOL_SPECS",
    "ActionLog",
    "ActionRecord",
    "BusySlot",
    "Calendar",
    "CheckCalendarArgs",
    "Contact",
    "Document",
    "Email",
    "FindDocumentsArgs",
    "Invitation",
    "ListInvitationsArgs",
    "LookupContactArgs",
    "Product",
    "PurchaseArgs",
    "ReadInboxArgs",
    "RsvpArgs",
    "SearchProductsArgs",
    "SendArgs",
    "ToolCall",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "Toolbox",
    "World",
    "args_match",
    "default_world",
    "load_world",
    "openai_tools",
    "save_world",
]
