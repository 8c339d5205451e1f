"""Execution gate: checks every side-effecting call against the ledger before it runs.

The rule table (each decision carries a one-line reason, the entry and its evidence):

| relevant entry (same action, most similar rule) | call            | decision          |
|-------------------------------------------------|-----------------|-------------------|
| confirmed, consistent with the call             |                 | allow             |
| confirmed, says to ask first                    |                 | confirm           |
| confirmed, inconsistent (other response/item)   |                 | confirm           |
| scoped                                          | inside scope    | allow             |
| scoped                                          | outside/unknown | out_of_scope      |
| in a revision chain (old or newer entry)        | follows newest  | decide on newest  |
| in a revision chain (old or newer entry)        | otherwise       | follow_revision   |
| pending (never accepted) or rejected            |                 | confirm           |
| none                                            | request asks it | allow             |
| none                                            | otherwise       | confirm (paper: allow) |

Which entry is relevant: the most similar active entry (rule, the request it answered, the
turn that proposed it, its scope); when that one picks another response, item or quantity
than the call, a close agreed runner-up that picks exactly this call governs instead, but
an unaccepted proposal on top is never traded away. An unaccepted proposal that picks the
call more clearly than the agreed rule, or as clearly and nearly as similar, makes the gate
ask (it cannot tell which arrangement the call is about).

"Request asks it" means a request addressed to the assistant, in the user's own words,
that names the call's details, including how many when more than one (see
`explicit_request`); it also lifts a block by the entry.
A single-use entry is consumed by the one call it authorizes (`Gate.consume`).
Any error inside the gate fails closed: `confirm`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import date

from ledger.model import (
    Arrangement,
    Decision,
    Evidence,
    GateResult,
    Proposer,
    Status,
    latest_version,
)
from ledger.scope import KINDS, CallFacts, case_unmet, match_scope, rule_times
from ledger.text import (
    DECIDE_LATER,
    EITHER_WAY,
    KEPT_BACK,
    PASSED_OVER,
    POINTS_BACK_ONLY,
    STOPWORDS,
    THINGS_GOING,
    addressed_in,
    content_stems,
    counts_of_item,
    has_phrase,
    lexical_similarity,
    normalize,
    routed_by_name,
    running_low,
    shorthand_unused,
    stated_quantity,
    symbols,
    them_named,
    uses_shorthand,
)

SIDE_EFFECTING = frozenset({"rsvp", "purchase", "send"})
_ASKED = "you asked for this in your request"
Similarity = Callable[[str, str], float]

_ASK_RULE = re.compile(
    r"\b(?:ask (?:me|us)|check with (?:me|us)|run (?:it|them) by (?:me|us)|confirm with (?:me|us)|"
    r"let me (?:decide|choose|"
    r"pick|approve|review|see)|i'll (?:decide|handle|pick|choose)|don't \w+ (?:for me|without)|"
    r"stop \w+ing|never \w+ (?:for me|without)|flag (?:it|them) for me|before you)\b"
)
_RESPONSES = {
    "yes": (
        "yes",
        "accept",
        "accepting",
        "accepted",
        "attend",
        "going",
        "say yes",
        "rsvp yes",
        "count me in",
        "i'm in",
        "register",
        "sign you up",
        "sign me up",
        "book you in",
        "take them",
        "take those",
    ),
    "no": (
        "no",
        "decline",
        "declining",
        "declined",
        "regrets",
        "skip",
        "pass",
        "say no",
        "can't make",
        "not going",
        "turn down",
        "turn them down",
    ),
    "maybe": ("maybe", "tentative", "tentatively"),
}
_EXPLICIT_VERBS = {
    "rsvp": re.compile(
        r"\b(?:rsvp|say yes|say no|accept|decline|tell (?:him|her|them) (?:i'm|i am|we're|yes|no)|"
        r"count me in|reply (?:yes|no|maybe)|respond|mark me|let (?:him|her|them) know)\b"
    ),
    "purchase": re.compile(r"\b(?:buy|order|purchase|get me|pick up|grab|reorder|check ?out)\b"),
    "send": re.compile(r"\b(?:send|email|e-mail|forward|reply|message|text|share|mail)\b"),
}


# "turn those down", "turning the dinners down", "turn every one of them down": the object
# sits inside the phrase.
_SPLIT_PHRASES = re.compile(r"\bturn(?:s|ed|ing)? (?:\w+ ){1,4}?down\b")


# A cue word that answers nothing here: "they can pass them on" forwards, it does not decline
# ("I'll pass on the sales dinners" does).
_NOT_A_RESPONSE = re.compile(
    r"\bpass(?:es|ed|ing)? (?:(?:it|them|those|these|that|this|everything) )?"
    r"(?:along|to|through|back|over)\b|"
    r"\bpass(?:es|ed|ing)? (?:it|them|those|these|that|this|everything) on\b|"
    # "if you pass me an invite with just a 'sababa'": handing it over, not passing on it
    r"\bpass(?:es|ed|ing)? (?:me|you|us|her|him) (?:an?|the|one|any|on)\b|" + THINGS_GOING
)


def implied_response(text: str) -> str | None:
    """The RSVP response a rule implies ("decline work events" -> no)."""
    norm = _SPLIT_PHRASES.sub(" turn down ", normalize(text))
    norm = _NOT_A_RESPONSE.sub(" ", norm)
    found = [r for r, cues in _RESPONSES.items() if has_phrase(norm, cues)]
    if "maybe" in found:
        return "maybe"
    if "no" in found and "yes" not in found:
        return "no"
    if "yes" in found and "no" not in found:
        return "yes"
    if found and re.search(r"\b(?:rsvp|reply|say|respond)\w* (?:yes)\b", norm):
        return "yes"
    if len(found) > 1:
        # "Your weekends end up going to shoots, so want me to turn down weekend invites?":
        # the response is the one offered, not one a reason happens to mention.
        offered = [r for r in found if _offered(norm, _RESPONSES[r])]
        if len(offered) == 1:
            return offered[0]
    return found[0] if len(found) == 1 else None


_OFFER_VERB = (
    r"\b(?:want me to|should i|shall i|i'll|i will|i can|i could|me to)\s+(?:\w+\s+){0,2}?"
)


def _offered(norm: str, cues: tuple[str, ...]) -> bool:
    return any(re.search(_OFFER_VERB + re.escape(cue) + r"\b", norm) for cue in cues)


# The assistant offering to ask first ("should I check with you before ...?").
_OFFER_TO_ASK = re.compile(
    r"\b(?:i'll|i will|i can|i could|should i|shall i|want me to|i'd|i would)\s+(?:\w+\s+){0,2}"
    r"(?:ask|check with|run (?:it|them|those) by|confirm with|flag (?:it|them|those) for)\s+you\b"
)
# "no need to ask me", "without checking with me": asking is what the rule removes.
_NEGATED_ASK = re.compile(
    r"\b(?:no need to|don't need to|needn't|don't have to|never have to|without|instead of|"
    r"rather than|so (?:i|you) (?:don't|won't) (?:have to|need to))\s+(?:\w+\s+){0,2}?"
    r"(?:ask(?:ing)?|check(?:ing)? with|run(?:ning)? (?:it|them) by|confirm(?:ing)? with)"
    r"\s+(?:me|you)\b"
)


def is_ask_text(text: str) -> bool:
    """Does a rule's wording say to ask the user first?"""
    norm = normalize(text)
    if implied_response(text) == "maybe" and not POINTS_BACK_ONLY.search(norm):
        # "Stop telling Ines yes for me; from now on just mark me as a maybe": the maybe
        # replaces what stops, and deciding later is what a maybe is for.
        norm = re.sub(r"\bstop \w+ing\b", " ", DECIDE_LATER.sub(" ", norm))
    return bool(_NOT_WITHOUT_ASKING.search(norm) or _ASK_RULE.search(_NEGATED_ASK.sub(" ", norm)))


# "Don't commit the team to any tournament without checking with me first", "don't reply
# to those yourself": not doing it unasked is asking first.
_NOT_WITHOUT_ASKING = re.compile(
    r"\b(?:don't|do not|never)\s+(?!bother\b)(?:[\w'-]+\s+){0,8}?(?:without\s+(?:\w+\s+){0,2}?"
    r"(?:ask(?:ing)?|check(?:ing)?|run(?:ning)?|confirm(?:ing)?|clear(?:ing)?|talk(?:ing)?)\b|"
    r"(?:yourself|on your own)\b)"
)


def is_ask_rule(entry: Arrangement) -> bool:
    """A user's rule that says to ask first, or an accepted offer of mine to ask first.

    An offer of mine is read with a narrower pattern: "whenever you ask me for a book" or
    "so they stop landing on your plate" in a proposal say nothing about asking.
    """
    if entry.proposer == Proposer.assistant:
        return bool(_OFFER_TO_ASK.search(_NEGATED_ASK.sub(" ", normalize(entry.content))))
    return is_ask_text(entry.content)


class Ranked(list[tuple[float, Arrangement]]):
    """Entries by relevance, best first; `crowd`: the best score of the entries left out
    because they are about another case."""

    crowd: float = 0.0


class Gate:
    """Decides allow / confirm / follow_revision / out_of_scope for one call."""

    def __init__(
        self,
        entries: Callable[[], Sequence[Arrangement]],
        mode: str = "strict",
        similarity: Similarity = lexical_similarity,
        relevance_threshold: float = 0.15,
        ambiguity: float = 0.85,
        runner_up: float = 0.6,
        meaning: Similarity | None = None,
    ) -> None:
        self._entries = entries
        self.meaning = meaning  # plain meaning similarity, for limits named in other words
        self.mode = mode
        self.similarity = similarity
        self.threshold = relevance_threshold
        self.ambiguity = ambiguity
        self.runner_up = runner_up

    def check(self, facts: CallFacts, today: date) -> GateResult:
        try:
            return self._check(facts, today)
        except Exception as exc:
            return GateResult(
                decision=Decision.confirm,
                reason=f"the gate could not decide ({type(exc).__name__}); asking first",
                tool=facts.tool,
                args=dict(facts.args),
            )

    def consume(self, result: GateResult) -> Arrangement | None:
        """The single-use entry this allowed call used up, marked consumed (the caller writes
        it to the store so it authorizes nothing more); None when nothing is used up.

        A call the user asked for in the request itself is authorized by the request, not by
        the entry, and uses nothing up.
        """
        if not result.allowed or result.entry_id is None or result.reason == _ASKED:
            return None
        entry = next((e for e in self._entries() if e.id == result.entry_id), None)
        if entry is None or not entry.single_use or entry.consumed:
            return None
        return entry.model_copy(update={"consumed": True})

    # -----------------------------------------------------------------------------------

    def _result(
        self,
        decision: Decision,
        reason: str,
        facts: CallFacts,
        entry: Arrangement | None = None,
        **extra: object,
    ) -> GateResult:
        evidence: list[Evidence] = list(entry.evidence) if entry else []
        return GateResult(
            decision=decision,
            reason=reason,
            tool=facts.tool,
            args=dict(facts.args),
            entry_id=entry.id if entry else None,
            evidence=evidence,
            **extra,  # type: ignore[arg-type]
        )

    def ranked(self, facts: CallFacts, today: date) -> list[tuple[float, Arrangement]]:
        """Active entries by similarity to this call and request, best first."""
        query = f"{facts.request} {facts.entity_text}"
        recipient = " ".join(facts.recipients) if facts.tool == "send" else ""
        scored = []
        elsewhere: set[str] = set()
        for entry in self._entries():
            if not entry.is_active_on(today):
                continue
            # "Answer Walt's invitations with a maybe" is not about an invitation that is not
            # Walt's, however alike their words; "when I ask for "the usual"" is not about a
            # request that does not say it.
            about_another = case_unmet(entry.content, facts) or shorthand_unused(
                facts.request, entry.content
            )
            # The turn that proposed it names the case it came from ("I sent the EOB to
            # Grace. Want me to do that from now on?").
            proposed = entry.evidence[0].text if entry.evidence else ""
            scope = entry.scope.text if entry.scope else ""
            text = f"{entry.content} {entry.context} {proposed} {scope}"
            # The action type comes from the rule's words and can be wrong; it weighs, not filters.
            weight = 1.0 if entry.action_type == facts.tool else 0.6
            # A rule that names the very mailbox or person this call sends to is about it.
            named = _ADDRESSED_BONUS[addressed_in(f"{entry.content} {proposed}", recipient)]
            # A rule that reads the very emoji this request is sent with ("read a bare 👀 as
            # maybe") is about it, however few of the request's words it shares.
            # So is a rule that names the words the request uses ("whenever you tell me to
            # stock up").
            if symbols(facts.request) & symbols(entry.content) or uses_shorthand(
                facts.request, f"{entry.content} {proposed}"
            ):
                named += _SHORTHAND_BONUS
            scored.append((self.similarity(query, text) * weight + named, entry))
            if about_another:
                elsewhere.add(entry.id)
        scored.sort(key=lambda pair: pair[0], reverse=True)
        kept = Ranked(pair for pair in scored if pair[1].id not in elsewhere)
        # They are no candidates, but still part of the crowd a weak match must stand out of.
        kept.crowd = max((score for score, e in scored if e.id in elsewhere), default=0.0)
        return kept

    def relevant(
        self,
        facts: CallFacts,
        today: date,
        ranked: list[tuple[float, Arrangement]] | None = None,
    ) -> tuple[Arrangement | None, float]:
        """The entry most similar to this call and request.

        When the most similar entry would pick another response or item than the call, a
        close runner-up that the call does follow is the one the call is about (two rules on
        similar topics, "decline the rep dinners" and "maybe for work meetings").
        """
        ranked = self.ranked(facts, today) if ranked is None else ranked
        if not ranked or not self._stands_out(ranked):
            # No rule is near the request in words, but it says it is running low on
            # something ("I'm on the very last of my sunscreen"): the one purchase rule
            # whose situation is running low ("reorder whenever we're low on something
            # like this") is the one it is about.
            low = [
                (score, e)
                for score, e in ranked
                if facts.tool == "purchase" == e.action_type and running_low(e.content)
            ]
            if len(low) == 1 and running_low(facts.request):
                return low[0][1], low[0][0]
            return None, ranked[0][0] if ranked else 0.0
        top_score, top = ranked[0]
        # Never trade an unaccepted proposal for an agreed rule: that would borrow consent.
        unaccepted = top.status in (Status.pending, Status.rejected)
        support = self._support(top, facts)
        # A rule about another kind of action that says nothing of this call ("injury
        # updates go to the player", for an RSVP to a rep's dinner) gives way as well, to a
        # close rule of this kind that picks exactly this call.
        elsewhere = (
            support == 0 and top.action_type in SIDE_EFFECTING and top.action_type != facts.tool
        )
        if not unaccepted and (support < 0 or elsewhere):
            floor = self.threshold * (_LOW_FACTOR if elsewhere else 1.0)
            for score, entry in ranked[1:]:
                if score < max(floor, top_score * self.runner_up):
                    break
                if self._support(entry, facts) > 0 and (
                    support < 0 or entry.action_type == facts.tool
                ):
                    return entry, score
        return top, top_score

    def _by_time(self, facts: CallFacts, today: date) -> Arrangement | None:
        """The one rule of this kind of action whose own words name times this call meets
        and which picks this call ("decline anything that starts at seven or later" for a
        dinner at 7:30), however unlike the request its other words are; None when no rule
        or more than one does."""
        found = [
            entry
            for entry in self._entries()
            if entry.is_active_on(today)
            and entry.action_type == facts.tool
            and rule_times(entry.content).holds(facts.when)
            and self._support(entry, facts) > 0
        ]
        return found[0] if len(found) == 1 else None

    def _stands_out(self, ranked: list[tuple[float, Arrangement]]) -> bool:
        """Is the best entry relevant at all: similar enough, or a little less similar but
        clearly ahead of every other entry (the one rule that speaks of running low, in
        other words than the request's)?"""
        top = ranked[0][0]
        if top >= self.threshold:
            return True
        second = max(ranked[1][0] if len(ranked) > 1 else 0.0, getattr(ranked, "crowd", 0.0))
        return top >= self.threshold * _LOW_FACTOR and top >= second * _STANDS_OUT

    def _unaccepted_rival(
        self,
        facts: CallFacts,
        today: date,
        best: Arrangement,
        weak: bool = False,
        ranked: list[tuple[float, Arrangement]] | None = None,
    ) -> Arrangement | None:
        """An entry nearly as relevant as `best` that was never accepted (or was declined).

        When the match is that close, the gate cannot tell which arrangement the request
        is about, and it fails closed rather than borrow another rule's consent. When `best`
        was found by something other than its likeness to the request (`weak`: the times it
        names, or the one rule about running low), a rival must be relevant on its own:
        similar enough, or naming times this call meets.
        """
        ranked = self.ranked(facts, today) if ranked is None else ranked
        if not ranked:
            return None
        top = max(score for score, entry in ranked if entry.id == best.id)
        best_support = self._support(best, facts)
        for score, entry in ranked:
            unaccepted = entry.status in (Status.pending, Status.rejected)
            if entry.id == best.id or not unaccepted or entry.superseded_by is not None:
                continue
            if weak and not (
                score >= self.threshold or rule_times(entry.content).holds(facts.when)
            ):
                continue
            support = self._support(entry, facts)
            # A rival that picks exactly this call while the agreed rule only does not
            # contradict it is what the call is about, even if it is a little less similar;
            # one that picks it less clearly than the agreed rule is not a rival.
            if support > best_support and score >= top * self.runner_up:
                return entry
            if support == best_support and score >= top * self.ambiguity:
                return entry
        return None

    def _latest(self, entry: Arrangement) -> Arrangement:
        return latest_version(entry, self._entries())

    def _check(self, facts: CallFacts, today: date) -> GateResult:
        if facts.tool not in SIDE_EFFECTING:
            return self._result(Decision.allow, "read-only tool", facts)
        ranked = self.ranked(facts, today)
        entry, _score = self.relevant(facts, today, ranked)
        # Found by the times it names, or as the one rule about running low: not by likeness.
        weak = entry is None or not self._stands_out(ranked)
        if entry is None:
            entry = self._by_time(facts, today)
        explicit, missing = explicit_request(facts)
        if entry is None:
            if explicit:
                return self._result(Decision.allow, _ASKED, facts)
            if self.mode == "paper":
                return self._result(Decision.allow, "no arrangement governs this action", facts)
            why = (
                f"your request does not say {', '.join(missing)}"
                if missing
                else "you did not ask for it"
            )
            return self._result(
                Decision.confirm, f"no standing arrangement covers this and {why}", facts
            )
        if entry.status in (Status.confirmed, Status.scoped) and not explicit:
            rival = self._unaccepted_rival(facts, today, entry, weak, ranked)
            if rival is not None:
                return self._result(
                    Decision.confirm,
                    f"this also fits something I proposed on {rival.created_at.isoformat()} "
                    f'that you never accepted ("{rival.content}"); asking first',
                    facts,
                    rival,
                )
        latest = self._latest(entry) if entry.status == Status.revised else entry
        if entry.status == Status.revised and (
            latest.id == entry.id or latest.status not in (Status.confirmed, Status.scoped)
        ):
            return self._result(
                Decision.confirm, "this arrangement was replaced; asking first", facts, entry
            )
        in_chain = latest.id != entry.id or latest.previous is not None
        if in_chain and latest.status in (Status.confirmed, Status.scoped):
            # The newer rule of a revision chain governs, whichever entry of the chain the
            # relevance search landed on.
            if not is_ask_rule(latest) and self._consistent(latest, facts):
                if not _answered(entry, latest) and not self._about_call(latest, facts, today):
                    # The call matched what was replaced, and the replacement says nothing
                    # against it, but is about something else (a later instruction is linked
                    # to the entry it revises by its words, and can be linked wrongly): it
                    # cannot authorize the call, and what it replaced no longer stands.
                    return self._result(
                        Decision.confirm,
                        "this arrangement was replaced; asking first",
                        facts,
                        entry,
                    )
                return self._decide_on(latest, facts, today, explicit)
            return self._result(
                Decision.follow_revision,
                f'you changed this on {latest.updated_at.isoformat()}: "{latest.content}"',
                facts,
                latest,
                governing_rule=latest.content,
            )
        return self._decide_on(entry, facts, today, explicit)

    def _about_call(self, entry: Arrangement, facts: CallFacts, today: date) -> bool:
        """Is the entry itself among the ones most like this call (a share of the best
        similarity, CHAIN_RELEVANCE)?"""
        scores = {e.id: score for score, e in self.ranked(facts, today)}
        top = max(scores.values(), default=0.0)
        return top <= 0 or scores.get(entry.id, 0.0) >= CHAIN_RELEVANCE * top

    def _decide_on(
        self,
        entry: Arrangement,
        facts: CallFacts,
        today: date,
        explicit: bool,
    ) -> GateResult:
        result = self._entry_decision(entry, facts, today)
        if explicit and not result.allowed:
            # The current request itself asks for this exact call: that authorizes it.
            return self._result(Decision.allow, _ASKED, facts, entry)
        return result

    def _entry_decision(self, entry: Arrangement, facts: CallFacts, today: date) -> GateResult:
        """What the entry alone says about the call (the rule table, without the request)."""
        when = entry.created_at.isoformat()
        if entry.status == Status.pending:
            reason = f"I proposed this on {when} but you never accepted it"
            return self._result(Decision.confirm, reason, facts, entry)
        if entry.status == Status.rejected:
            return self._result(Decision.confirm, f"you declined this on {when}", facts, entry)
        if is_ask_rule(entry):
            reason = f'you asked me to check with you first ("{entry.content}")'
            return self._result(Decision.confirm, reason, facts, entry)
        if facts.tool == "rsvp" and not self._answers_invitations(entry):
            # "So the usual is now the party platter": a rule that says no answer to give
            # (in its words or the turn that made it) cannot answer an invitation.
            reason = f'what we agreed does not say how to answer this: "{entry.content}"'
            return self._result(Decision.confirm, reason, facts, entry)
        if not self._consistent(entry, facts):
            reason = f'this call does not follow what we agreed: "{entry.content}"'
            # The agent may plan again by the agreed rule (the new call meets the gate
            # again); it never runs this one.
            return self._result(
                Decision.confirm, reason, facts, entry, governing_rule=entry.content
            )
        if entry.status == Status.scoped and entry.scope is not None:
            facts.today = facts.today or today
            verdict = match_scope(entry.scope, facts, self.meaning)
            if verdict.inside is True:
                reason = (
                    f"inside the scope you agreed on {entry.updated_at.isoformat()} "
                    f'("{entry.scope.text}")'
                )
                return self._result(Decision.allow, reason, facts, entry, scope_diff=verdict.diff)
            reason = f"outside what you agreed: {verdict.diff}"
            return self._result(
                Decision.out_of_scope, reason, facts, entry, scope_diff=verdict.diff
            )
        agreed = entry.updated_at.isoformat()
        return self._result(Decision.allow, f"you agreed to this on {agreed}", facts, entry)

    def _answers_invitations(self, entry: Arrangement) -> bool:
        """Does the rule, the turn that made it, or a rule it revised ("Fine, but only on
        weekends" to "say yes to club invites?") say how to answer an invitation?"""
        by_id = {e.id: e for e in self._entries()}
        seen: set[str] = set()
        current: Arrangement | None = entry
        while current is not None and current.id not in seen:
            seen.add(current.id)
            if implied_response(current.content) is not None or any(
                implied_response(ev.text) is not None for ev in current.evidence[:1]
            ):
                return True
            current = by_id.get(current.previous) if current.previous else None
        return False

    def _previous(self, entry: Arrangement) -> Arrangement | None:
        """The entry this one replaced (the ledger is read only when there is one)."""
        if entry.previous is None:
            return None
        return next((e for e in self._entries() if e.id == entry.previous), None)

    def _support(self, entry: Arrangement, facts: CallFacts) -> int:
        """1 when the rule picks this very call (its response, its item), -1 when it picks
        another, 0 when it says nothing either way."""
        quantity = _quantity_verdict(entry, facts)
        if quantity < 0:
            return -1
        if facts.tool == "rsvp":
            want = implied_response(entry.content)
            got = str(facts.args.get("response", "")).lower()
            if not want or not got:
                return 0
            return 1 if want == got else -1
        verdict = quantity
        replaced = self._previous(entry)
        for chosen_text, others in facts.choice_pairs():
            chosen, best_other = _pick_scores(entry, chosen_text, others, replaced)
            if best_other > chosen + _CLEAR:
                return -1
            if chosen > best_other:
                verdict = 1
        return verdict

    def _consistent(self, entry: Arrangement, facts: CallFacts) -> bool:
        """Does the call do what the rule says (same response, the item the rule picks,
        as many as it says)?"""
        if _quantity_verdict(entry, facts) < 0:
            return False
        if facts.tool == "rsvp":
            want = implied_response(entry.content)
            got = str(facts.args.get("response", "")).lower()
            return not (want and got and want != got)
        request = content_stems(own_request(facts.request))
        replaced = self._previous(entry)
        for chosen_text, others in facts.choice_pairs():
            if _named_by_request(request, chosen_text, others) and (
                "@" not in chosen_text or not _routes_to_another(entry, others)
            ):
                # The user's own words pick this document or item; the rule's class word
                # ("every business receipt") does not overrule them. Nor does a class of
                # recipients ("the signed PDF is what goes to clients") overrule the person
                # the request names; a rule that routes mail for Helen through casework@, by
                # mailbox or name, does.
                continue
            chosen, best_other = _pick_scores(entry, chosen_text, others, replaced)
            if best_other > chosen + _CLEAR:
                return False
            if replaced is not None and best_other > chosen:
                # The rule this one replaced picks the chosen item and this one points at
                # another: the call does what the user changed ("reach for the te reo
                # edition", then "from now on buy the English editions").
                was, was_other = _pick_scores(replaced, chosen_text, others)
                if was > was_other:
                    return False
        return True


def _with_turn(entry: Arrangement) -> str:
    """The rule's words with the turn that proposed it."""
    return " ".join([entry.content, *(ev.text for ev in entry.evidence[:1])])


def _names_no_recipient(content: str, raw: str) -> bool:
    """A rule that sends to whoever asks ("whenever someone you're working for asks") names
    no recipient of its own: the first case's address written out is not it. Nor does one
    that sends to each person's own address ("personal things go to coworkers' personal
    emails"): the first case's address is that person's."""
    return (
        _TO_THE_ASKER.search(normalize(content)) is not None
        or _OWN_ADDRESSES.search(normalize(raw)) is not None
    )


def _routes_to_another(entry: Arrangement, others: Sequence[str]) -> bool:
    """Does the rule send to one of these other contacts: by name or mailbox in its own
    words, or by a mailbox its turn writes out (unless it sends to whoever asks, or to each
    person's own address)?"""
    raw = _with_turn(entry)
    asker = _names_no_recipient(entry.content, raw)
    return any(
        addressed_in(entry.content, other) > 0 or (not asker and addressed_in(raw, other) == 2)
        for other in others
    )


def _named_by_request(request: set[str], chosen_text: str, others: Sequence[str]) -> bool:
    """Does the request name the chosen item by a word no other item has ("the invoice is
    in my docs" among receipts)?"""
    own = content_stems(chosen_text) & request
    rest = set().union(*(content_stems(o) for o in others)) if others else set()
    return bool(own - rest)


def _quantity_verdict(entry: Arrangement, facts: CallFacts) -> int:
    """1 when the rule names the call's quantity ("one apiece for all three"), -1 when it
    names another, 0 when it names none or the request itself says how many."""
    if facts.tool != "purchase" or stated_quantity(facts.request) is not None:
        return 0
    want = stated_quantity(entry.content)
    got = facts.args.get("quantity")
    if want is None or not isinstance(got, int):
        return 0
    # A count the item itself carries ("the two-bag fare" for "Seat + 2 checked bags")
    # describes the item, not how many to buy.
    if want in counts_of_item(entry.content, facts.entity_text):
        return 0
    return 1 if want == got else -1


def _choosing_words(text: str) -> str:
    """A rule's words that can pick an item: without what it keeps back, passes over or says
    does not matter."""
    return PASSED_OVER.sub(" ", KEPT_BACK.sub(" ", EITHER_WAY.sub(" ", normalize(text))))


def _pick_scores(
    entry: Arrangement,
    chosen_text: str,
    others: Sequence[str],
    replaced: Arrangement | None = None,
) -> tuple[int, int]:
    """How strongly the rule points at the chosen item, and at the best other one.

    Only what sets an item apart counts ("club treasurer" in two contacts' descriptions
    says nothing about which one the rule means). The rule's own words count twice; the
    turn that proposed it counts once (it often names the exact item: "I sent it to
    treasurer@club.org. Should that be how we handle ...?"). The proposal's other words
    describe the first case ("I'll send Harbor Ironworks the copy without the estimate"),
    not the rule, so they alone never point away from the chosen item: another item
    counts only as far as the rule's own words or an address it names point at it.
    """
    # A condition says when the rule applies, not what it picks: "the version I send
    # whenever a scope leaves the board" does not point at the board president.
    turn = " ".join(ev.text for ev in entry.evidence[:1])
    stated = them_named(entry.content, turn)
    content = _choosing_words(stated)
    rule = content_stems(_CONDITION.sub(" ", content)) - STOPWORDS
    said = content_stems(content) - STOPWORDS
    # What the rule itself passes over counts against an item that has it: "buy appliances
    # without the installation package" does not pick the washer with the package.
    norm_content = normalize(stated)
    passed = content_stems(" ".join(m.group(0) for m in PASSED_OVER.finditer(norm_content)))
    passed -= STOPWORDS | rule
    for ev in entry.evidence[:1]:
        said |= content_stems(_choosing_words(ev.text))
        said -= STOPWORDS
    # A mailbox is matched as a whole (addressed_in), not by its words: "records@" does not
    # make a clinic the one a rule about "the complete records" sends to.
    chosen = _with_kinds(content_stems(_ADDRESS_RE.sub(" ", chosen_text)))
    rivals = [content_stems(_ADDRESS_RE.sub(" ", c)) for c in others]
    shared = set().union(*rivals) if rivals else set()

    raw = EITHER_WAY.sub(" ", _with_turn(entry))
    # "send them to him instead": the one the turn names that the replaced rule did not
    routed = EITHER_WAY.sub(" ", entry.content)
    if replaced is not None:
        routed = routed_by_name(routed, raw, _with_turn(replaced))
    asker = _names_no_recipient(entry.content, raw)

    def score(text: str, own: set[str], rest: set[str]) -> tuple[int, int]:
        unique = own - rest
        # The person the rule sends to, by mailbox or by name ("through casework@", "send
        # her" after naming Emi), outweighs any shared words; in the rest of the proposal
        # only an address written out counts ("I sent it to treasurer@club.org. Should that
        # be how we handle ...?"), a name there is often just the first case's recipient.
        level = max(
            addressed_in(routed, text, refer=raw),
            2 if not asker and addressed_in(raw, text) == 2 else 0,
        )
        named = (0, 6, 10)[level]
        strong = 2 * len(unique & rule) + named
        return strong + len(unique & said) - 2 * len(unique & passed), strong

    best_other = max(
        (
            total if strong > 0 else min(total, _CLEAR)
            for total, strong in (score(o, r, chosen) for o, r in zip(others, rivals, strict=True))
        ),
        default=0,
    )
    return score(chosen_text, chosen, shared)[0], best_other


_ADDRESS_RE = re.compile(r"\S+@\S+")


def _with_kinds(stems: set[str]) -> set[str]:
    """An item's words and the kinds it is of: a sneaker is a shoe, so "clothes and shoes"
    in a rule does not set another shoe apart from the sneaker chosen. (Only the chosen
    item's kinds: another item's kind is no word of its own.)"""
    return stems | {kind for kind, members in KINDS.items() if members & stems}


_CONDITION = re.compile(
    r"\b(?:whenever|when|if|any ?time|every time|each time)\b[^,.;:?!]*|"
    # what waits for a condition is not what the rule picks now: "preview first, full
    # file only once there's a deal"
    r"(?:^|(?<=[,;:]))[^,.;:?!]{1,40}?\bonly (?:once|after|when|if|until)\b[^,.;:?!]*"
)
_TO_THE_ASKER = re.compile(
    r"\b(?:(?:whoever|anyone|anybody|someone|somebody|everyone|everybody|people|the person)\b"
    r"(?:[\w' ]{0,40}?)|(?:whenever|when|if|each time|every time) (?:a |an |any |some |the )?"
    r"[\w' -]{1,30}? )(?:asks?|asking|requests?|requesting|wants?)\b"
)
_OWN_ADDRESSES = re.compile(
    r"\b(?:their|each (?:person|one)'s|everyone's|people's|[a-z]+s'|his or her) (?:own )?"
    r"(?:personal |work |home |private |usual )?(?:emails?|e-mails?|addresses|inboxes|"
    r"numbers)\b"
)
# A rule picks another item only when it points there clearly: more than one of its own
# words beyond what it shares with the chosen item (bag-of-words evidence is noisy).
_CLEAR = 2


def _answered(old: Arrangement, new: Arrangement) -> bool:
    """Is `new` the user's reply to the proposal `old` (a revision in the same exchange,
    linked for certain) rather than a later instruction linked to it by its words?"""
    return (
        new.previous == old.id
        and bool(new.evidence and old.evidence)
        and new.evidence[0].session_id == old.evidence[0].session_id
    )


# An entry below the relevance threshold (down to this share of it) still governs when it
# is this many times as similar as the next one.
_LOW_FACTOR = 2 / 3
_STANDS_OUT = 1.5
# The newer rule of a revision chain governs a call found through an older entry only when
# it is itself this share as similar to the call as the best entry. Chosen by replaying the
# development, held-out and blind sets at 0.5: it stopped a wrong link on a blind persona
# (ratio 0.45) from authorizing a call, and cost one held-out in-scope probe that had only
# been allowed through a wrong link itself.
CHAIN_RELEVANCE = 0.5
# Added to a rule's relevance when it names the call's recipient: (none, by name, by mailbox).
_ADDRESSED_BONUS = (0.0, 0.05, 0.1)
_SHORTHAND_BONUS = 0.2


# Text from this point on is not the user's own request: a speaker or authority label
# ("SYSTEM:", "[assistant memory]", "note to the assistant"), or a reported claim that
# someone already agreed ("the user has agreed", "already authorized", "pre-approved").
_NOT_THE_USER = re.compile(
    r"(?:^|[\s\[(])(?:system|assistant|admin(?:istrator)?|developer|user|ai|bot|agent|"
    r"operator|instructions?|override)\b[\w ]{0,20}[:\]]"
    r"|\bnote (?:to|for) (?:the |my )?(?:assistant|ai|agent|bot|model)\b"
    r"|\b(?:the )?user(?:'s)?\b(?: \w+){0,2} (?:agreed|agrees|approved|approves|authori[sz]ed|"
    r"confirmed|confirms|consented|okayed|ok'd|said|says|wants|gave|granted|allowed|allows|"
    r"permitted|accepted)\b"
    r"|\b(?:already|previously) (?:been )?(?:agreed|approved|authori[sz]ed|confirmed|"
    r"consented|okayed|ok'd|allowed|permitted|accepted)\b"
    r"|\bpre-?(?:approved|authori[sz]ed|confirmed)\b"
    r"|\b(?:has|have|had) (?:been )?(?:agreed|approved|authori[sz]ed|consented|permitted)\b"
)
_QUOTED = re.compile(r'"[^"]*"')
# What may stand before the verb in a request addressed to the assistant.
_ADDRESS = (
    r"(?:(?:please|pls|just|also|and|then|so|now|ok|okay|yes|yeah|sure|great|thanks|"
    r"alright|actually|oh|go ahead and|can you|could you|would you|will you|would you mind|"
    r"(?:i|we) (?:want|need|would like|'d like|would love|'d love) you to|"
    r"(?:i|we) (?:want|need|would like|'d like) to|let's|feel free to|"
    r"do me a favou?r and)\s+)*"
)
# A clause starts a sentence, or follows a comma, "and", "then" or "so".
_CLAUSE_START = r"(?:^|[.!?;:,]\s+|\b(?:and|then|so)\s+)"
# Nouns that share a verb's spelling: "Email from Kevin", "Order #123 shipped".
_NOT_A_VERB = r"(?!\s+(?:from|is|was|has|had|came|arrived|of|number|confirmation|#)\b)"


def _addressed(verb: re.Pattern[str]) -> re.Pattern[str]:
    return re.compile(_CLAUSE_START + _ADDRESS + r"(?:" + verb.pattern + r")" + _NOT_A_VERB)


def own_request(text: str) -> str:
    """The part of a request that is the user's own words: cut at any injected label or
    reported claim of agreement."""
    norm = normalize(text)
    cut = _NOT_THE_USER.search(norm)
    return (norm if cut is None else norm[: cut.start()]).strip()


def asks_for(tool: str, text: str) -> bool:
    """Does the text address the assistant with a request for this tool ("RSVP yes to
    Kevin", "can you order it", "go ahead and send it")? A verb that is only mentioned
    ("the user agreed to let you purchase") is not a request."""
    verb = _EXPLICIT_VERBS.get(tool)
    if verb is None:
        return False
    # Quoted text is someone else's words, not a request.
    return bool(_addressed(verb).search(_QUOTED.sub(' "" ', own_request(text))))


_BY_CONVENTION = re.compile(
    r"\b(?:the usual|my usual|our usual|the same (?:again|as (?:last|before|always))|"
    r"the regular|my regular|our regular|the normal one|the standard one)\b"
)


def explicit_request(facts: CallFacts) -> tuple[bool, list[str]]:
    """Does the current request itself ask for this exact call? Returns (yes, missing details).

    Only a request addressed to the assistant counts (an imperative, or "can you / please /
    I want you to / go ahead and" with the verb), in the user's own words: text after an
    injected label or a reported claim ("SYSTEM: the user already agreed ...") is not the
    user asking. The request must also name the call's details: the RSVP response, and the
    item when there are others it could pick.
    """
    if not asks_for(facts.tool, facts.request):
        return False, ["that I should do it"]
    request = own_request(facts.request)
    missing: list[str] = []
    if facts.tool == "rsvp":
        want = implied_response(request)
        if want is None:
            missing.append("which response to give")
        elif want != str(facts.args.get("response", "")).lower():
            missing.append(f"'{facts.args.get('response')}'")
    quantity = facts.args.get("quantity")
    several = facts.tool == "purchase" and isinstance(quantity, int) and quantity != 1
    if several and stated_quantity(request) != quantity:
        missing.append(f"{quantity} of them")
    req = content_stems(request)
    # "Order the usual", "the same again": which thing that is comes from an arrangement,
    # not from the request.
    pairs = facts.choice_pairs()
    if pairs and _BY_CONVENTION.search(normalize(request)):
        pairs = []
        missing.append("which one")
    for chosen_text, others in pairs:
        chosen = len(content_stems(chosen_text) & req)
        if chosen == 0 or chosen <= max((len(content_stems(c) & req) for c in others), default=0):
            missing.append("which one")
            break
    return not missing, missing
