"""Big judgment uploads are imported by a background job (202, then poll), all or nothing."""
import pytest
from django.core.files.storage import storages
from django.core.files.uploadedfile import SimpleUploadedFile

from campaigns.models import Annotation, ImportJob, Worker
from tests.api.conftest import make_items

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


def _file(n: int, *, bad_row: int | None = None) -> bytes:
    lines = ["item,judge,output"]
    lines += [f'sys-a-{i},gpt-4o,"{{""coherence"": {9 if i + 1 == bad_row else 4}, '
              f'""sentiment"": 2}}"' for i in range(n)]
    return ("\n".join(lines) + "\n").encode()


def _post(api, campaign, content, **fields):
    return api.post(f"/api/campaigns/{campaign.slug}/judgments/import/",
                    {"file": SimpleUploadedFile("judgments.csv", content), **fields},
                    format="multipart")


@pytest.fixture
def background(settings):
    settings.IMPORT_BACKGROUND_BYTES = 1000


def test_a_big_upload_is_a_202_job_that_imports_every_judgment(
        api, campaign, background, django_capture_on_commit_callbacks):
    make_items(campaign, 60)
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(api, campaign, _file(60))
    assert response.status_code == 202, response.json()
    started = response.json()
    assert (started["status"], started["kind"]) == ("queued", "judgments")
    assert started["url"].endswith(f"/judgments/imports/{started['id']}/")
    polled = api.get(started["url"]).json()
    assert (polled["status"], polled["created"], polled["judges"]) == ("done", 60, ["gpt-4o"])
    assert Annotation.objects.filter(worker__platform="llm").count() == 60
    assert not storages["imports"].exists(ImportJob.objects.get().file)


def test_a_big_upload_with_one_bad_row_imports_nothing_and_says_which(
        api, campaign, background, django_capture_on_commit_callbacks):
    make_items(campaign, 60)
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(api, campaign, _file(60, bad_row=42))
    polled = api.get(response.json()["url"]).json()
    assert polled["status"] == "failed" and polled["error_total"] == 1
    assert "row 42" in polled["errors"][0]
    assert not Annotation.objects.exists() and not Worker.objects.filter(platform="llm").exists()


def test_the_judge_and_platform_fields_reach_the_job(api, campaign, background,
                                                     django_capture_on_commit_callbacks):
    make_items(campaign, 60)
    content = "\n".join(["item,output"] + [f'sys-a-{i},"{{""coherence"": 4, ""sentiment"": 2}}"'
                                           for i in range(60)]).encode()
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(api, campaign, content, judge="expert", platform="account")
    assert api.get(response.json()["url"]).json()["status"] == "done"
    assert Worker.objects.get(platform="account").platform_id == "expert"


def test_a_judgments_job_is_not_found_under_items_nor_by_another_researcher(
        api, other_api, campaign, background, django_capture_on_commit_callbacks):
    make_items(campaign, 60)
    with django_capture_on_commit_callbacks(execute=True):
        url = _post(api, campaign, _file(60)).json()["url"]
    assert api.get(url.replace("/judgments/", "/items/")).status_code == 404
    assert other_api.get(url).status_code == 404
