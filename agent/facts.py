"""Describe one tool call in words for the gate, from the world the tools read."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from ledger.scope import CallFacts, document_amount
from ledger.text import content_stems
from tools.runtime import EVENT_HOURS, ToolCall, busy_during
from tools.world import World


def _when(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", ""))
    except ValueError:
        return None


def call_facts(call: ToolCall, request: str, world: World, today: date) -> CallFacts:
    """Facts of a call: the chosen item in words, its amount and time, and its alternatives."""
    args = dict(call.args)
    facts = CallFacts(tool=call.name, args=args, request=request, today=today)
    if call.name == "rsvp":
        inv = world.invitation(str(args.get("invitation_id", "")))
        if inv is not None:
            facts.entity_text = f"{inv.from_} {inv.event} {inv.when}"
            facts.when = _when(inv.when)
            if facts.when is not None:
                # What the invitation clashes with is part of what the call is about ("your
                # rotation throws up these conflicts": a rule about shifts governs it).
                clashes = busy_during(world, facts.when, facts.when + timedelta(hours=EVENT_HOURS))
                if clashes:
                    facts.entity_text += " clashes with " + "; ".join(c.title for c in clashes)
            contact = next((c for c in world.contacts if c.name.lower() == inv.from_.lower()), None)
            facts.recipients = [inv.from_] + ([contact.relation] if contact else [])
            facts.competing = [
                f"{o.from_} {o.event} {o.when}" for o in world.invitations if o.id != inv.id
            ]
    elif call.name == "purchase":
        product = world.product(str(args.get("product_id", "")))
        if product is not None:
            qty = int(str(args.get("quantity", 1) or 1))
            attrs = " ".join(str(v) for v in product.attributes.values())
            facts.entity_text = f"{product.title} {attrs}"
            facts.amount = product.price * qty
            facts.currency = product.currency
            facts.quantity = qty
            req = content_stems(request)
            others = [p for p in world.products if p.id != product.id]
            similar = [p for p in others if content_stems(p.title) & req] or others
            facts.competing = [
                f"{p.title} {' '.join(str(v) for v in p.attributes.values())}" for p in similar
            ]
            facts.competing_amounts = [p.price * qty for p in similar]
    elif call.name == "send":
        to = str(args.get("to", ""))
        contacts = [
            c
            for c in world.contacts
            if c.email.lower() in to.lower() or c.name.lower() in to.lower()
        ]
        facts.recipients = [to] + [f"{c.name} {c.relation}" for c in contacts]
        doc = world.document(str(args.get("document_id") or ""))
        names = " ".join(f"{c.name} {c.relation} {c.email}" for c in contacts)
        facts.entity_text = f"{names} {doc.title if doc else ''} {args.get('subject', '')}"
        other_people = [
            f"{c.name} {c.relation} {c.email}" for c in world.contacts if c not in contacts
        ]
        facts.competing = list(other_people)
        facts.choices = [(names, other_people)]
        if doc is not None:
            # A quote or an invoice is for its total: a limit on amounts holds it to that.
            facts.amount = document_amount(f"{doc.title}. {doc.body}")
            other_docs = [d.title for d in world.documents if d.id != doc.id]
            facts.competing += other_docs
            facts.choices.append((doc.title, other_docs))
    return facts
