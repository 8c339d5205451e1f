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

import math
import re
import unicodedata
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
from ledger.model import Act, Arrangement, Evidence, Proposer, Scope, Status, Turn
from ledger.scope import parse_scope
from ledger.store import Change, LedgerEvent, LedgerStore
from ledger.text import content_stems, normalize, sentences, stem

Similarity = Callable[[str, str], float]


class ReplyClassifier(Protocol):
    def classify_reply(self, assistant: str, user: str) -> Classification: ...


class RulesClassifier:
    """The default, offline classifier (ledger.classifier)."""

    name = "rules"

    def __init__(
        self, meaning: Similarity | None = None, acceptance: Similarity | None = None
    ) -> None:
        # Meaning similarity (the agent passes MiniLM's cosine): a plain statement on the
        # proposal's own subject that the rules leave pending is read as an acceptance.
        self.meaning = meaning
        # P(accept | proposal, reply) from the reply model: a second reading of a reply the
        # rules leave pending (see classify_reply).
        self.acceptance = acceptance

    def classify_reply(self, assistant: str, user: str) -> Classification:
        from ledger.classifier import classify_reply

        return classify_reply(assistant, user, self.meaning, self.acceptance)


_STATUS_FOR_ACT = {
    Act.accept: Status.confirmed,
    Act.scoped: Status.scoped,
    Act.reject: Status.rejected,
    Act.implicit: Status.pending,
    Act.no_uptake: Status.pending,
}
ACTIVE = (Status.pending, Status.confirmed, Status.scoped)
# What a user's later instruction may replace: any current entry, a declined one too. A
# declined proposal the user later gives a rule about ("Stop buying the big packs of stall
# stuff without checking", after a reply the writer read as no) is the one that rule is
# about; leaving it out hands the rule to the next closest entry, which it then wrongly
# replaces.
REPLACEABLE = (*ACTIVE, Status.rejected)
# Words of any standing instruction; they do not tell which arrangement one is about.
INSTRUCTION_WORDS = frozenset(
    "ask check first now forward going future here on from onward anymore more time every "
    "each always never stop don't do doing just please rule new instead default standard "
    "want need like me my you your i we us our yourself own automatically autopilot "
    "before again keep let let's make sure thing things stuff about rethink rethinking "
    "change changing approach put down mark maybe yes no accept decline say answer reply "
    "respond send forward order buy get pick invite invitation rsvp those them these it "
    "that this one ones".split()
)
INSTRUCTION_STEMS = frozenset(stem(w) for w in INSTRUCTION_WORDS)
# The words of what to do; when no topic word is shared they are the next best clue.
ACTION_STEMS = frozenset(
    stem(w)
    for w in "rsvp automatically autopilot accept decline say answer reply respond send "
    "forward order buy get pick invite invitation mark put".split()
)
# Acts a one-time acceptance can come with: the rules classifier reads "yes, just this once"
# as implicit (the standing rule is not accepted), another classifier may say accept.
_ONCE_ACTS = (Act.accept, Act.scoped, Act.implicit)


class LedgerWriter:
    """Writes ledger changes for one finished session, in one transaction."""

    def __init__(
        self,
        store: LedgerStore,
        classifier: ReplyClassifier | None = None,
        related_threshold: float = 1.0,
        similarity: Similarity | None = None,
    ) -> None:
        self.store = store
        self.classifier = classifier or RulesClassifier()
        self.related_threshold = related_threshold
        # Meaning-level similarity (the agent passes MiniLM's): when the topic words say an
        # instruction revises something, it picks which entry.
        self.similarity = similarity

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
        instructed: set[int] = set()  # user turns that gave a standing instruction

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
                if (pos - 1 in consumed or pos - 1 in instructed) and "?" not in turn.text:
                    # The assistant acknowledging the answer it just got ("Great, I'll accept
                    # market invites as they come in"), or the user's own standing
                    # instruction ("Makes sense. I'll send the full-page PDF from now on."),
                    # proposes nothing new.
                    continue
                result = self._classify(turn.text, reply.text if reply else "")
                if result is None or result.act == Act.no_proposal or result.proposal is None:
                    continue
                if reply is not None:
                    consumed.add(pos + 1)
                later = [t for t in turns[pos + 2 :] if t.speaker == "assistant"]
                self._proposal(turn, reply, context, result, record, later)
            elif pos not in consumed and self._user_rule(turn, pending, record):
                instructed.add(pos)
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
            update["scope"] = _scope_of(reply, result, turn, base)
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
            update["scope"] = _scope_of(reply, result, turn, base)
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
    ) -> bool:
        """Record a standing instruction in the turn, if any; True when there was one."""
        rule = detect_user_rule(turn.text)
        if rule is None:
            return False
        action = action_type_of(rule)
        # "We want to see Noor's party invites first. So don't reply to those yourself.": a
        # rule that points back at the sentence before is about what that sentence names.
        whole = action_type_of(turn.text)
        if whole not in ("other", action) and _POINTS_BACK.search(normalize(rule)):
            action = whole
        related = self._related(rule, turn.text, action, pending)
        evidence = [Evidence.quote(turn)]
        new = Arrangement(
            id=self.store.new_id(),
            kind=kind_of(rule),
            proposer=Proposer.user,
            # The rule's own action when its words name one; else the one it replaces.
            action_type=related.action_type if related and action == "other" else action,
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
        return True

    def _related(
        self, rule: str, said: str, action: object, pending: dict[str, Arrangement]
    ) -> Arrangement | None:
        """The active entry a new instruction replaces.

        The whole turn counts, not only the rule sentence: the topic is often elsewhere
        ("About the Tuesday thing: ... From now on ask me first."). It is compared, by topic
        words only (instruction words such as "ask", "first", "from now on" say nothing
        about which rule is meant), with the entry's rule, the request it answered and the
        turn that proposed it. An entry for another action counts less (the action type
        comes from wording and can be wrong).
        """
        current = {a.id: a for a in self.store.all()}
        current.update(pending)
        active = [e for e in current.values() if e.status in REPLACEABLE and not e.superseded_by]
        texts = {
            e.id: f"{e.content} {e.context} {e.evidence[0].text if e.evidence else ''}"
            for e in active
        }
        # Topic words first; only when no entry shares one do action words decide
        # ("Stop RSVPing for me automatically" against "should I RSVP ... automatically?").
        for stop in (INSTRUCTION_STEMS, INSTRUCTION_STEMS - ACTION_STEMS):
            scores = self._word_scores(
                _topic_words(rule) - stop,
                _topic_words(said) - stop,
                [(e, _topic_words(texts[e.id]) - stop) for e in active],
                action,
            )
            best = max(scores, key=scores.__getitem__) if scores else None
            if best is None or scores[best] <= 0:
                continue
            if scores[best] < self.related_threshold:
                return None
            by_id = {e.id: e for e in active}
            if self.similarity is None:
                return by_id[best]
            # Words say which entries are about the topic, meaning says which is closest:
            # each counts relative to its best, meaning the more ("quit accepting gallery
            # openings for me" names the openings, though markets read alike).
            sims = {e.id: self.similarity(said, texts[e.id]) for e in active}
            top_sim = max(sims.values())
            if top_sim <= 0:
                return by_id[best]
            top_words = scores[best]
            combined = {
                e.id: WORD_WEIGHT * scores[e.id] / top_words
                + sims[e.id] / top_sim * _action_factor(action, e)
                for e in active
            }
            return by_id[max(combined, key=combined.__getitem__)]
        return None

    @staticmethod
    def _word_scores(
        ruled: set[str],
        topic: set[str],
        candidates: list[tuple[Arrangement, set[str]]],
        action: object,
    ) -> dict[str, float]:
        """Each candidate's score for sharing the rarest words with `topic` (rarity across
        candidates); words of the instruction itself (`ruled`) count twice as much as its
        background ("The club treasurer wants ... So stop ordering team gear on your own.")."""
        df: dict[str, int] = {}
        for _, words in candidates:
            for w in words:
                df[w] = df.get(w, 0) + 1
        n = len(candidates) + 1
        scores: dict[str, float] = {}
        for entry, words in candidates:
            # Evidence is the rarity of the shared words, not their share of a long text.
            score = sum(math.log(1 + n / df[w]) * (2 if w in ruled else 1) for w in topic & words)
            scores[entry.id] = score * _action_factor(action, entry)
        return scores


# How much the topic words count beside meaning when both pick the entry an instruction
# revises (see _related). Set on the development histories' revisions (corpus and fresh
# development personas: 146 -> 150 of 153 linked right); held-out and blind ones checked.
WORD_WEIGHT = 0.25


def _scope_of(reply: Turn, result: Classification, turn: Turn, base: Arrangement) -> Scope:
    """The scope of a limited acceptance, read with the episode it answers: the proposal,
    the turn that made it and the request before it."""
    assert result.proposal is not None
    return parse_scope(
        reply.text, reply.session_date, result.scope, result.proposal.text, turn.text, base.context
    )


def _action_factor(action: object, entry: Arrangement) -> float:
    """An entry for another action counts less (action types come from wording and can
    be wrong, so they never rule an entry out)."""
    if "other" in (action, entry.action_type) or action == entry.action_type:
        return 1.0
    return 0.7


_POINTS_BACK = re.compile(r"\b(?:those|these|them|such ones|that lot)\b")


def _topic_words(text: str) -> set[str]:
    """Content stems of a text, and its pictographs: "👀 now means yes" is about the 👀."""
    return content_stems(text) | {ch for ch in text if unicodedata.category(ch) == "So"}


def _action_of(text: str, fallback: object) -> object:
    action = action_type_of(text)
    return fallback if action == "other" else action
