"""Export jobs over the API: create (202), poll, download when done."""
import pytest

from campaigns.errors import ServiceError
from campaigns.models import ExportJob
from tests.api.conftest import make_annotation, make_items

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


@pytest.fixture
def annotated(campaign):
    for item in make_items(campaign, 2):
        make_annotation(campaign, item)
    return campaign


def test_creating_an_export_answers_202_with_the_queued_job(api, annotated):
    response = api.post(f"/api/campaigns/{annotated.slug}/exports/", {"format": "jsonl"},
                        format="json")
    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["status"] == "queued" and body["format"] == "jsonl"
    assert body["download_url"] is None and body["requested_by"] == "alice"
    assert ExportJob.objects.get(pk=body["id"]).requested_by.username == "alice"


def test_a_job_runs_and_its_file_downloads_once_done(api, annotated,
                                                     django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        job = api.post(f"/api/campaigns/{annotated.slug}/exports/",
                       {"format": "csv", "options": {"gzip": False}}, format="json").json()
    polled = api.get(f"/api/campaigns/{annotated.slug}/exports/{job['id']}/").json()
    assert polled["status"] == "done", polled
    assert polled["progress"] == 1.0 and polled["rows_written"] == 2
    assert polled["download_url"].endswith(f"/exports/{job['id']}/download/")
    response = api.get(polled["download_url"])
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv"
    assert "attachment" in response["Content-Disposition"]
    content = b"".join(response.streaming_content).decode()
    assert len(content.strip().splitlines()) == 3  # header and two annotations


def test_downloading_an_unfinished_job_is_a_409(api, annotated):
    job = api.post(f"/api/campaigns/{annotated.slug}/exports/", {}, format="json").json()
    response = api.get(f"/api/campaigns/{annotated.slug}/exports/{job['id']}/download/")
    assert response.status_code == 409
    assert response.json()["extra"] == {"code": "conflict", "status": "queued"}


def test_a_done_job_whose_file_is_gone_is_a_409_not_a_500(api, annotated, owner):
    job = ExportJob.objects.create(campaign=annotated, requested_by=owner, status="done",
                                   file="gone/never-stored.csv")
    response = api.get(f"/api/campaigns/{annotated.slug}/exports/{job.pk}/download/")
    assert response.status_code == 409
    assert "no longer stored" in response.json()["message"]


def test_an_unknown_option_is_a_400(api, annotated):
    response = api.post(f"/api/campaigns/{annotated.slug}/exports/",
                        {"format": "csv", "options": {"zip": True}}, format="json")
    assert response.status_code == 400
    assert "options" in response.json()["extra"]["fields"]


def test_a_broker_outage_is_a_503_in_the_error_shape(api, annotated, monkeypatch):
    def broker_down(**kwargs):
        raise ServiceError("The export could not be started: the task queue is unreachable.",
                           code="broker_unreachable", status=503)

    monkeypatch.setattr("campaigns.api.exports.export_job_create", broker_down)
    response = api.post(f"/api/campaigns/{annotated.slug}/exports/", {"format": "csv"},
                        format="json")
    assert response.status_code == 503
    assert response.json()["extra"] == {"code": "broker_unreachable"}


def test_a_job_of_another_campaign_is_404(api, annotated, owner):
    from tests.factories import make_campaign

    other = make_campaign(owner=owner)
    job = ExportJob.objects.create(campaign=other, requested_by=owner)
    response = api.get(f"/api/campaigns/{annotated.slug}/exports/{job.pk}/")
    assert response.status_code == 404


@pytest.mark.parametrize("page_size", [1, 4])
def test_the_job_list_runs_the_same_queries_whatever_the_page_size(
        api, annotated, owner, django_assert_num_queries, page_size):
    for _ in range(4):
        ExportJob.objects.create(campaign=annotated, requested_by=owner)
    with django_assert_num_queries(3):
        body = api.get(f"/api/campaigns/{annotated.slug}/exports/?page_size={page_size}").json()
    assert len(body["results"]) == page_size
