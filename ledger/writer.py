"""Ledger writer: after each session, turn the dialogue into ledger changes.

Security invariants, enforced here and tested:
- only user turns move an entry to confirmed / scoped / revised / rejected;
- an assistant turn can only create a `pending` proposal: it can never confirm
  its own proposal;
- the writer reads `Turn` objects only (user and assistant speech); tool results
  (emails, documents, invitations) are not turns and never reach it.

A one-time acceptance ("yes, just this once") is written as a single-use entry, not a
standing rule; the gate's `consume` uses it up with the one call it authorizes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from ledger.classifier import (
    Classification,
    action_type_of,
    detect_user_rule,
    kind_of,
    one_time_acceptance,
    reports_action,
)
from ledger.model import Act, Arrangement, Evidence, Proposer, Status, Turn
from ledger.scope import parse_scope
from ledger.store import Change, LedgerEvent, LedgerStore
from ledger.text import lexical_similarity, sentences

Similarity = Callable[[str, str], float]


class ReplyClassifier(Protocol):
    def classify_reply(self, assistant: str, user: str) -> Classification: ...


class RulesClassifier:
    """The default, offline classifier (ledger.classifier)."""

    name = "rules"

    def classify_reply(self, assistant: str, user: str) -> Classification:
        from ledger.classifier import classify_reply

        return classify_reply(assistant, user)


_STATUS_FOR_ACT = {
    Act.accept: Status.confirmed,
    Act.scoped: Status.scoped,
    Act.reject: Status.rejected,
    Act.implicit: Status.pending,
    Act.no_uptake: Status.pending,
}
ACTIVE = (Status.pending, Status.confirmed, Status.scoped)
# Acts a one-time acceptance can come with: the rules classifier reads "yes, just this once"
# as implicit (the standing rule is not accepted), another classifier may say accept.
_ONCE_ACTS = (Act.accept, Act.scoped, Act.implicit)


class LedgerWriter:
    """Writes ledger changes for one finished session, in one transaction."""

    def __init__(
        self,
        store: LedgerStore,
        classifier: ReplyClassifier | None = None,
        similarity: Similarity = lexical_similarity,
        related_threshold: float = 0.2,
    ) -> None:
        self.store = store
        self.classifier = classifier or RulesClassifier()
        self.similarity = similarity
        self.related_threshold = related_threshold

    @property
    def writer_name(self) -> str:
        return str(getattr(self.classifier, "name", "rules"))

    def process_session(self, turns: Sequence[Turn]) -> list[LedgerEvent]:
        """Classify the session's exchanges and commit the resulting changes atomically."""
        turns = [t for t in turns if t.speaker in ("user", "assistant")]
        if not turns:
            return []
        session_id, day = turns[0].session_id, turns[0].session_date
        pending: dict[str, Arrangement] = {}  # entries changed in this session, by id
        changes: list[Change] = []
        consumed: set[int] = set()

        def record(entry: Arrangement, reason: str, evidence: list[Evidence]) -> None:
            pending[entry.id] = entry
            changes.append(Change(arrangement=entry, reason=reason, evidence=evidence))

        for pos, turn in enumerate(turns):
            if turn.speaker == "assistant":
                reply = turns[pos + 1] if pos + 1 < len(turns) else None
                if reply is not None and reply.speaker != "user":
                    reply = None
                context = (
                    turns[pos - 1].text if pos > 0 and turns[pos - 1].speaker == "user" else ""
                )
                result = self._classify(turn.text, reply.text if reply else "")
                if result is None or result.act == Act.no_proposal or result.proposal is None:
                    continue
                if reply is not None:
                    consumed.add(pos + 1)
                later = [t for t in turns[pos + 2 :] if t.speaker == "assistant"]
                self._proposal(turn, reply, context, result, record, later)
            elif pos not in consumed:
                self._user_rule(turn, pending, record)
        if not changes:
            return []
        return self.store.apply(
            changes, writer=self.writer_name, session_id=session_id, session_date=day
        )

    # -- assistant proposals ------------------------------------------------------------

    def _classify(self, assistant: str, user: str) -> Classification | None:
        try:
            return self.classifier.classify_reply(assistant, user)
        except Exception:
            from ledger.classifier import detect_proposal

            proposal = detect_proposal(assistant)
            return Classification(Act.no_uptake, proposal=proposal) if proposal else None

    def _proposal(
        self,
        turn: Turn,
        reply: Turn | None,
        context: str,
        result: Classification,
        record: Callable[[Arrangement, str, list[Evidence]], None],
        later: Sequence[Turn] = (),
    ) -> None:
        assert result.proposal is not None
        evidence = [Evidence.quote(turn)] + ([Evidence.quote(reply)] if reply else [])
        act = result.act if reply is not None else Act.no_uptake
        base = Arrangement(
            id=self.store.new_id(),
            kind=result.proposal.kind,
            proposer=Proposer.assistant,
            action_type=result.proposal.action_type,
            content=result.proposal.text,
            status=Status.pending,
            evidence=evidence,
            context=context,
            created_at=turn.session_date,
            updated_at=turn.session_date,
        )
        if act == Act.revise and reply is not None:
            rule = result.revision or reply.text
            new = Arrangement(
                id=self.store.new_id(),
                kind=kind_of(rule),
                proposer=Proposer.user,
                action_type=_action_of(rule, base.action_type),
                content=rule,
                status=Status.confirmed,
                previous=base.id,
                evidence=[Evidence.quote(reply)],
                context=context,
                created_at=turn.session_date,
                updated_at=turn.session_date,
            )
            old = base.model_copy(update={"status": Status.revised, "superseded_by": new.id})
            record(old, "assistant proposal, revised by the user's reply", evidence)
            record(new, "the user's revised version of the proposal", [Evidence.quote(reply)])
            return
        if reply is not None and act in _ONCE_ACTS and one_time_acceptance(reply.text):
            self._single_use(base, turn, reply, result, record, later)
            return
        status = _STATUS_FOR_ACT.get(act, Status.pending)
        update: dict[str, object] = {"status": status}
        if status == Status.scoped and reply is not None:
            update["scope"] = parse_scope(
                reply.text, reply.session_date, result.scope, result.proposal.text
            )
        reasons = {
            Act.accept: "the user accepted the proposal",
            Act.scoped: "the user accepted the proposal within a scope",
            Act.reject: "the user declined the proposal",
            Act.implicit: "the user went on with the immediate task only; the standing rule "
            "was never accepted",
            Act.no_uptake: "the user did not take up the proposal",
        }
        record(base.model_copy(update=update), reasons.get(act, "assistant proposal"), evidence)

    def _single_use(
        self,
        base: Arrangement,
        turn: Turn,
        reply: Turn,
        result: Classification,
        record: Callable[[Arrangement, str, list[Evidence]], None],
        later: Sequence[Turn],
    ) -> None:
        """A one-time acceptance ("yes, just this once"): an entry that authorizes one call.

        When the session itself shows that call (the proposal turn goes ahead with the
        immediate task, or a later assistant turn reports doing it), the one time is used up
        already and the entry is written consumed: it authorizes nothing later.
        """
        assert result.proposal is not None
        action = result.proposal.action_type
        task = " ".join(s for s in sentences(turn.text) if s not in result.proposal.text)
        # The proposal turn's own task is the immediate instance of the rule, whatever its
        # wording ("I'll send them a yes" for an RSVP); later turns must be of the same kind.
        used = reports_action(task) or any(reports_action(t.text, action) for t in later)
        update: dict[str, object] = {
            "status": Status.scoped if result.act == Act.scoped else Status.confirmed,
            "single_use": True,
            "consumed": used,
        }
        if result.act == Act.scoped:
            update["scope"] = parse_scope(
                reply.text, reply.session_date, result.scope, result.proposal.text
            )
        reason = "the user accepted the proposal for one time only, not as a standing rule"
        if used:
            reason += "; that one time was used in the same session"
        record(base.model_copy(update=update), reason, base.evidence)

    # -- standing instructions from the user ----------------------------------------------

    def _user_rule(
        self,
        turn: Turn,
        pending: dict[str, Arrangement],
        record: Callable[[Arrangement, str, list[Evidence]], None],
    ) -> None:
        rule = detect_user_rule(turn.text)
        if rule is None:
            return
        action = action_type_of(rule)
        related = self._related(rule, action, pending)
        evidence = [Evidence.quote(turn)]
        new = Arrangement(
            id=self.store.new_id(),
            kind=kind_of(rule),
            proposer=Proposer.user,
            action_type=action if related is None else related.action_type,
            content=rule,
            status=Status.confirmed,
            previous=related.id if related else None,
            evidence=evidence,
            context=related.context if related else "",
            created_at=turn.session_date,
            updated_at=turn.session_date,
        )
        if related is not None:
            old = related.model_copy(
                update={
                    "status": Status.revised,
                    "superseded_by": new.id,
                    "updated_at": turn.session_date,
                    "evidence": [*related.evidence, *evidence],
                }
            )
            record(old, "replaced by a later instruction from the user", evidence)
            record(new, "the user's instruction replacing an earlier arrangement", evidence)
        else:
            record(new, "a standing instruction from the user", evidence)

    def _related(
        self, rule: str, action: object, pending: dict[str, Arrangement]
    ) -> Arrangement | None:
        current = {a.id: a for a in self.store.all()}
        current.update(pending)
        best, best_score = None, 0.0
        for entry in current.values():
            if entry.status not in ACTIVE or entry.superseded_by:
                continue
            if action not in (entry.action_type, "other") and entry.action_type != "other":
                continue
            score = self.similarity(rule, f"{entry.content} {entry.context}")
            if score > best_score:
                best, best_score = entry, score
        return best if best_score >= self.related_threshold else None


def _action_of(text: str, fallback: object) -> object:
    action = action_type_of(text)
    return fallback if action == "other" else action
