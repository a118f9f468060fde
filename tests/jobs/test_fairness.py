"""Fair shares of a queue (campaigns/jobs/fairness.py): a researcher's job over the cap waits,
queued, with the reason, and starts when one of theirs on the same queue ends; another
researcher's, or a job on another queue, is not held back."""
import pytest

from campaigns.jobs import fairness
from campaigns.jobs.kinds import EXPORT, IMPORT, STATISTICS
from campaigns.jobs.lifecycle import job_claim, job_done
from campaigns.models import ExportJob, ImportJob, StatisticsResult
from tests.factories import make_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    calls = []
    monkeypatch.setattr(fairness.dispatch, "send", lambda task, **kw: calls.append((task, kw)))
    return calls


def export(campaign):
    return ExportJob.objects.create(campaign=campaign, format="csv")


def test_a_second_job_on_the_queue_waits_with_the_reason_and_starts_when_the_first_ends(
        owner, settings, sent):
    settings.JOBS_RUNNING_PER_RESEARCHER = 1
    campaign = make_campaign(owner=owner)
    first, second = export(campaign), export(campaign)
    running = job_claim(EXPORT, first.pk)
    assert running is not None
    assert job_claim(EXPORT, second.pk) is None
    second.refresh_from_db()
    assert second.status == "queued"
    assert second.waiting.startswith("waiting for a free slot: alice already has 1 exports job")
    # An import shares the exports queue: it waits too.
    upload = ImportJob.objects.create(campaign=campaign, filename="x.csv")
    assert job_claim(IMPORT, upload.pk) is None

    job_done(EXPORT, running)
    assert fairness.start_waiting(EXPORT, running) == 1  # the oldest waiting one
    assert sent == [(EXPORT.task, {"job_id": second.pk})]
    second.refresh_from_db()
    assert second.waiting == ""
    assert job_claim(EXPORT, second.pk).status == "running"


def test_other_researchers_and_other_queues_are_not_held_back(owner, other_owner, settings):
    settings.JOBS_RUNNING_PER_RESEARCHER = 1
    mine, theirs = make_campaign(owner=owner), make_campaign(owner=other_owner)
    assert job_claim(EXPORT, export(mine).pk) is not None
    assert job_claim(EXPORT, export(theirs).pk) is not None
    figures = StatisticsResult.objects.create(campaign=mine, kind="statistics", options={},
                                              options_key="k")
    assert job_claim(STATISTICS, figures.pk) is not None


def test_the_sweep_starts_a_waiting_job_whose_wake_up_was_lost(owner, settings, sent):
    settings.JOBS_RUNNING_PER_RESEARCHER = 1
    campaign = make_campaign(owner=owner)
    waiting = export(campaign)
    ExportJob.objects.filter(pk=waiting.pk).update(waiting="waiting for a free slot: ...")
    assert fairness.start_all_waiting((EXPORT, IMPORT, STATISTICS)) == 1
    assert sent == [(EXPORT.task, {"job_id": waiting.pk})]


def test_no_cap_holds_nothing(owner, settings):
    settings.JOBS_RUNNING_PER_RESEARCHER = 0
    campaign = make_campaign(owner=owner)
    assert job_claim(EXPORT, export(campaign).pk) is not None
    assert job_claim(EXPORT, export(campaign).pk) is not None
