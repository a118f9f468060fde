"""campaigns/services/allocation.py on a real database: small cases worked out by hand show
the priorities moving work where it should, through the product's own claim and save; the
stopping rule stops the hand-out at its target and a raised target reopens it."""
import math

import pytest
from django.urls import reverse

from campaigns.admin.forms import allocation_state_text
from campaigns.analysis.allocation import in_audit_sample
from campaigns.analysis.report_cells import _md
from campaigns.errors import NoWorkAvailable
from campaigns.models import AllocationChange, Assignment, Campaign, Item
from campaigns.selectors.analysis.report import evaluation_report
from campaigns.services.allocation import (
    allocation_issues,
    allocations_update,
    campaign_allocate,
)
from campaigns.services.campaigns import campaign_update
from campaigns.work import annotation_submit, assignment_claim, worker_get_or_create
from tests.api.conftest import token_client
from tests.factories import CONTINUATION_SCHEMA, PAIRWISE_SCHEMA, make_campaign

pytestmark = pytest.mark.django_db

T_975_3 = 3.182446305284263  # Student's t, 97.5th percentile, 3 degrees of freedom (tables)


def items(campaign, specs, ids=None):
    """Items by (external id, system) or (external id, (system a, system b)); with the given
    ids when dynamic redundancy's audit sample (chosen by id) must be in or out."""
    made = []
    for n, (external_id, system) in enumerate(specs):
        data = {"prompt": external_id, "completion": "c"}
        if isinstance(system, tuple):
            data["outputs"] = [{"system": s, "text": f"{s} says"} for s in system]
            system = ""
        made.append(Item.objects.create(id=ids[n] if ids else None, campaign=campaign,
                                        external_id=external_id, system=system, data=data,
                                        slots_wanted=campaign.annotations_per_item))
    return made


def work_once(campaign, name, answer):
    """One worker claims one assignment and answers each item with answer(item, n_before)."""
    worker = worker_get_or_create(campaign=campaign, platform="link", platform_id=name)
    assignment = assignment_claim(campaign=campaign, worker=worker)
    got = []
    for slot in assignment.slots.select_related("item").order_by("position"):
        annotation_submit(assignment=assignment, position=slot.position,
                          answers=answer(slot.item, slot.item.annotations_done),
                          seconds_spent=1)
        got.append(slot.item.external_id)
    return got


def rate(item, before):
    """System A's items always get 5; B's get 1 from their first rater and 5 from the next."""
    value = 5 if item.system == "A" else (1, 5)[before % 2]
    return {"coherence": value, "sentiment": 3}


def test_adaptive_precision_sends_the_next_ratings_to_the_widest_system(owner):
    campaign = make_campaign(owner=owner, allocation="adaptive_precision",
                             min_annotations_per_item=2, max_annotations_per_item=4)
    items(campaign, [("a1", "A"), ("a2", "A"), ("b1", "B"), ("b2", "B")])
    campaign_allocate(campaign=campaign)  # everything below the minimum: all alike
    first = [work_once(campaign, f"w{n}", rate)[0] for n in range(8)]
    assert first == ["a1", "a2", "b1", "b2"] * 2  # the floor: least-filled first

    campaign_allocate(campaign=campaign)
    # By hand: A's ratings are 5, 5, 5, 5 (half-width 0); B's coherence 1, 5, 1, 5: mean 3,
    # sd sqrt(16 / 3), half-width t(0.975, 3) sd / 2; the default target is 1.
    b_width = T_975_3 * math.sqrt(16 / 3) / 2
    priority = dict(Item.objects.values_list("external_id", "priority"))
    assert priority["a1"] == priority["a2"] == 0.0
    assert priority["b1"] == pytest.approx(b_width) == priority["b2"]
    later = [work_once(campaign, f"v{n}", rate)[0] for n in range(4)]
    assert later == ["b1", "b2", "b1", "b2"]  # B until its items reach the maximum
    assert work_once(campaign, "v5", rate) == ["a1"]  # then A again (up to the maximum)
    epochs = set(Assignment.objects.values_list("allocation", "allocation_epoch"))
    assert epochs == {("adaptive_precision", 1), ("adaptive_precision", 2)}


def ids(n, *, audited, start=10**9):
    """n item ids far above the table's sequence, in (or out of) the audit sample."""
    return [i for i in range(start, start + 1000) if in_audit_sample(i) == audited][:n]


def test_dynamic_redundancy_closes_agreeing_items_at_the_minimum(owner):
    campaign = make_campaign(owner=owner, allocation="dynamic_redundancy",
                             min_annotations_per_item=2, max_annotations_per_item=4)
    items(campaign, [("a1", "A"), ("b1", "B")], ids=ids(2, audited=False))
    campaign_allocate(campaign=campaign)
    assert [work_once(campaign, f"w{n}", rate)[0] for n in range(4)] == ["a1", "b1"] * 2
    campaign_allocate(campaign=campaign)
    # a1: 5 and 5 agree: closed at 2. b1: 1 and 5 differ by more than the spread (1): open.
    state = {i: (w, p) for i, w, p in Item.objects.values_list(
        "external_id", "slots_wanted", "priority")}
    assert state == {"a1": (2, 0.0), "b1": (4, 0.5)}
    assert [work_once(campaign, f"v{n}", rate)[0] for n in range(2)] == ["b1", "b1"]
    with pytest.raises(Exception) as ended:
        work_once(campaign, "v9", rate)
    campaign.refresh_from_db()
    assert campaign.status == "closed", ended.value  # every item has what it wants


def test_dynamic_redundancy_audits_agreement_and_falls_back_when_it_does_not_settle(
        owner, researcher_client):
    """Ten audited items and two others, numeric answers agreeing within 1. Every item's first
    two raters give 5; later raters give 1 (the panel's mean 3, two points from the agreed 5)
    or 5 (kept). By hand: after the first pass the two others close at 2 and the audited
    ones go on to 4; with 0 of 10 kept the audit fails and the two others reopen to 4; with
    10 of 10 kept they stay closed."""
    for later, fails in ((1, True), (5, False)):
        campaign = make_campaign(owner=owner, allocation="dynamic_redundancy",
                                 min_annotations_per_item=2, max_annotations_per_item=4)
        audited = ids(10, audited=True, start=10**9 + 1000 * later)
        others = ids(2, audited=False, start=10**9 + 1000 * later)
        items(campaign, [(f"a{n}", "A") for n in range(10)] + [("o0", "A"), ("o1", "A")],
                     ids=audited + others)

        def answer(item, before, later=later):
            return {"coherence": 5 if before < 2 else later, "sentiment": 3}

        campaign_allocate(campaign=campaign)
        for n in range(24):
            work_once(campaign, f"{later}w{n}", answer)
        campaign_allocate(campaign=campaign)
        wanted = dict(Item.objects.filter(campaign=campaign).values_list("external_id",
                                                                        "slots_wanted"))
        assert wanted == {**{f"a{n}": 4 for n in range(10)}, "o0": 2, "o1": 2}
        assert campaign.allocation_audit == ""  # none at the maximum yet
        for n in range(20):
            assert work_once(campaign, f"{later}v{n}", answer)[0].startswith("a")
        campaign_allocate(campaign=campaign)
        wanted = dict(Item.objects.filter(pk__in=others).values_list("external_id",
                                                                     "slots_wanted"))
        assert wanted == ({"o0": 4, "o1": 4} if fails else {"o0": 2, "o1": 2})
        kept = 0 if fails else 10
        assert f"{kept} of 10 audited items" in campaign.allocation_audit
        assert ("every item now gets the maximum" in campaign.allocation_audit) == fails
    # the finding as the researcher reads it: the dashboard, the API and the report
    dashboard = researcher_client.get(
        reverse("admin:campaigns_campaign_dashboard", args=[campaign.pk])).content.decode()
    assert "10 of 10 audited items whose first raters agreed kept that answer" in dashboard
    assert allocation_state_text(campaign).endswith(campaign.allocation_audit)  # the admin form
    api = token_client(owner).get(f"/api/campaigns/{campaign.slug}/").json()
    assert api["allocation_audit"] == campaign.allocation_audit
    markdown = evaluation_report(campaign=campaign)["markdown"]
    assert _md(campaign.allocation_audit) in markdown


def prefer(winners):
    """Pairwise answers: the first-listed system of the item wins when winners says so."""
    def answer(item, before):
        systems = [o["system"] for o in item.data["outputs"]]
        wins = winners[item.external_id][before % len(winners[item.external_id])]
        return {"preference": {"choice": "A" if wins else "B", "strength": "clearly",
                               "order": systems}}
    return answer


def test_adaptive_ranking_sends_work_to_the_least_certain_pair_and_records_the_switch(owner):
    campaign = make_campaign(owner=owner, schema=PAIRWISE_SCHEMA, annotations_per_item=3)
    items(campaign, [("p12", ("s1", "s2")), ("p23", ("s2", "s3"))])
    answer = prefer({"p12": [True], "p23": [True, False]})
    for n in range(6):  # uniform: 3 each; s1 beats s2 3-0, s2 and s3 go 2-1
        work_once(campaign, f"w{n}", answer)
    campaign_update(campaign=campaign, allocation="adaptive_ranking",
                    min_annotations_per_item=1, max_annotations_per_item=6)
    # By hand with half a virtual win each way: s1-s2 at 3.5 to 0.5 is far more certain
    # than s2-s3 at 2.5 to 1.5, so p23 has the higher chance of a wrong order.
    priority = dict(Item.objects.values_list("external_id", "priority"))
    assert 0 < priority["p12"] < priority["p23"] < 0.5
    assert work_once(campaign, "v1", answer) == ["p23"]
    change = AllocationChange.objects.get(campaign=campaign)
    assert (change.allocation_before, change.allocation_after, change.annotations_before) == (
        "uniform", "adaptive_ranking", 6)
    assert Assignment.objects.order_by("-id").values_list(
        "allocation", "allocation_epoch")[0] == ("adaptive_ranking", change.epoch)


@pytest.mark.parametrize(("minimum", "next_item"), [(1, "p12b"), (0, "p23")])
def test_a_minimum_of_0_lets_adaptive_ranking_skip_items_of_a_pair_already_compared(
        owner, minimum, next_item):
    campaign = make_campaign(owner=owner, schema=PAIRWISE_SCHEMA, annotations_per_item=3,
                             allocation="adaptive_ranking", min_annotations_per_item=minimum,
                             max_annotations_per_item=3)
    items(campaign, [("p12a", ("s1", "s2")), ("p12b", ("s1", "s2")), ("p23", ("s2", "s3"))])
    campaign_allocate(campaign=campaign)
    answer = prefer({"p12a": [True], "p12b": [True], "p23": [True]})
    assert work_once(campaign, "w0", answer) == ["p12a"]  # all at one half: the first id
    campaign_allocate(campaign=campaign)
    # By hand: s1 beat s2 once (1.5 to 0.5 with the prior), so their order is likelier right
    # than that of s2 and s3, who never met (their strengths stay equal: one half). With a
    # floor of one per item the unjudged item of the settled pair still goes first.
    priority = dict(Item.objects.values_list("external_id", "priority"))
    unjudged = {"p23": 1000.0, "p12b": 1000.0} if minimum else {
        "p23": pytest.approx(0.5), "p12b": pytest.approx(priority["p12a"])}
    assert {k: priority[k] for k in unjudged} == unjudged
    assert priority["p12a"] < 0.5
    assert work_once(campaign, "w1", answer) == [next_item]


@pytest.mark.parametrize(("allocation", "issue"), [
    ("adaptive_ranking", None),
    ("dynamic_redundancy", "min_annotations_per_item: must be a whole number from 1 to 1000 "
                           "(0, no per-item floor, only under adaptive_ranking)"),
    ("adaptive_precision", "min_annotations_per_item: must be a whole number from 1 to 1000 "
                           "(0, no per-item floor, only under adaptive_ranking)")])
def test_a_minimum_of_0_is_valid_under_adaptive_ranking_only(allocation, issue):
    schema = PAIRWISE_SCHEMA if allocation != "adaptive_precision" else CONTINUATION_SCHEMA
    found = [f"{i.path}: {i.message}" for i in allocation_issues(
        {"allocation": allocation, "min_annotations_per_item": 0,
         "max_annotations_per_item": 3, "schema": schema})]
    assert found == ([issue] if issue else [])


def test_the_budget_stops_the_hand_out_and_a_raised_budget_reopens_it(owner, client,
                                                                      researcher_client):
    campaign = make_campaign(owner=owner, stop_when={"max_annotations": 3},
                             completion_code_no_work="NOWORK1")
    items(campaign, [("a1", "A"), ("a2", "A")])
    for n in range(3):
        work_once(campaign, f"w{n}", rate)
    assert allocations_update() == 1  # the periodic job sees the target met
    campaign.refresh_from_db()
    assert "budget of 3 annotations is spent" in campaign.allocation_stopped
    assert campaign.status == Campaign.Status.LIVE  # stopped, not closed: it can go on
    with pytest.raises(NoWorkAvailable):
        work_once(campaign, "late", rate)
    page = client.post(reverse("campaigns:entry", args=[campaign.slug]),
                       {"PROLIFIC_PID": "a" * 24, "STUDY_ID": "s", "SESSION_ID": "t"})
    assert page.status_code == 409 and "NOWORK1" in page.content.decode()  # as when full
    dashboard = researcher_client.get(
        reverse("admin:campaigns_campaign_dashboard", args=[campaign.pk]))
    assert "the stopping target is met" in dashboard.content.decode()
    assert "budget of 3 annotations is spent" in dashboard.content.decode()

    campaign_update(campaign=campaign, stop_when={"max_annotations": 6})
    campaign.refresh_from_db()
    assert campaign.allocation_stopped == ""
    assert work_once(campaign, "again", rate)


def test_a_half_width_target_stops_when_every_system_is_that_precise(owner):
    campaign = make_campaign(owner=owner, allocation="adaptive_precision",
                             min_annotations_per_item=2, max_annotations_per_item=4,
                             stop_when={"half_width": 0.5})
    items(campaign, [("a1", "A"), ("a2", "A"), ("b1", "B"), ("b2", "B")])
    campaign_allocate(campaign=campaign)
    for n in range(8):
        work_once(campaign, f"w{n}", lambda item, before: {"coherence": 4, "sentiment": 4})
    assert "within ±0.5" in campaign_allocate(campaign=campaign)
    campaign_update(campaign=campaign, stop_when={})
    assert campaign.allocation_stopped == ""


def test_the_report_says_what_the_adaptive_design_biases(owner):
    campaign = make_campaign(owner=owner, allocation="dynamic_redundancy",
                             min_annotations_per_item=2, max_annotations_per_item=3)
    items(campaign, [("a1", "A"), ("b1", "B")])
    campaign_allocate(campaign=campaign)
    for n in range(4):
        work_once(campaign, f"w{n}", rate)
    markdown = evaluation_report(campaign=campaign)["markdown"]
    assert "- Allocation: dynamic redundancy" in markdown
    assert "Biased: per-item agreement and inter-rater reliability" in markdown
    assert "noisier than uniform allocation's with the same budget" in markdown
