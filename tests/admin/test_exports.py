"""Exports from the admin: the dashboard button and the list action create jobs; the job list."""
import pytest
from django.urls import reverse

from campaigns.models import ExportJob
from tests.admin.conftest import add_items
from tests.admin.simulate import simulate

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


@pytest.fixture
def answered(campaign):
    add_items(campaign, 2)
    simulate(campaign, workers=2)
    return campaign


def test_the_download_button_creates_a_job_that_runs_and_can_be_downloaded(
        researcher_client, researcher, answered, django_capture_on_commit_callbacks, settings,
        tmp_path):
    settings.STORAGES = {**settings.STORAGES, "exports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path)}}}
    url = reverse("admin:campaigns_campaign_export", args=[answered.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(url, {"format": "csv", "gzip": ""})
    assert response.status_code == 302
    job = ExportJob.objects.get(campaign=answered)
    assert (job.format, job.requested_by) == ("csv", researcher)
    job.refresh_from_db()
    assert job.status == "done", job.error
    listing = researcher_client.get(reverse("admin:campaigns_exportjob_changelist"))
    text = listing.content.decode()
    assert f"{job.rows_written} / {job.rows_total} (100%)" in text
    download = reverse("export_download", args=[job.pk])
    assert download in text
    assert researcher_client.get(download).status_code == 200


def test_a_bad_format_is_a_message_not_an_error(researcher_client, answered):
    url = reverse("admin:campaigns_campaign_export", args=[answered.pk])
    response = researcher_client.post(url, {"format": "xlsx"}, follow=True)
    assert response.status_code == 200
    assert "Choose a valid export format" in response.content.decode()
    assert not ExportJob.objects.exists()
    assert researcher_client.get(url).status_code == 405


def test_the_list_action_creates_one_csv_job_per_campaign(researcher_client, answered,
                                                          django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        response = researcher_client.post(reverse("admin:campaigns_campaign_changelist"), {
            "action": "export_csv", "_selected_action": [answered.pk]}, follow=True)
    job = ExportJob.objects.get(campaign=answered)
    assert job.format == "csv"
    assert f"Export <a href=\"{reverse('admin:campaigns_exportjob_change', args=[job.pk])}\">" \
        in response.content.decode()


def test_another_researcher_cannot_download_the_job(other_client, answered):
    job = ExportJob.objects.create(campaign=answered, status="done", file="x.csv")
    assert other_client.get(reverse("export_download", args=[job.pk])).status_code == 404
    assert other_client.get(reverse("admin:campaigns_exportjob_change",
                                    args=[job.pk])).status_code == 404


def test_the_statistics_page_options_reach_the_export_job(researcher_client, answered,
                                                          django_capture_on_commit_callbacks):
    url = reverse("admin:campaigns_campaign_export", args=[answered.pk])
    with django_capture_on_commit_callbacks(execute=False):
        researcher_client.post(url, {"format": "analysis-csv", "exclude_flagged": "1"})
    job = ExportJob.objects.get(campaign=answered)
    assert job.format == "analysis-csv"
    assert job.options.get("exclude_flagged") is True


def test_the_job_list_refreshes_itself_only_while_jobs_run(researcher_client, campaign):
    url = reverse("admin:campaigns_exportjob_changelist")
    job = ExportJob.objects.create(campaign=campaign, status="running", rows_written=5,
                                   rows_total=20)
    text = researcher_client.get(url).content.decode()
    assert '<meta http-equiv="refresh" content="5">' in text
    assert "5 / 20 (25%)" in text
    job.status = "done"
    job.save()
    assert 'http-equiv="refresh"' not in researcher_client.get(url).content.decode()
