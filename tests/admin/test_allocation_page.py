"""The statistics page's "Allocation design" section (templates/admin/campaigns/
_allocation_design.html): the strategy or strategies the annotations were handed out under,
their periods and what each biases, in the report's wording (campaigns/analysis/
allocation_design.py), escaped."""
import re

import pytest
from django.urls import reverse
from django.utils.html import escape

from campaigns.analysis.allocation_design import DESIGNS
from campaigns.models import Item, StatisticsResult
from campaigns.services.campaigns import campaign_update
from tests.analysis.test_allocation_design import work_once
from tests.factories import make_campaign

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager", "few_resamples")]


def _page(client, campaign):
    response = client.get(reverse("admin:campaigns_campaign_statistics", args=[campaign.pk]))
    assert response.status_code == 200
    return response.content.decode()


def _rows(page, css):
    table = page[page.index(f'class="stats-table {css}"'):]
    table = table[:table.index("</table>")]
    return [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row,
                                                           flags=re.S)]
            for row in re.findall(r"<tr data-allocation[^>]*>(.*?)</tr>", table, flags=re.S)]


def _campaign(owner):
    campaign = make_campaign(owner=owner, annotations_per_item=2)
    for n, system in enumerate(["A", "B", "A", "B"]):
        Item.objects.create(campaign=campaign, external_id=f"i{n}", system=system,
                            data={"prompt": "p", "completion": "c"}, slots_wanted=2)
    return campaign


def test_a_campaign_whose_allocation_changed_shows_both_periods_and_what_each_biases(
        researcher_client, owner):
    campaign = _campaign(owner)
    for n in range(4):
        work_once(campaign, f"u{n}", 1 + n % 5)
    campaign_update(campaign=campaign, allocation="dynamic_redundancy",
                    min_annotations_per_item=2, max_annotations_per_item=4)
    for n in range(6):
        work_once(campaign, f"d{n}", 5 - n % 5)

    page = _page(researcher_client, campaign)
    assert "The strategy changed during the campaign." in page
    periods = _rows(page, "stats-allocation-periods")
    assert [p[0] for p in periods] == ["uniform", "dynamic redundancy"]
    assert sum(int(p[2]) for p in periods) == campaign.annotations.count()
    strategies = _rows(page, "stats-allocation")
    assert [s[0] for s in strategies] == ["uniform", "dynamic redundancy"]
    redundancy = DESIGNS["dynamic_redundancy"]
    assert strategies[0][5] == escape(DESIGNS["uniform"].biased) == "nothing"
    assert strategies[1][3:] == [escape(redundancy.did), escape(redundancy.valid),
                                 escape(redundancy.biased), ", ".join(redundancy.affects)]


def test_a_campaign_without_annotations_states_its_current_strategy(researcher_client,
                                                                       owner):
    campaign = _campaign(owner)
    campaign_update(campaign=campaign, allocation="adaptive_precision")
    page = _page(researcher_client, campaign)
    assert ("No annotations yet. adaptive precision: "
            f"{escape(DESIGNS['adaptive_precision'].did)}.") in page
    assert "stats-allocation-periods" not in page


def test_figures_computed_before_the_design_was_recorded_show_no_section(researcher_client,
                                                                          owner):
    campaign = _campaign(owner)
    work_once(campaign, "u0", 3)
    _page(researcher_client, campaign)
    for row in StatisticsResult.objects.filter(campaign=campaign):
        if row.result and "allocation_design" in row.result:
            del row.result["allocation_design"]
            row.save()
    page = _page(researcher_client, campaign)
    assert "Scores per system" in page and 'id="allocation-design"' not in page


def test_an_unknown_strategy_name_is_escaped(researcher_client, owner):
    campaign = _campaign(owner)
    work_once(campaign, "u0", 3)
    campaign.assignments.update(allocation="<b>odd</b>")
    page = _page(researcher_client, campaign)
    assert "&lt;b&gt;odd&lt;/b&gt;" in page and "<b>odd</b>" not in page
