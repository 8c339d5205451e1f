"""The reply model: a learned second reading of replies the rules leave pending."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ledger import reply_model
from ledger.classifier import (
    MODEL_ACCEPT,
    MODEL_ACCEPT_GUARDED,
    MODEL_OVERRULE_LIMIT,
    classify_reply,
)
from ledger.model import Act

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
# The batteries the model was trained on (the weights file names them); a battery kept out
# of training (classify_negations.jsonl) is measured by counts below.
BATTERIES = sorted(
    ROOT / name for name in json.loads(str(np.load(reply_model.WEIGHTS)["meta"]))["files"]
)

FILTERS = (
    "I've ordered two replacement water filters for the fridge. Should I reorder them every "
    "six months without asking?"
)


def _rows() -> list[dict[str, str]]:
    return [
        json.loads(line)
        for path in BATTERIES
        for line in path.read_text().splitlines()
        if line.strip()
    ]


def test_the_weights_were_trained_on_the_current_batteries() -> None:
    """Changing a training battery without retraining (scripts/train_reply_model.py) fails."""
    meta = json.loads(str(np.load(reply_model.WEIGHTS)["meta"]))
    assert meta["labels"] == list(reply_model.LABELS)
    for name, digest in meta["files"].items():
        assert reply_model.file_digest(ROOT / name) == digest, f"{name} changed: retrain"
    # never the benchmark corpus
    assert not any("scenarios" in name for name in meta["files"])


def _sure(p: float):  # type: ignore[no-untyped-def]
    def acceptance(proposal: str, reply: str) -> float:
        return p

    return acceptance


def test_a_fairly_sure_model_turns_only_a_clean_pending_reply_into_an_acceptance() -> None:
    fairly = _sure((MODEL_ACCEPT + MODEL_ACCEPT_GUARDED) / 2)
    for reply in (
        "Right, the blue ones are the ones that fit.",  # left pending by the rules alone
        "Legend. Set and forget.",
    ):
        assert classify_reply(FILTERS, reply, acceptance=fairly).act is Act.accept
    for reply in (
        "I'd rather keep an eye on those myself.",  # a refusal stays a refusal
        "Not the filters, no.",
        "Can you also find the fridge's manual?",  # a request of its own
        "Were they the blue ones?",  # a question
        "Only when they're on sale.",  # a limit
        "Hold the order for me to check first.",  # a hand-back
        "Flag every one of them to me.",
        "Better to run it past me.",
        "Let's keep it week by week.",
        "I never notice until the water tastes off anyway.",  # a negation: needs more
    ):
        assert classify_reply(FILTERS, reply, acceptance=fairly).act is not Act.accept, reply


def test_a_very_sure_model_also_reads_a_reason_with_a_negation_in_it() -> None:
    """Acceptances that give a reason ("I never notice until ...", "she'd never get done
    otherwise") carry words the rules cannot tell from a refusal's; a model at least
    MODEL_ACCEPT_GUARDED sure reads them. A reading of the rules (a refusal, a limit), a
    question or a one-off request never becomes an acceptance, however sure the model is."""
    guarded = "I never notice until the water tastes off anyway."
    assert classify_reply(FILTERS, guarded).act in (Act.implicit, Act.no_uptake)
    below = _sure(MODEL_ACCEPT_GUARDED - 0.01)
    assert classify_reply(FILTERS, guarded, acceptance=below).act is not Act.accept
    assert classify_reply(FILTERS, guarded, acceptance=_sure(MODEL_ACCEPT_GUARDED)).act is (
        Act.accept
    )
    for reply in (
        "Not the filters, no.",  # the rules read a refusal
        "Only the Brita ones, mind.",  # the rules read a limit
        "Can you also find the fridge's manual?",
        "Were they the blue ones?",
        "Add a jug filter to this one.",
    ):
        assert classify_reply(FILTERS, reply, acceptance=_sure(1.0)).act is not Act.accept, reply


def test_an_unsure_or_failing_model_changes_nothing() -> None:
    def broken(proposal: str, reply: str) -> float:
        raise RuntimeError("no model")

    reply = "Right, the blue ones are the ones that fit."
    rules = classify_reply(FILTERS, reply).act
    assert rules in (Act.implicit, Act.no_uptake)
    assert classify_reply(FILTERS, reply, acceptance=_sure(MODEL_ACCEPT - 0.01)).act is rules
    assert classify_reply(FILTERS, reply, acceptance=broken).act is rules


def test_the_model_never_overrules_an_acceptance_a_refusal_or_a_marked_limit() -> None:
    """With P(accept) = 1 for everything, every reply the rules read as an acceptance, a
    refusal or a revision keeps that reading on every labelled battery, and so does every
    limit with a hand-back, limit or refusal word in it (or a question)."""
    always = _sure(1.0)
    overruled = 0
    for row in _rows():
        rules = classify_reply(row["assistant"], row["user"]).act
        if rules in (Act.implicit, Act.no_uptake):
            continue
        got = classify_reply(row["assistant"], row["user"], acceptance=always).act
        if rules is Act.scoped and got is Act.accept:
            overruled += 1
            assert not re.search(
                r"\b(?:only|just|except|unless|but|not|no|ask|check|past|else|otherwise|"
                r"rest|others?)\b|n't\b|\?",
                row["user"].lower().replace("’", "'"),
            ), row["user"]
        else:
            assert got is rules, row["user"]
    assert overruled > 0


def test_a_very_sure_model_reads_a_remark_the_rules_took_for_a_limit_as_an_acceptance() -> None:
    """The reason beside a yes can name a day or a kind of thing ("Tuesdays I do the
    shopping, so that suits."): the rules read a limit, and a model at least
    MODEL_OVERRULE_LIMIT sure reads the acceptance. A limit marked as one ("Only the Brita
    ones", a hand-back, a refusal of the rest) stays a limit however sure the model is."""
    for reply in (
        "Tuesdays I do the shopping, so that suits.",
        "Weekends are when I notice the taste. Sorted, thanks.",
    ):
        assert classify_reply(FILTERS, reply).act is Act.scoped, reply
        below = _sure(MODEL_OVERRULE_LIMIT - 0.01)
        assert classify_reply(FILTERS, reply, acceptance=below).act is Act.scoped, reply
        sure = _sure(MODEL_OVERRULE_LIMIT)
        assert classify_reply(FILTERS, reply, acceptance=sure).act is Act.accept, reply
    for reply in (
        "Only the Brita ones, mind.",
        "For the kitchen fridge, fine. The garage one I will sort myself.",
        "The kitchen fridge, fine. The garage one, run it past me.",
        "For the kitchen fridge, fine. Not the garage one.",
        "Kitchen fridge, fine. The rest can wait.",
        "Tuesdays I do the shopping, so that suits?",
    ):
        rules = classify_reply(FILTERS, reply).act
        assert rules is not Act.accept, reply
        assert classify_reply(FILTERS, reply, acceptance=_sure(1.0)).act is rules, reply


def test_the_words_of_a_reply_and_the_vocabulary() -> None:
    assert reply_model.grams("I’d rather not.") == {
        "i'd",
        "rather",
        "not",
        "i'd_rather",
        "rather_not",
    }
    vocab = reply_model.vocabulary(["I'd rather not", "rather not", "Rather not, thanks", "yes"])
    assert vocab == ["not", "rather", "rather_not"]  # seen in at least GRAM_MIN_COUNT replies
    rows = reply_model.bags(["Rather not.", "Yes please"], vocab)
    assert rows.tolist() == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]
    kept = json.loads(str(np.load(reply_model.WEIGHTS)["meta"]))
    assert len(kept["vocabulary"]) == np.load(reply_model.WEIGHTS)["w"].shape[0] - (2 * 384 + 2)


@pytest.fixture(scope="module")
def model() -> reply_model.ReplyModel:
    from agent.embeddings import MiniLMEmbedder

    return reply_model.ReplyModel(MiniLMEmbedder().embed_arrays)


def test_the_model_reads_everyday_acceptances_and_not_a_change_of_subject(
    model: reply_model.ReplyModel,
) -> None:
    proposal = "Should I reorder them every six months without asking?"
    p = model.probabilities(proposal, "Brilliant, one less thing to remember.")
    assert abs(sum(p.values()) - 1.0) < 1e-6
    assert p["accept"] > 0.5
    assert model.accept_probability(proposal, "What time does the pharmacy shut on Sunday?") < 0.2


@pytest.mark.slow
def test_training_is_deterministic(tmp_path: Path) -> None:
    out = tmp_path / "w.npz"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "train_reply_model.py"), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    fresh, kept = np.load(out), np.load(reply_model.WEIGHTS)
    np.testing.assert_allclose(fresh["w"], kept["w"], atol=1e-4)


def test_the_real_model_turns_no_refusal_limit_or_change_of_subject_into_a_yes(
    model: reply_model.ReplyModel,
) -> None:
    """Over every labelled battery (2,430 replies; in-sample for most of them, so this is a
    floor, not a claim): the model only ever adds acceptances where the label is accept.
    Measured on 2026-12-03: 4 replies the rules leave pending become acceptances, all right
    (fewer as the rules learn more cues);
    on a battery written blind to the model, 4 more acceptances and no wrong one. After
    training on three more batteries (session 8): 63 added, all right. Session 20 trusted the
    model from 0.5 instead of 0.6 (the benchmark replays read 13 more acceptances and no
    false one), trained it on three more batteries written with hard unrelated remarks
    ("That game! Move 87 was my best tesuji in years") and kept it off replies that hand
    the case back ("check first", "run it past me", "week by week"): 126 added, 2 of them
    wrong (that remark, and a refusal by idiom: "I need to pick my battles"). Session 23 (the
    reply's words and word pairs as features, trusted from 0.6, and from 0.7 on replies
    with a negation word): 203 added, 3 of them wrong (refusals: "I want eyes on every one",
    "I want to hear about every invitation", "He'd be mortified if I took it off him"). It
    still only ever adds acceptances."""
    added: list[str] = []
    wrong: list[str] = []
    for row in _rows():
        rules = classify_reply(row["assistant"], row["user"]).act
        both = classify_reply(
            row["assistant"], row["user"], acceptance=model.accept_probability
        ).act
        if both is not rules:
            assert both is Act.accept, row["id"]
            added.append(row["id"])
            if row["label"] != "accept":
                wrong.append(row["id"])
    assert len(added) >= 200
    assert len(wrong) <= 3, wrong


def _counts(model: reply_model.ReplyModel, battery: str) -> dict[tuple[str, str], int]:
    """(label, act) counts of the agent's full reading (rules, meaning check, reply model)
    over a battery; counts only, so a failing test shows no reply."""
    from agent.embeddings import MiniLMEmbedder, embedding_cosine

    meaning = embedding_cosine(MiniLMEmbedder())
    counts: dict[tuple[str, str], int] = {}
    for line in (DATA / battery).read_text().splitlines():
        row = json.loads(line)
        act = classify_reply(row["assistant"], row["user"], meaning, model.accept_probability)
        key = (row["label"], act.act.value)
        counts[key] = counts.get(key, 0) + 1
    return counts


def _assert_blind_counts(
    model: reply_model.ReplyModel,
    battery: str,
    accepts: int,
    wrong_accepts: int,
    limits_as_accepts: int | None = None,
) -> None:
    """Floors on acceptances read, ceilings on refusals or unrelated replies (and, when
    given, limits) read as acceptances."""
    counts = _counts(model, battery)
    assert counts.get(("accept", "accept"), 0) >= accepts
    wrong = counts.get(("reject", "accept"), 0) + counts.get(("no_uptake", "accept"), 0)
    assert wrong <= wrong_accepts
    if limits_as_accepts is not None:
        assert counts.get(("scoped", "accept"), 0) <= limits_as_accepts


def test_the_held_out_battery_by_counts(model: reply_model.ReplyModel) -> None:
    """`heldout_classify.jsonl` (50 episodes written blind to the code, never read while
    changing it): counts only, so a failure shows no reply. Measured on 2026-12-03 with the
    agent's full reading (rules, meaning check, reply model): 37/50 acceptances read (30 at
    the session's start), 1 refusal read as an acceptance (3 before), no unrelated reply read
    as one. Session 8 (three more training batteries, more proposal forms, approving
    negations, the user keeping the doing): 39/50, 1, 0. Session 23 (words as features):
    44/50, 1, 0. Floors and ceilings against regressions."""
    counts = _counts(model, "heldout_classify.jsonl")
    assert counts.get(("accept", "accept"), 0) >= 44
    assert counts.get(("reject", "accept"), 0) <= 1
    assert counts.get(("no_uptake", "accept"), 0) == 0
    assert counts.get(("scoped", "accept"), 0) <= 2


def test_the_negations_battery_by_counts(model: reply_model.ReplyModel) -> None:
    """`classify_negations.jsonl` (2026-12-04): acceptances without a yes-word, most with a
    negation in them, beside refusals worded like them. Session start 42/80 acceptances read
    (20 read as refusals); after the reason-beside-a-standing-restatement reading 54/80, and
    56/80 once more indirect offers are found as proposals.
    Refusals and unrelated replies read as acceptances: 0 and 1 at both ends; one-off
    replies read as acceptances: 5 at both ends. Session 23 (words as features): 65/80
    acceptances, 0 refusals, 1 unrelated reply and 6 one-off replies read as acceptances.
    Floors and ceilings against regressions."""
    counts = _counts(model, "classify_negations.jsonl")
    assert counts.get(("accept", "accept"), 0) >= 65
    assert counts.get(("reject", "accept"), 0) == 0
    assert counts.get(("no_uptake", "accept"), 0) <= 1
    assert counts.get(("implicit", "accept"), 0) <= 6


def test_the_restatement_battery_by_counts(model: reply_model.ReplyModel) -> None:
    """`classify_restate.jsonl` (2026-12-04): the proposal's own pick said again ("Aisle
    every time.") beside limits of the user's ("KTX when I'm travelling alone."). Session
    start (811a6bd): acceptances 26/60, limits 38/60, 4 limits read as acceptances; blind,
    just before its fix (with the session's proposal forms): 31, 39 and 4; after the
    pick-with-a-condition reading: 31, 50 and 1. Session 23 (words as features): 36, 53
    and 1."""
    counts = _counts(model, "classify_restate.jsonl")
    assert counts.get(("accept", "accept"), 0) >= 36
    assert counts.get(("scoped", "scoped"), 0) >= 50
    assert counts.get(("scoped", "accept"), 0) <= 1


@pytest.mark.parametrize(
    ("battery", "accepts", "wrong_accepts"),
    [
        ("heldout_blind6.jsonl", 55, 2),
        ("heldout_blind7.jsonl", 56, 2),
        ("heldout_blind8.jsonl", 36, 8),
    ],
)
def test_the_session8_blind_batteries_by_counts(
    model: reply_model.ReplyModel, battery: str, accepts: int, wrong_accepts: int
) -> None:
    """Two batteries (60 episodes x accept / scoped / reject / no_uptake each) written blind to
    the code at the end of session 8 and never read: counts only. Measured then, session
    start (c33dcc1) -> end: blind6 accept 39 -> 41/60, refusals or unrelated replies read as
    acceptances 3 -> 2; blind7 accept 38 -> 42/60, refusals or unrelated replies read as
    acceptances 7 -> 5. Session 9 (four more training batteries, the model trusted from 0.6
    instead of 0.5, as no labelled refusal or unrelated reply reaches it there): blind6 41 and
    2, blind7 41 and 3 (one acceptance fewer, two false ones fewer). Session 20, before and
    after trusting the model from 0.5 again (the benchmark replays read 13 more acceptances
    and no false one): blind6 46 and 2 -> 46 and 3, blind7 52 and 3 -> 55 and 5 (the new false
    ones are remarks on someone else: "She's started crawling, by the way!"); trained on
    three more batteries with hard unrelated remarks: blind6 47 and 2, blind7 55 and 3.
    blind8 (session 20, 60 episodes written blind the same way, mostly acceptances without a
    yes-word): 28 and 6 with the model trusted from 0.6, 31 and 6 from 0.5, 30 and 6 after
    the training. Session 23 (the reply's words and word pairs as features): blind6 55 and 2,
    blind7 56 and 2, blind8 36 and 8 (two more refusals read as yes). Floors and ceilings
    against regressions."""
    _assert_blind_counts(model, battery, accepts, wrong_accepts)


@pytest.mark.parametrize(
    ("battery", "accepts", "wrong_accepts", "limits_as_accepts"),
    [
        ("heldout_blind9.jsonl", 43, 3, 1),
        ("heldout_blind10.jsonl", 47, 2, 9),
        ("heldout_blind11.jsonl", 37, 10, 7),
    ],
)
def test_the_session22_blind_batteries_by_counts(
    model: reply_model.ReplyModel,
    battery: str,
    accepts: int,
    wrong_accepts: int,
    limits_as_accepts: int,
) -> None:
    """Three batteries written blind to the code in session 22 (blind9: 60 episodes, blind10
    and blind11: 70 episodes, each x accept / scoped / reject / no_uptake; acceptances mostly
    without a yes-word, many with "only", "never" or "every" in a reason or an idiom), kept
    out of training and never read: counts only. Measured at the session's start: blind9
    accept 39/60, refusals or unrelated replies read as acceptances 3, limits read as
    acceptances 1; blind10 44/70, 2, 10; blind11 27/70, 10, 7. Retraining the reply model
    with blind10 and blind11 added read 3 more blind9 acceptances but lost one of blind6, and
    in the benchmark replays set 3 development probes right and 2 unread ones wrong (1 right):
    not kept. Session 23 (the reply's words and word pairs as features): blind9 42, 3, 1;
    blind10 46, 2, 9; blind11 36, 10, 7; once "the only one that ..." limits nothing: blind9
    43, blind10 47 acceptances; once "it only comes round ..." limits nothing: blind11 37.
    Floors and ceilings against regressions."""
    _assert_blind_counts(model, battery, accepts, wrong_accepts, limits_as_accepts)


@pytest.mark.parametrize(
    ("battery", "accepts", "wrong_accepts", "limits_as_accepts"),
    [
        ("heldout_blind12.jsonl", 37, 14, 1),
        ("heldout_blind13.jsonl", 43, 13, 1),
        ("heldout_blind14.jsonl", 34, 3, 3),
    ],
)
def test_the_session23_blind_batteries_by_counts(
    model: reply_model.ReplyModel,
    battery: str,
    accepts: int,
    wrong_accepts: int,
    limits_as_accepts: int,
) -> None:
    """Three batteries written blind to the code in session 23 (ids `t15-`, `t16-`, `t17-`;
    70 episodes x accept / scoped / reject / no_uptake each: acceptances by a reason with
    "never", "only", "not" or "every" in it, limits beside warm words and a hand-back,
    refusals without a no-word, warm remarks on someone else's news), kept out of training
    and never read: counts only. Session start (135f6cc): accept 23, 29, 26 of 70; refusals
    or unrelated replies read as acceptances 16, 12, 4; limits read as acceptances 1, 1, 3.
    Measured first at 40478de (the reply's words as model features): 35, 43, 33; 14, 13, 3;
    1, 1, 3. Retraining the model with them added changed nothing on the other held-out
    batteries (acceptances 416 -> 416 of 570), so they stayed held out. After the hand-back
    readings of the same session: 35, 43, 32; 14, 13, 3; 1, 1, 3; once "the only one that
    ..." limits nothing: 36, 43, 34 acceptances; once "it only comes round ..." does not
    either: 37, 43, 34. Floors and ceilings."""
    _assert_blind_counts(model, battery, accepts, wrong_accepts, limits_as_accepts)
