"""The statistics endpoints: the analysis tables of a campaign, one question's agreement; answered
from the cache (202 while the first computation runs), POST recomputes."""
import pytest

from campaigns.models import StatisticsResult
from campaigns.services.statistics import statistics_compute
from tests.api.conftest import make_annotation, make_items
from tests.factories import RUBRIC_SCHEMA, make_campaign
from tests.services.test_statistics import queued  # noqa: F401 - the fixture

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


# The statistics endpoints: the analysis tables of a campaign, one question's agreement.


def test_the_stats_endpoint_returns_the_analysis_tables(api, campaign):
    for item in make_items(campaign, 2):
        make_annotation(campaign, item, worker_id="W1", answers={"coherence": 4, "sentiment": 2})
        make_annotation(campaign, item, worker_id="W2", answers={"coherence": 3, "sentiment": 2})
    response = api.get(f"/api/campaigns/{campaign.slug}/stats/")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["campaign"] == campaign.slug and body["exclude_flagged"] is False
    assert body["counts"]["annotations"] == 4 and body["counts"]["workers"] == 2


def test_the_stats_of_an_empty_campaign_are_not_an_error(api, campaign):
    response = api.get(f"/api/campaigns/{campaign.slug}/stats/?exclude_flagged=true")
    assert response.status_code == 200
    assert response.json()["counts"]["annotations"] == 0


def _rated(campaign, n_items=6, workers=("W1", "W2", "W3")):
    for n, item in enumerate(make_items(campaign, n_items)):
        for w, worker in enumerate(workers):
            if (n + w) % 4 == 3:
                continue  # a missing rating
            make_annotation(campaign, item, worker_id=worker,
                            answers={"coherence": 1 + (n + w * 2) % 5, "sentiment": 1 + n % 3})


def test_one_questions_agreement_is_the_agreement_tables_row(api, campaign):
    _rated(campaign)
    table = api.get(f"/api/campaigns/{campaign.slug}/stats/").json()["agreement"]
    for question in ("coherence", "sentiment"):
        response = api.get(f"/api/campaigns/{campaign.slug}/agreement/?question={question}")
        assert response.status_code == 200, response.json()
        row = next(r for r in table if r["question"] == question)
        body = response.json()
        assert body == pytest.approx(row, abs=1e-12)
        assert body["level"] == "ordinal" and body["n_raters"] == 3 and body["ci_low"] is not None


@pytest.mark.usefixtures("few_resamples")  # the point figures are compared, not the intervals
def test_a_rubric_criterion_has_its_own_agreement(api, owner):
    campaign = make_campaign(owner=owner, schema=RUBRIC_SCHEMA)
    for n, item in enumerate(make_items(campaign, 5)):
        for w in range(3):
            make_annotation(campaign, item, worker_id=f"W{w}", answers={
                "rubric": {f"C{c}": (n * c + w) % 2 for c in range(1, 16)}})
    table = api.get(f"/api/campaigns/{campaign.slug}/stats/").json()["agreement"]
    response = api.get(f"/api/campaigns/{campaign.slug}/agreement/"
                       "?question=rubric&part=C3&bootstrap=0")
    assert response.status_code == 200, response.json()
    row = next(r for r in table if r["question"] == "rubric" and r["part"] == "C3")
    assert response.json() == pytest.approx({**row, "ci_low": None, "ci_high": None}, abs=1e-12)


def test_agreement_of_an_unknown_or_free_text_part_is_a_clear_400(api, campaign):
    url = f"/api/campaigns/{campaign.slug}/agreement/"
    missing = api.get(f"{url}?question=nope")
    assert missing.status_code == 400
    assert missing.json()["message"] == "Invalid input. question: The campaign has no question " \
        "part 'nope'."
    assert api.get(url).json()["extra"]["fields"] == {"question": ["This field is required."]}
    free_text = api.get(f"{url}?question=feedback")
    assert free_text.status_code == 400 and "free text" in free_text.json()["message"]
    assert api.get(f"{url}?question=coherence&bootstrap=-1").status_code == 400


def test_agreement_of_a_campaign_without_ratings_is_empty_not_an_error(api, campaign):
    response = api.get(f"/api/campaigns/{campaign.slug}/agreement/?question=coherence")
    assert response.status_code == 200
    assert response.json() == {"question": "coherence", "part": "", "level": "ordinal",
                               "alpha": None, "ci_low": None, "ci_high": None, "n_items": 0,
                               "n_raters": 0, "n_ratings": 0, "subset": None}


def test_agreement_without_flagged_workers_matches_the_stats_switch(api, owner):
    campaign = make_campaign(owner=owner, annotations_per_item=6)
    _rated(campaign, workers=("W1", "W2", "W3", "W4"))
    for item in campaign.items.all():  # a straight-liner: the same answers for every item
        make_annotation(campaign, item, worker_id="LAZY", answers={"coherence": 3, "sentiment": 3})
    stats = api.get(f"/api/campaigns/{campaign.slug}/stats/?exclude_flagged=true").json()
    assert len(stats["flagged_workers"]) == 1
    row = next(r for r in stats["agreement"] if r["question"] == "coherence")
    response = api.get(f"/api/campaigns/{campaign.slug}/agreement/"
                       "?question=coherence&exclude_flagged=true")
    assert response.status_code == 200 and response.json() == pytest.approx(row, abs=1e-12)
    everyone = api.get(f"/api/campaigns/{campaign.slug}/agreement/?question=coherence").json()
    assert everyone["n_raters"] == row["n_raters"] + 1 == 5


def test_the_stats_options_reach_the_comparisons_and_the_agreement(api, campaign):
    _rated(campaign)
    url = f"/api/campaigns/{campaign.slug}/stats/"
    body = api.get(f"{url}?correction=bh&alpha=0.01&subset_by=system&levels=coherence:interval"
                   "&pair_by=&style=true").json()
    assert body["options"] == {"correction": "bh", "alpha": 0.01, "pair_by": None,
                               "subset_by": ["system"], "levels": {"coherence": "interval"},
                               "include_failed_judge_outputs": False, "ties": None,
                               "style": True}
    assert all(r["correction"] == "bh" for r in body["comparisons"])
    assert body["pairwise"] == body["comparisons"]
    pooled = [r for r in body["agreement"] if r["subset"] is None]
    assert {r["question"]: r["level"] for r in pooled}["coherence"] == "interval"
    assert isinstance(body["design_warnings"], list)


@pytest.mark.parametrize("query", ["correction=bonferroni", "alpha=2", "levels=coherence:nominal",
                                   "subset_by=a%20b", "ties=rao-kupper", "style=maybe"])
def test_bad_stats_options_are_a_400_naming_the_option(api, campaign, query):
    response = api.get(f"/api/campaigns/{campaign.slug}/stats/?{query}")
    assert response.status_code == 400
    assert query.split("=")[0] in response.json()["extra"]["fields"]


def test_the_report_endpoint_agrees_with_the_stats(api, campaign):
    _rated(campaign)
    url = f"/api/campaigns/{campaign.slug}"
    stats = api.get(f"{url}/stats/").json()
    report = api.get(f"{url}/report/?effect=0.5&power=0.9").json()
    assert report["agreement"] == stats["agreement"]
    assert report["warnings"] == stats["design_warnings"]
    assert report["planning"] and report["planning"][0]["effect"] == 0.5
    assert report["markdown"].startswith(f"# Evaluation report: {campaign.slug}")
    assert api.get(f"{url}/report/?power=2").status_code == 400


# The statistics and report endpoints answer from the cache: 202 while the first computation runs,
# then the figures with computed_at and stale; POST recomputes.


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


def test_post_full_recomputes_every_figure_and_a_bad_flag_changes_nothing(api, campaign):
    _rated(campaign)
    url = f"/api/campaigns/{campaign.slug}/stats/"
    assert api.get(url).json()["computation"]["intervals"] == "computed"
    assert api.post(url).status_code == 202
    reused = api.get(url).json()["computation"]
    assert reused["intervals"] == "reused" and reused["annotations_changed"] == 0
    assert "point estimates from all" in reused["note"]
    bad = api.post(url + "?full=maybe")
    assert bad.status_code == 400 and "full" in bad.json()["extra"]["fields"]
    assert api.get(url).json()["computation"] == reused
    assert api.post(url + "?full=1").status_code == 202
    assert api.get(url).json()["computation"]["intervals"] == "computed"


def test_another_researchers_full_recompute_is_not_found_whatever_the_flag(other_api, campaign):
    url = f"/api/campaigns/{campaign.slug}/stats/"
    assert other_api.post(url + "?full=maybe").status_code == 404
    assert other_api.post(url + "?full=1").status_code == 404
