"""The statistics and report endpoints answer from the cache: 202 while the first computation
runs, then the figures with computed_at and stale; POST recomputes."""
import pytest

from campaigns.models import StatisticsResult
from campaigns.services.statistics import statistics_compute
from tests.api.conftest import make_annotation, make_items
from tests.services.test_statistics import queued  # noqa: F401 - the fixture

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


@pytest.mark.parametrize("endpoint", ["stats", "report"])
def test_a_first_request_is_a_202_then_the_figures_with_their_time(
        api, campaign, queued, endpoint, django_capture_on_commit_callbacks):  # noqa: F811
    for item in make_items(campaign, 2):
        make_annotation(campaign, item, worker_id="W1")
    url = f"/api/campaigns/{campaign.slug}/{endpoint}/?exclude_flagged=true"
    with django_capture_on_commit_callbacks(execute=True):
        started = api.get(url)
    assert started.status_code == 202, started.json()
    assert started.json()["status"] == "queued" and started["Retry-After"] == "5"
    assert started.json()["url"].endswith(url)
    assert api.get(url).status_code == 202  # still computing; no second job
    assert len(queued) == 1
    statistics_compute(result_id=queued[0])
    done = api.get(url)
    assert done.status_code == 200, done.json()
    body = done.json()
    assert body["campaign"] == campaign.slug and body["stale"] is False
    assert body["computed_at"] and body["computing"] is False


def test_post_recomputes_and_get_marks_the_old_figures_stale_meanwhile(
        api, campaign, queued, django_capture_on_commit_callbacks):  # noqa: F811
    url = f"/api/campaigns/{campaign.slug}/stats/"
    api.get(url)
    statistics_compute(result_id=StatisticsResult.objects.get().pk)
    make_annotation(campaign, make_items(campaign, 1)[0])
    assert api.get(url).json()["stale"] is True
    with django_capture_on_commit_callbacks(execute=True):
        again = api.post(url)
    assert again.status_code == 202 and again.json()["status"] == "queued"
    meanwhile = api.get(url).json()
    assert meanwhile["computing"] is True and meanwhile["counts"]["annotations"] == 0
    statistics_compute(result_id=queued[-1])
    fresh = api.get(url).json()
    assert (fresh["stale"], fresh["counts"]["annotations"]) == (False, 1)


def test_a_failed_first_computation_is_a_409_with_the_reason(api, campaign, monkeypatch):
    from campaigns.services import statistics as service

    def broken(campaign, options):
        raise ValueError("no numbers")

    monkeypatch.setitem(service.COMPUTE, service.Kind.STATISTICS, broken)
    response = api.get(f"/api/campaigns/{campaign.slug}/stats/")
    assert response.status_code == 409
    assert response.json()["extra"]["code"] == "statistics_failed"
    assert "no numbers" in response.json()["message"]


def test_another_researcher_can_neither_read_nor_recompute(other_api, campaign):
    url = f"/api/campaigns/{campaign.slug}/stats/"
    assert other_api.get(url).status_code == 404
    assert other_api.post(url).status_code == 404
    assert not StatisticsResult.objects.exists()


def test_bad_options_are_refused_before_anything_is_queued(api, campaign):
    response = api.post(f"/api/campaigns/{campaign.slug}/stats/?alpha=7")
    assert response.status_code == 400 and not StatisticsResult.objects.exists()


def test_polling_a_failed_computation_does_not_start_it_again_only_post_does(
        api, campaign, monkeypatch, queued, django_capture_on_commit_callbacks):  # noqa: F811
    from campaigns.services import statistics as service

    def broken(campaign, options):
        raise ValueError("no numbers")

    monkeypatch.setitem(service.COMPUTE, service.Kind.STATISTICS, broken)
    url = f"/api/campaigns/{campaign.slug}/stats/"
    with django_capture_on_commit_callbacks(execute=True):
        api.get(url)
    statistics_compute(result_id=queued[0])
    with django_capture_on_commit_callbacks(execute=True):
        assert api.get(url).status_code == 409
        assert api.get(url).status_code == 409
    assert len(queued) == 1
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post(url).status_code == 202
    assert len(queued) == 2
