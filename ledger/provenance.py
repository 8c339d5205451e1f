"""Provenance check: details a call relies on must come from the user, not only from me.

For a call the gate allowed, the details that tell the chosen item apart from the
alternatives (an edition, a recipient, a response) and that the current request
does not state must appear in a user turn of the most similar exchanges, in the user
turn an arrangement was made after, in a confirmed entry, or in a tool result the user
asked for. A detail that only an assistant turn ever said makes the gate ask.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ledger.model import Arrangement, Status
from ledger.scope import CallFacts
from ledger.text import content_stems


@dataclass(frozen=True)
class ProvenanceResult:
    ok: bool
    unsupported: list[str]
    reason: str


# A machine timestamp ("2026-07-26T12:00") in an item's description is not a detail anyone
# said: its pieces ("00") would be read as words.
# Nor is a clock time ("10:00-16:00").
_TIMESTAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b|\b\d{1,2}:\d{2}\b")


def _stems(text: str) -> set[str]:
    return content_stems(_TIMESTAMP.sub(" ", text))


def _said(text: str) -> set[str]:
    """Stems of what a turn says, a hyphenated word also as its parts: "send the
    full-resolution file" says "full" and "resolution"."""
    return content_stems(text) | content_stems(text.replace("-", " "))


def distinguishing_details(facts: CallFacts) -> set[str]:
    """Stems of the chosen item that its alternatives do not share, minus what the request says."""
    details: set[str] = set()
    asked = content_stems(facts.request)
    pairs = facts.choice_pairs()
    # An invitation the request picks out itself ("the dinner dance in Manchester" among
    # the Association's invitations): its other words describe the event, they are not
    # what the call rests on. (An item to buy is another matter: the request may name the
    # book while the edition, the detail that matters, came from me.)
    if facts.tool == "rsvp" and any(
        len(_stems(chosen) & asked) > max(len(_stems(c) & asked) for c in competitors)
        for chosen, competitors in pairs
    ):
        return set()
    for chosen_text, competitors in pairs:
        others: set[str] = set()
        for c in competitors:
            others |= _stems(c)
        details |= _stems(chosen_text) - others
    return details - asked


def check_provenance(
    facts: CallFacts,
    exchanges: Sequence[tuple[str, str]],
    entries: Sequence[Arrangement],
) -> ProvenanceResult:
    """`exchanges`: (speaker, text) turns of the six most similar exchanges of the dialogue."""
    details = distinguishing_details(facts)
    if not details:
        return ProvenanceResult(True, [], "every detail is in the request")
    user_text: set[str] = set()
    assistant_text: set[str] = set()
    for speaker, text in exchanges:
        if speaker == "user":
            user_text |= _said(text)
        else:
            assistant_text |= content_stems(text)
    agreed: set[str] = set()
    for e in entries:
        # What the user had said just before an arrangement was made is the user's own
        # word ("Denise sent an invite for the KRVR potluck"), whatever became of it.
        user_text |= _said(e.context)
        if e.status in (Status.confirmed, Status.scoped):
            # What the user accepted includes the details of the turn that proposed it.
            agreed |= _said(e.content)
            for ev in e.evidence:
                agreed |= _said(ev.text)
    grounded = details & (user_text | agreed)
    if grounded:
        return ProvenanceResult(True, [], f"'{', '.join(sorted(grounded))}' comes from you")
    only_me = sorted(details & assistant_text)
    if only_me:
        return ProvenanceResult(
            False, only_me, f"only I ever said '{', '.join(only_me)}': asking first"
        )
    return ProvenanceResult(True, [], "no assistant-only detail")
