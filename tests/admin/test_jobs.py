"""The admin's job lists (campaigns/admin/jobs.py): the lifecycle's states, and the cancel and
retry actions on the researcher's own jobs only."""
import pytest
from django.urls import reverse

from campaigns.jobs import dispatch
from campaigns.models import ExportJob, Judge, JudgeRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    messages = []
    monkeypatch.setattr(dispatch, "send", lambda name, **kwargs: messages.append((name, kwargs)))
    return messages


def _act(client, model, action, jobs):
    url = reverse(f"admin:campaigns_{model}_changelist")
    return client.post(url, {"action": action, "_selected_action": [j.pk for j in jobs]},
                       follow=True)


def test_the_export_list_cancels_a_queued_job_and_says_why_it_cannot_cancel_a_done_one(
        researcher_client, campaign):
    queued = ExportJob.objects.create(campaign=campaign, format="csv")
    done = ExportJob.objects.create(campaign=campaign, format="csv", status="done")
    response = _act(researcher_client, "exportjob", "cancel_jobs", [queued, done])
    assert response.status_code == 200
    texts = [str(m) for m in response.context["messages"]]
    assert any("cancelled" in t for t in texts)
    assert any("only a queued or running export can be cancelled" in t for t in texts)
    queued.refresh_from_db()
    done.refresh_from_db()
    assert (queued.status, done.status) == ("cancelled", "done")


def test_the_export_list_retries_a_failed_job(researcher_client, campaign, sent,
                                              django_capture_on_commit_callbacks):
    failed = ExportJob.objects.create(campaign=campaign, format="csv", status="failed",
                                      attempts=3, error="gave up after 3 attempts")
    with django_capture_on_commit_callbacks(execute=True):
        _act(researcher_client, "exportjob", "retry_jobs", [failed])
    failed.refresh_from_db()
    assert (failed.status, failed.error) == ("queued", "")
    assert sent == [("campaigns.export_run", {"job_id": failed.pk})]


def test_the_judge_run_list_has_the_same_actions(researcher_client, campaign, sent,
                                                 django_capture_on_commit_callbacks):
    judge = Judge.objects.create(campaign=campaign, name="j", model="m")
    cancelled = JudgeRun.objects.create(judge=judge, status="cancelled")
    with django_capture_on_commit_callbacks(execute=True):
        _act(researcher_client, "judgerun", "retry_jobs", [cancelled])
    cancelled.refresh_from_db()
    assert cancelled.status == "queued"
    _act(researcher_client, "judgerun", "cancel_jobs", [cancelled])
    cancelled.refresh_from_db()
    assert cancelled.status == "cancelled"


def test_another_researchers_jobs_are_not_touched(other_client, campaign):
    queued = ExportJob.objects.create(campaign=campaign, format="csv")
    _act(other_client, "exportjob", "cancel_jobs", [queued])
    queued.refresh_from_db()
    assert queued.status == "queued"


@pytest.mark.django_db(transaction=True)  # the job is queued when the request's writes commit
def test_a_statistics_page_whose_job_cannot_be_queued_is_a_503_not_a_500(
        researcher_client, campaign, monkeypatch):
    from annotate.celery import app
    from campaigns.models import StatisticsResult

    def down(name, **kwargs):
        raise dispatch.QueueUnreachable("connection refused")

    monkeypatch.setattr(dispatch, "send", down)
    eager, app.conf.task_always_eager = app.conf.task_always_eager, False  # a broker is set
    try:
        response = researcher_client.get(reverse("admin:campaigns_campaign_statistics",
                                                 args=[campaign.pk]))
    finally:
        app.conf.task_always_eager = eager
    assert response.status_code == 503 and response["Retry-After"]
    row = StatisticsResult.objects.get(campaign=campaign)
    assert row.status == "failed" and "unreachable" in row.error
