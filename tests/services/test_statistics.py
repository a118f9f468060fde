"""Cached statistics: computed by a job, kept per campaign and options with the time of their
data, marked stale when annotations change, recomputed on request, never two jobs at once."""
from datetime import timedelta

import pytest
from django.utils import timezone

from campaigns.models import StatisticsResult
from campaigns.services import statistics as service
from campaigns.services.statistics import Kind, statistics_cached, statistics_request
from tests.api.conftest import make_annotation, make_items

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]
Status = StatisticsResult.Status


@pytest.fixture
def queued(monkeypatch):
    """Celery with a broker: the job is only queued (the ids sent are recorded), not run."""
    from annotate.celery import app
    from campaigns import tasks

    sent: list[int] = []
    monkeypatch.setattr(tasks.task_statistics_compute, "apply_async",
                        lambda kwargs, **_: sent.append(kwargs["result_id"]))
    previous, app.conf.task_always_eager = app.conf.task_always_eager, False
    yield sent
    app.conf.task_always_eager = previous


def _rated(campaign, n_items=3, workers=("W1", "W2")):
    for item in make_items(campaign, n_items):
        for worker in workers:
            make_annotation(campaign, item, worker_id=worker, answers={"coherence": 4,
                                                                       "sentiment": 2})


def test_a_first_request_queues_one_job_and_does_not_compute(campaign, queued, monkeypatch,
                                                             django_capture_on_commit_callbacks):
    _rated(campaign)
    monkeypatch.setitem(service.COMPUTE, Kind.STATISTICS, _never)
    with django_capture_on_commit_callbacks(execute=True):
        first = statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={})
        again = statistics_request(campaign=campaign, kind=Kind.STATISTICS,
                                   options={"exclude_flagged": False, "correction": "holm"})
    assert first.result is None and first.computing and again.row.pk == first.row.pk
    assert queued == [first.row.pk]  # the same options (defaults spelt out or not): one job


def _never(campaign, options):
    raise AssertionError("computed in the request")


def test_the_job_stores_the_figures_with_the_time_of_their_data(campaign, queued):
    _rated(campaign)
    row = statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={}).row
    before = timezone.now()
    service.statistics_compute(result_id=row.pk)
    cached = statistics_cached(campaign=campaign, kind=Kind.STATISTICS, options={})
    assert cached.row.status == Status.DONE and not cached.stale and not cached.computing
    assert cached.result["counts"]["annotations"] == 6
    assert before <= cached.row.computed_at <= timezone.now()
    # drawn in the job from these statistics, SVG only for the page
    figures = {f["key"]: f for f in cached.row.figures}
    assert {"workers", "progress"} <= set(figures)
    assert figures["progress"]["values"]["y"] == [6]
    assert figures["workers"]["svg"].startswith("<?xml") and "pdf" not in figures["workers"]


def test_the_report_job_keeps_pdf_figures_and_its_provenance(campaign, queued, settings):
    settings.STATISTICS_RESAMPLES = 200  # stated in the provenance, as every other setting
    _rated(campaign)
    row = statistics_request(campaign=campaign, kind=Kind.REPORT, options={}).row
    service.statistics_compute(result_id=row.pk)
    row.refresh_from_db()
    assert all(f["pdf"] for f in row.figures)
    provenance = row.result["provenance"]
    assert provenance["annotations"]["annotations"] == 6
    assert provenance["bootstrap"] == {"resamples": 200, "seed": 0,
                                       "generator": "numpy.random.default_rng (PCG64)"}
    assert provenance["options"]["correction"] == "holm"
    again = statistics_request(campaign=campaign, kind=Kind.REPORT, options={}, recompute=True)
    service.statistics_compute(result_id=again.row.pk)
    again.row.refresh_from_db()
    assert again.row.result["provenance"] == provenance  # same annotations, same digest


def test_a_result_is_stale_once_an_annotation_changes_and_a_recompute_refreshes_it(
        campaign, queued, django_capture_on_commit_callbacks):
    _rated(campaign)
    row = statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={}).row
    service.statistics_compute(result_id=row.pk)
    make_annotation(campaign, make_items(campaign, 1, system="sys-b")[0], worker_id="W3")
    cached = statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={})
    assert cached.stale and cached.result["counts"]["annotations"] == 6  # old figures, marked
    with django_capture_on_commit_callbacks(execute=True):
        again = statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={},
                                   recompute=True)
    assert again.computing and again.result["counts"]["annotations"] == 6  # still on show
    service.statistics_compute(result_id=row.pk)
    fresh = statistics_cached(campaign=campaign, kind=Kind.STATISTICS, options={})
    assert not fresh.stale and fresh.result["counts"]["annotations"] == 7


def test_a_recompute_asked_twice_while_one_is_queued_queues_one_job(
        campaign, queued, django_capture_on_commit_callbacks):
    row = statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={}).row
    service.statistics_compute(result_id=row.pk)
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(3):
            statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={},
                               recompute=True)
    assert queued == [row.pk]


def test_a_lost_job_is_queued_again(campaign, queued, settings,
                                    django_capture_on_commit_callbacks):
    row = statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={}).row
    StatisticsResult.objects.filter(pk=row.pk).update(
        status=Status.RUNNING, started_at=timezone.now() - timedelta(hours=1))
    with django_capture_on_commit_callbacks(execute=True):
        cached = statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={})
    assert cached.row.status == Status.QUEUED and queued == [row.pk]


def test_a_failed_computation_keeps_the_last_result_and_says_why(campaign, queued, monkeypatch):
    row = statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={}).row
    service.statistics_compute(result_id=row.pk)
    # in full: with nothing changed a recomputation would reuse, never calling COMPUTE
    StatisticsResult.objects.filter(pk=row.pk).update(status=Status.QUEUED, full_requested=True)

    def broken(campaign, options):
        raise ValueError("the schema is broken")

    monkeypatch.setitem(service.COMPUTE, Kind.STATISTICS, broken)
    service.statistics_compute(result_id=row.pk)
    row.refresh_from_db()
    assert row.status == Status.FAILED and "the schema is broken" in row.error
    assert row.result["counts"]["annotations"] == 0


def test_an_older_attempt_does_not_overwrite_a_newer_one(campaign, queued, monkeypatch):
    row = statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={}).row

    def overtaken(campaign, options):  # a re-delivery claims the row while this one runs
        StatisticsResult.objects.filter(pk=row.pk).update(attempts=99)
        return {"old": True}, None

    monkeypatch.setitem(service.COMPUTE, Kind.STATISTICS, overtaken)
    service.statistics_compute(result_id=row.pk)
    row.refresh_from_db()
    assert row.result is None and row.status == Status.RUNNING


def test_with_eager_celery_the_request_computes_at_once(campaign, celery_eager):
    _rated(campaign)
    cached = statistics_request(campaign=campaign, kind=Kind.REPORT, options={"power": 0.9})
    assert cached.row.status == Status.DONE and "markdown" in cached.result


def test_unknown_options_are_a_programming_error(campaign):
    with pytest.raises(TypeError):
        statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={"colour": 1})


def test_a_change_to_the_campaigns_schema_or_settings_marks_the_result_stale(campaign):
    from campaigns.models import Campaign

    statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={})
    assert not statistics_cached(campaign=campaign, kind=Kind.STATISTICS, options={}).stale
    campaign.name = "Renamed"
    campaign.save()  # e.g. a question renamed: the answers are rewritten in bulk
    fresh = Campaign.objects.get(pk=campaign.pk)
    assert statistics_cached(campaign=fresh, kind=Kind.STATISTICS, options={}).stale


def test_a_computation_whose_worker_is_killed_every_time_ends_failed(campaign, queued):
    row = statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={}).row
    for _ in range(service.MAX_ATTEMPTS):  # each delivery claims the row, then dies
        StatisticsResult.objects.filter(pk=row.pk).update(status=Status.RUNNING)
        StatisticsResult.objects.filter(pk=row.pk).update(attempts=row.attempts + 1)
        row.refresh_from_db()
    service.statistics_compute(result_id=row.pk)  # the next re-delivery
    row.refresh_from_db()
    assert row.status == Status.FAILED and "gave up after 3 attempts" in row.error
    assert row.result is None


def test_a_campaign_over_the_memory_limit_is_refused_clearly_and_nothing_is_computed(
        campaign, queued, settings):
    """The job estimates its memory from the campaign's annotations (budget.py) and refuses
    before reading anything, with the reason and the setting to change, never by being
    killed."""
    from campaigns.selectors.analysis.budget import memory_estimate_mb

    _rated(campaign)
    settings.STATISTICS_MEMORY_LIMIT_MB = int(memory_estimate_mb(6)) - 1
    row = statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={}).row
    service.statistics_compute(result_id=row.pk)
    row.refresh_from_db()
    assert row.status == Status.FAILED and row.result is None
    assert "6 annotations need about" in row.error and "STATISTICS_MEMORY_LIMIT_MB" in row.error


def test_near_the_memory_limit_the_intervals_use_fewer_resamples_and_say_so(
        campaign, queued, settings):
    """Past half the limit once the data is read, the job resamples less and the result
    states how many resamples it used and why; under it, every resample asked for."""
    from campaigns.selectors.analysis import budget

    _rated(campaign)
    row = statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={}).row
    service.statistics_compute(result_id=row.pk)
    row.refresh_from_db()
    assert row.result["resamples"] == {"requested": 1000, "used": 1000, "note": ""}

    held = budget.psutil.Process().memory_info().rss / 2**20
    settings.STATISTICS_MEMORY_LIMIT_MB = max(int(1.5 * held),
                                              int(budget.memory_estimate_mb(6)) + 1)
    # in full: a recomputation of unchanged data would keep the first one's 1,000 resamples
    StatisticsResult.objects.filter(pk=row.pk).update(status=Status.QUEUED, full_requested=True)
    service.statistics_compute(result_id=row.pk)
    row.refresh_from_db()
    assert row.status == Status.DONE
    resamples = row.result["resamples"]
    assert resamples["requested"] == 1000 and resamples["used"] == 200
    assert "200 resamples instead of 1000" in resamples["note"]
