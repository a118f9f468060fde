"""The submissions list: suggested actions and bonus sums on a campaign with careless workers."""
import csv
import io
import statistics
from datetime import timedelta
from decimal import Decimal

import pandas as pd
import pytest
from django.utils import timezone

from campaigns.analysis.approvals import exceptionally_fast
from campaigns.models import Assignment, Worker
from campaigns.selectors.approvals import (
    campaign_submissions,
    prolific_approve_list,
    prolific_bonus_csv,
    submissions_csv,
)
from tests.analysis.helpers import add_item, annotate
from tests.factories import CONTINUATION_SCHEMA, make_campaign

pytestmark = pytest.mark.django_db

PER_ITEM, PER_GOLD = Decimal("0.10"), Decimal("0.25")
# pid: (total seconds, seconds per item, attention answers, gold answers)
CAREFUL = ((2, 2), (4, 4))
PLAN = {
    "p-attention": (610, 20, (5, 5), (4, 4)),  # fails both attention checks
    "p-rushed": (40, 2, (2, 2), (4, 4)),  # hands in in 40 s: a statistical outlier
    "p-one-slip": (590, 20, (2, 5), (4, 1)),  # one attention failure, one gold right
    "p-fast-items": (600, 1, (2, 2), (4, 4)),  # fast per item, normal overall time
    "p-gold-wrong": (605, 20, (2, 2), (1, 1)),  # gold accuracy 0 %
    **{f"p-ok{n}": (580 + 5 * n, 20, *CAREFUL) for n in range(10)},
}


def _study(owner):
    campaign = make_campaign(owner=owner, schema=CONTINUATION_SCHEMA,
                             bonus_per_item=PER_ITEM, bonus_per_gold_correct=PER_GOLD)
    regular = [add_item(campaign, f"i{n}") for n in range(4)]
    attention = [add_item(campaign, f"att{n}", control="attention", gold={"coherence": 2})
                 for n in range(2)]
    gold = [add_item(campaign, f"gold{n}", control="gold", gold={"coherence": 4})
            for n in range(2)]
    start = timezone.now() - timedelta(hours=2)
    for k, (pid, (total, per_item, checks, golds)) in enumerate(PLAN.items()):
        worker = Worker.objects.create(campaign=campaign, platform="prolific", platform_id=pid)
        assignment = Assignment.objects.create(
            campaign=campaign, worker=worker, status="submitted", deadline=start,
            study_id="study-1", session_id=f"sess-{pid}", completion_code="C0DE")
        began = start + timedelta(minutes=k)
        Assignment.objects.filter(pk=assignment.pk).update(
            started_at=began, submitted_at=began + timedelta(seconds=total))
        for n, item in enumerate(regular):
            annotate(campaign, pid, item, {"coherence": 1 + (n + k) % 5, "sentiment": 3},
                     seconds=per_item + n % 2, platform="prolific")
        for item, value in zip(attention + gold, checks + golds, strict=True):
            annotate(campaign, pid, item, {"coherence": value, "sentiment": 3},
                     seconds=per_item, platform="prolific")
    return campaign


def test_attention_failures_and_speeders_get_the_actions_prolific_allows(owner):
    rows = {r["participant_id"]: r for r in campaign_submissions(campaign=_study(owner))}
    assert len(rows) == len(PLAN)
    assert (rows["p-attention"]["action"], rows["p-attention"]["rejection_category"]) == (
        "reject", "FAILED_CHECK")
    assert (rows["p-rushed"]["action"], rows["p-rushed"]["rejection_category"]) == (
        "reject", "TOO_QUICKLY")
    assert rows["p-one-slip"]["action"] == "review"
    assert "1 attention check" in rows["p-one-slip"]["reason"]
    assert rows["p-fast-items"]["action"] == "review" and rows["p-fast-items"]["too_fast"]
    assert rows["p-gold-wrong"]["action"] == "review"
    assert "gold accuracy 0%" in rows["p-gold-wrong"]["reason"]
    assert {rows[f"p-ok{n}"]["action"] for n in range(10)} == {"approve"}
    ok = rows["p-ok0"]
    assert (ok["submission_id"], ok["study_id"], ok["completion_code"]) == (
        "sess-p-ok0", "study-1", "C0DE")
    assert (ok["attention_n"], ok["attention_failures"], ok["gold_n"], ok["items"]) == (2, 0, 2, 4)
    assert ok["seconds_taken"] == 580.0


def test_the_rushed_submission_is_the_only_one_three_sd_below_the_mean():
    totals = {pid: plan[0] for pid, plan in PLAN.items()}
    mean, sd = statistics.mean(totals.values()), statistics.stdev(totals.values())
    expected = {pid for pid, t in totals.items() if t < mean - 3 * sd}
    fast = exceptionally_fast(pd.Series(totals, dtype=float))
    assert set(fast[fast].index) == expected == {"p-rushed"}
    assert not exceptionally_fast(pd.Series([10.0, 600.0], dtype=float)).any()  # too few


def test_bonus_is_the_rule_applied_to_items_and_correct_gold_answers(owner):
    rows = campaign_submissions(campaign=_study(owner))
    for row in rows:
        _, _, _, golds = PLAN[row["participant_id"]]
        expected = 4 * PER_ITEM + sum(PER_GOLD for g in golds if g == 4)
        assert Decimal(row["bonus"]) == expected, row["participant_id"]
    assert sum(Decimal(r["bonus"]) for r in rows) == Decimal("0.40") * 15 + Decimal("0.25") * (
        2 * 13 + 1)


def test_the_prolific_files_hold_the_right_participants(owner):
    rows = campaign_submissions(campaign=_study(owner))
    bonus = [line.split(",") for line in prolific_bonus_csv(rows).splitlines()]
    paid = {pid for pid, _ in bonus}
    assert paid == set(PLAN) - {"p-attention", "p-rushed"}
    assert dict(bonus)["p-one-slip"] == "0.65" and dict(bonus)["p-gold-wrong"] == "0.40"
    approve = list(csv.DictReader(io.StringIO(prolific_approve_list(rows))))
    assert {r["participant_id"] for r in approve} == {f"p-ok{n}" for n in range(10)}
    assert all(r["submission_id"] == f"sess-{r['participant_id']}" for r in approve)
    table = list(csv.DictReader(io.StringIO(submissions_csv(rows))))
    assert len(table) == len(PLAN) and table[0]["action"] in ("approve", "reject", "review")


def test_a_campaign_without_submissions_has_an_empty_list(owner):
    campaign = make_campaign(owner=owner, schema=CONTINUATION_SCHEMA)
    assert campaign_submissions(campaign=campaign) == []
    assert prolific_bonus_csv([]) == ""


def _simulated_study(owner, *, bots: int, humans: int, seed: int = 30):
    """The summary-consistency seed (real articles and summaries) worked through the hot path:
    bots answer every item in 0.05 s; people read at their own pace (words per minute drawn
    log-normally around 238, Brysbaert 2019, up to the fastest skimmers) and then answer."""
    import random

    from django.contrib.auth import get_user_model

    from campaigns.schema import parse_schema
    from campaigns.services.seeds import seed_campaigns_load
    from campaigns.work import annotation_submit, assignment_claim

    rng = random.Random(seed)
    seed_owner = get_user_model().objects.create_user("seed-owner")
    (campaign, _), = seed_campaigns_load(owner=seed_owner, slugs=("summary-consistency",))
    campaign.owner = owner
    campaign.annotations_per_item = bots + humans
    campaign.save()
    campaign.items.update(slots_wanted=bots + humans)
    schema = parse_schema(campaign.schema)
    fields = [d.field for d in schema.display]
    kinds = ["bot"] * bots + ["human"] * humans
    for n, kind in enumerate(kinds):
        worker = Worker.objects.create(campaign=campaign, platform="prolific",
                                       platform_id=f"{kind}-{n}")
        assignment = assignment_claim(campaign=campaign, worker=worker)
        wpm = min(900.0, rng.lognormvariate(5.47, 0.35))  # median e^5.47 = 238 words/minute
        for slot in assignment.slots.select_related("item").order_by("position"):
            words = sum(len(str(slot.item.data.get(f) or "").split()) for f in fields)
            seconds = 0.05 if kind == "bot" else words / wpm * 60 + rng.uniform(3, 20)
            answers = {q.id: q.example_answer(slot.item.data, rng) for q in schema.questions}
            annotation_submit(assignment=assignment, position=slot.position, answers=answers,
                              seconds_spent=seconds)
    return campaign


def test_the_default_reading_floor_sends_simulated_bots_to_review_and_no_person(owner):
    """The figure docs/analysis.md reports: with no floor set, 30 of 30 bots (0.05 s per item)
    are suggested for review, with the rule named, and none of 20 simulated people. The bots
    are the majority, so the typical worker is a bot and the relative rule sees none."""
    campaign = _simulated_study(owner, bots=30, humans=20)
    rows = {r["participant_id"]: r for r in campaign_submissions(campaign=campaign)}
    bots = [r for pid, r in rows.items() if pid.startswith("bot")]
    people = [r for pid, r in rows.items() if pid.startswith("human")]
    assert len(bots) == 30 and len(people) == 20
    flagged_bots = [r for r in bots if r["action"] != "approve"]
    assert len(flagged_bots) / len(bots) == 1.0
    assert all("under the minimum of 0.06 s" in r["reason"] for r in bots)
    assert [r["reason"] for r in people if r["action"] != "approve"] == []
    # Switched off (0), the bots pass again: the default is what catches them.
    campaign.min_seconds_per_word = 0
    campaign.save()
    passed = [r for r in campaign_submissions(campaign=campaign)
              if r["participant_id"].startswith("bot") and r["action"] == "approve"]
    assert len(passed) == 30
