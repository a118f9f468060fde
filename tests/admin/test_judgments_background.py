"""The admin's judgment upload: a big file is stored and imported in the background, and the
page lists the job's progress and outcome."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from campaigns.models import Annotation, ImportJob
from tests.api.conftest import make_items
from tests.api.test_judgments_background import _file

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


def test_a_big_upload_becomes_a_job_listed_with_its_outcome(
        researcher_client, campaign, settings, django_capture_on_commit_callbacks):
    settings.IMPORT_BACKGROUND_BYTES = 1000
    make_items(campaign, 60)
    url = reverse("admin:campaigns_campaign_judgments", args=[campaign.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(url, {
            "file": SimpleUploadedFile("j.csv", _file(60)), "platform": "llm"})
    assert response.status_code == 302 and response["Location"] == url
    job = ImportJob.objects.get()
    assert (job.kind, job.status, job.created) == ("judgments", "done", 60)
    assert Annotation.objects.count() == 60
    page = researcher_client.get(url).content.decode()
    assert "Background imports" in page and "Imported judgments of gpt-4o: 60 new" in page


def test_a_failed_background_upload_lists_its_row_numbered_problems(
        researcher_client, campaign, settings, django_capture_on_commit_callbacks):
    settings.IMPORT_BACKGROUND_BYTES = 1000
    make_items(campaign, 60)
    url = reverse("admin:campaigns_campaign_judgments", args=[campaign.pk])
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.post(url, {"file": SimpleUploadedFile("j.csv", _file(60, bad_row=7)),
                                     "platform": "llm"})
    page = researcher_client.get(url).content.decode()
    assert "Nothing was imported: 1 problem" in page and "row 7" in page
    assert not Annotation.objects.exists()
