"""Cancel and retry in the API, the same two routes on every kind of job: JSON answers, 409
in the API's error shape when the job's state does not allow it, 404 for another's job."""
import pytest

from campaigns.jobs import dispatch
from campaigns.models import ExportJob, ImportJob, Judge, JudgeRun
from tests.api.conftest import token_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    """The task queue, recording what is sent instead of running it."""
    messages = []
    monkeypatch.setattr(dispatch, "send", lambda name, **kwargs: messages.append((name, kwargs)))
    return messages


def _export(campaign, **fields):
    job = ExportJob.objects.create(campaign=campaign, format="csv", **fields)
    return job, f"/api/campaigns/{campaign.slug}/exports/{job.pk}/"


def _import(campaign, kind="items", **fields):
    job = ImportJob.objects.create(campaign=campaign, kind=kind, filename="x.csv", **fields)
    return job, f"/api/campaigns/{campaign.slug}/{kind}/imports/{job.pk}/"


def _run(campaign, **fields):
    judge = Judge.objects.create(campaign=campaign, name="j", model="m")
    run = JudgeRun.objects.create(judge=judge, **fields)
    return run, f"/api/campaigns/{campaign.slug}/judges/j/runs/{run.pk}/"


JOBS = pytest.mark.parametrize("make", [_export, _import, _run], ids=["export", "import", "run"])


@JOBS
def test_cancel_of_a_queued_job_answers_the_cancelled_job(api, campaign, make):
    job, url = make(campaign)
    response = api.post(f"{url}cancel/")
    assert response.status_code == 200, response.json()
    assert response.json()["status"] == "cancelled"
    job.refresh_from_db()
    assert job.status == "cancelled"


@JOBS
def test_retry_of_a_failed_job_queues_it_again(api, campaign, make, sent, settings, tmp_path,
                                               django_capture_on_commit_callbacks):
    job, url = make(campaign, status="failed", attempts=3, error="gave up after 3 attempts")
    if isinstance(job, ImportJob):  # an import is retried only while its upload is stored
        settings.STORAGES = {**settings.STORAGES, "imports": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path)}}}
        (tmp_path / "upload.csv").write_text("id,text\n1,a\n")
        ImportJob.objects.filter(pk=job.pk).update(file="upload.csv")
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(f"{url}retry/")
    assert response.status_code == 202, response.json()
    assert response.json()["status"] == "queued"
    assert len(sent) == 1


@JOBS
@pytest.mark.parametrize("status", ["queued", "running", "done"])
def test_retry_of_a_job_that_did_not_fail_is_a_409_in_the_error_shape(api, campaign, make,
                                                                       status, sent):
    job, url = make(campaign, status=status)
    response = api.post(f"{url}retry/")
    assert response.status_code == 409
    body = response.json()
    assert "only a failed or cancelled" in body["message"]
    assert body["extra"]["status"] == status
    assert sent == []


@JOBS
def test_cancel_of_an_ended_job_is_a_409(api, campaign, make):
    job, url = make(campaign, status="done")
    response = api.post(f"{url}cancel/")
    assert response.status_code == 409 and response.json()["extra"]["status"] == "done"


def test_a_running_import_cannot_be_cancelled(api, campaign):
    job, url = _import(campaign, status="running", attempts=1)
    response = api.post(f"{url}cancel/")
    assert response.status_code == 409
    assert "only a queued import" in response.json()["message"]


def test_a_failed_import_whose_upload_is_gone_asks_for_the_file_again(api, campaign):
    job, url = _import(campaign, status="failed", file="gone.csv")
    response = api.post(f"{url}retry/")
    assert response.status_code == 409
    assert "upload the file again" in response.json()["message"]
    job.refresh_from_db()
    assert job.status == "failed"


def test_a_judgments_import_job_is_not_cancelled_under_items(api, campaign):
    job, url = _import(campaign, kind="judgments")
    response = api.post(f"/api/campaigns/{campaign.slug}/items/imports/{job.pk}/cancel/")
    assert response.status_code == 404
    assert api.post(f"{url}cancel/").status_code == 200


@JOBS
def test_another_researchers_job_is_404_and_unchanged(campaign, other_owner, make):
    job, url = make(campaign)
    response = token_client(other_owner).post(f"{url}cancel/")
    assert response.status_code == 404 and "message" in response.json()
    job.refresh_from_db()
    assert job.status == "queued"


@pytest.mark.django_db(transaction=True)  # the queueing runs when the request's writes commit
def test_a_broker_outage_on_retry_is_a_503_and_leaves_the_job_failed(api, campaign,
                                                                     monkeypatch):
    def down(name, **kwargs):
        raise dispatch.QueueUnreachable("connection refused")

    monkeypatch.setattr(dispatch, "send", down)
    job, url = _export(campaign, status="failed")
    response = api.post(f"{url}retry/")
    assert response.status_code == 503
    assert response.json()["extra"] == {"code": "broker_unreachable"}
    job.refresh_from_db()
    assert job.status == "failed" and "unreachable" in job.error
