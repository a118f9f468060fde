"""The campaign dashboard: figures with data, an empty campaign, and a constant query count."""
import json
import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from campaigns.selectors.dashboard import campaign_dashboard, campaign_progress
from tests.admin.conftest import add_items
from tests.admin.simulate import simulate
from tests.factories import RUBRIC_SCHEMA, SUMMARY_SCHEMA, TRANSLATION_SCHEMA, make_campaign

pytestmark = pytest.mark.django_db


def dashboard_url(campaign):
    return reverse("admin:campaigns_campaign_dashboard", args=[campaign.pk])


def test_it_renders_progress_and_chart_data_for_a_campaign_with_answers(researcher_client,
                                                                        campaign):
    add_items(campaign, 4)
    simulate(campaign, workers=3)
    simulate(campaign, workers=1, submit=False, prefix="open")
    response = researcher_client.get(dashboard_url(campaign))
    assert response.status_code == 200
    board = response.context["dashboard"]
    assert (board.overall.done, board.overall.wanted) == (4, 12)
    assert board.overall.in_progress == 0 and board.overall.remaining == 8
    assert [p.system for p in board.per_system] == ["sys-a", "sys-b"]
    assert board.workers_total == 4 and board.workers_active == 1
    assert board.annotations == 4 and board.median_seconds is not None
    data = json.loads(json.dumps(response.context["charts"]))  # what json_script sends
    coherence = next(c for c in data["distributions"] if c["question"] == "coherence")
    assert sum(sum(s["data"]) for s in coherence["series"]) == 4
    assert [c["question"] for c in data["distributions"]] == ["coherence", "sentiment"]
    content = response.content.decode()
    assert 'id="dashboard-data"' in content
    assert "vendor/chartjs/chart.umd.min.js" in content
    assert "<script>" not in content  # data through json_script, code in static files


def test_it_renders_a_campaign_without_items_or_answers(researcher_client, campaign):
    response = researcher_client.get(dashboard_url(campaign))
    assert response.status_code == 200
    board = response.context["dashboard"]
    assert board.overall.wanted == 0 and board.median_seconds is None
    assert board.per_day == [] and board.workers_total == 0
    assert "No items yet" in response.content.decode()


def test_the_number_of_queries_does_not_grow_with_the_data(researcher_client, researcher):
    small, large = (make_campaign(owner=researcher) for _ in range(2))
    add_items(small, 2)
    add_items(large, 8)
    simulate(small, workers=1)
    simulate(large, workers=12, rng=random.Random(3))
    counts = []
    for campaign in (small, large):
        with CaptureQueriesContext(connection) as queries:
            assert researcher_client.get(dashboard_url(campaign)).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1], counts


@pytest.mark.parametrize("schema", [SUMMARY_SCHEMA, RUBRIC_SCHEMA, TRANSLATION_SCHEMA],
                         ids=["lines-choice", "rubric", "slider-flags"])
def test_every_scored_question_kind_gets_a_distribution(owner, schema):
    campaign = make_campaign(owner=owner, schema=schema)
    from campaigns.models import Item

    data = {"story": "A. B.", "summary": "One. Two.", "answer": "x", "source": "s",
            "translation": "t"}
    for i in range(3):
        Item.objects.create(campaign=campaign, external_id=f"i{i}", system=f"s{i % 2}",
                            data=data, slots_wanted=3)
    simulate(campaign, workers=3)
    charts = campaign_dashboard(campaign=campaign).charts
    assert charts, "no chart"
    for chart in charts:
        assert set(chart.series) == {"s0", "s1"}
        assert all(len(values) == len(chart.labels) for values in chart.series.values())
    if schema is RUBRIC_SCHEMA:
        assert charts[0].kind == "mean" and charts[0].labels[-1] == "C15"
        totals = charts[1]
        assert totals.question == "rubric.total" and sum(map(sum, totals.series.values())) == 3


def test_progress_is_also_available_on_its_own(owner, campaign):
    add_items(campaign, 2)
    overall, per_system = campaign_progress(campaign=campaign)
    assert overall.wanted == 6 and overall.remaining == 6 and len(per_system) == 2


@pytest.mark.parametrize("schema", [RUBRIC_SCHEMA, TRANSLATION_SCHEMA], ids=["rubric", "slider"])
def test_the_counts_made_by_the_database_match_the_stored_answers(owner, schema):
    from collections import Counter, defaultdict

    from campaigns.models import Annotation, Item

    campaign = make_campaign(owner=owner, schema=schema)
    for i in range(4):
        Item.objects.create(campaign=campaign, external_id=f"i{i}", system=f"s{i % 2}",
                            data={"answer": "x", "source": "s", "translation": "t"},
                            slots_wanted=3)
    simulate(campaign, workers=8, rng=random.Random(11))
    expected = defaultdict(Counter)
    sums = defaultdict(Counter)
    for a in Annotation.objects.filter(campaign=campaign).select_related("item"):
        first = schema["questions"][0]
        value = a.answers[first["id"]]
        if first["kind"] == "rubric":
            sums[a.item.system]["n"] += 1
            for criterion, score in value.items():
                sums[a.item.system][criterion] += score
        else:
            expected[a.item.system][min(int(value // 10), 9)] += 1
    chart = campaign_dashboard(campaign=campaign).charts[0]
    for system, values in chart.series.items():
        if schema is RUBRIC_SCHEMA:
            n = sums[system]["n"]
            assert values == [round(sums[system][f"C{k}"] / n, 2) for k in range(1, 16)]
        else:
            assert values == [expected[system][b] for b in range(10)]


def test_llm_judges_answers_stay_out_of_the_human_figures(owner):
    from tests.analysis.helpers import add_item, annotate

    campaign = make_campaign(owner=owner)
    item = add_item(campaign, "i1", system="A")
    annotate(campaign, "w1", item, {"coherence": 4, "sentiment": 2})
    before = campaign_dashboard(campaign=campaign)
    annotate(campaign, "gpt-4o", item, {"coherence": 1, "sentiment": 5}, platform="llm")
    after = campaign_dashboard(campaign=campaign)
    assert (after.annotations, after.judge_annotations) == (1, 1)
    assert after.per_day == before.per_day
    assert [c.as_json() for c in after.charts] == [c.as_json() for c in before.charts]
