"""The statistics and report pages show cached figures with their time and a Recompute button;
with none yet, a "being computed" page that refreshes itself."""
import pytest
from django.urls import reverse

from campaigns.models import StatisticsResult
from campaigns.services.statistics import statistics_compute
from tests.analysis.test_selector import _study
from tests.services.test_statistics import queued  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db
REFRESH = '<meta http-equiv="refresh" content="5">'


@pytest.mark.parametrize("page", ["statistics", "report"])
def test_a_first_visit_shows_a_refreshing_page_then_the_figures(
        researcher_client, owner, queued, page,  # noqa: F811
        django_capture_on_commit_callbacks):
    campaign = _study(owner)
    url = reverse(f"admin:campaigns_campaign_{page}", args=[campaign.pk])
    with django_capture_on_commit_callbacks(execute=True):
        pending = researcher_client.get(url)
    assert pending.status_code == 200
    body = pending.content.decode()
    assert "being computed" in body and REFRESH in body
    for pk in queued:
        statistics_compute(result_id=pk)
    with django_capture_on_commit_callbacks(execute=True):
        shown = researcher_client.get(url).content.decode()
    assert "Computed from the data as of" in shown and "Recompute" in shown
    if page == "statistics":  # the side-by-side table is its own cached job
        assert REFRESH in shown
        for pk in queued[1:]:
            statistics_compute(result_id=pk)
        shown = researcher_client.get(url).content.decode()
    assert REFRESH not in shown and "Out of date" not in shown


def test_recompute_queues_a_job_and_comes_back_to_the_page(
        researcher_client, owner, queued,  # noqa: F811
        django_capture_on_commit_callbacks):
    campaign = _study(owner)
    url = reverse("admin:campaigns_campaign_statistics", args=[campaign.pk])
    researcher_client.get(url + "?exclude_flagged=1")
    row = StatisticsResult.objects.get(kind="statistics")
    statistics_compute(result_id=row.pk)
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(url + "?exclude_flagged=1")
    assert response.status_code == 302 and response["Location"].endswith("?exclude_flagged=1")
    assert row.pk in queued
    page = researcher_client.get(url + "?exclude_flagged=1").content.decode()
    assert "Recomputing" in page and REFRESH in page


def test_another_researcher_cannot_recompute(other_client, owner):
    campaign = _study(owner)
    url = reverse("admin:campaigns_campaign_statistics", args=[campaign.pk])
    assert other_client.post(url).status_code in (302, 403, 404)
    assert not StatisticsResult.objects.exists()


def test_recompute_also_recomputes_the_side_by_side_table_shown(
        researcher_client, owner, queued,  # noqa: F811
        django_capture_on_commit_callbacks):
    campaign = _study(owner)
    url = reverse("admin:campaigns_campaign_statistics", args=[campaign.pk])
    for _ in range(2):  # the statistics, then the side-by-side table of the first judged item
        with django_capture_on_commit_callbacks(execute=True):
            researcher_client.get(url)
        for pk in queued:
            statistics_compute(result_id=pk)
    assert StatisticsResult.objects.filter(status="done").count() == 2
    queued.clear()
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.post(url)
    assert sorted(queued) == sorted(StatisticsResult.objects.values_list("pk", flat=True))
