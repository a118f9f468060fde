"""The download view: the campaign's researchers get the file, everyone else a 404."""
import gzip

import pytest
from django.urls import reverse

from campaigns.models import ExportJob
from campaigns.services.exports import export_job_create
from tests.exports import conftest as exports_fixtures
from tests.exports.conftest import make_annotation

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]

# The export fixtures: a job run and read, its files under the test's own folder.
export = exports_fixtures.export
_export_storage = exports_fixtures._export_storage


@pytest.fixture
def done_job(campaign, export):
    make_annotation(campaign, answers={"coherence": 5, "sentiment": 1})
    job, _ = export(campaign, "csv")
    return job


def test_the_owner_downloads_the_file_as_an_attachment(client, owner, done_job):
    client.force_login(owner)
    response = client.get(reverse("export_download", args=[done_job.pk]))
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert "attachment" in response["Content-Disposition"]
    assert b"".join(response.streaming_content).startswith(b"annotation_id,item_id,")


def test_a_collaborator_downloads_it_too(client, other_owner, campaign, done_job):
    campaign.collaborators.add(other_owner)
    client.force_login(other_owner)
    assert client.get(reverse("export_download", args=[done_job.pk])).status_code == 200


def test_a_second_researcher_gets_a_404(client, other_owner, done_job):
    client.force_login(other_owner)
    assert client.get(reverse("export_download", args=[done_job.pk])).status_code == 404


def test_an_anonymous_visitor_gets_a_404(client, done_job):
    assert client.get(reverse("export_download", args=[done_job.pk])).status_code == 404


def test_an_unfinished_job_has_nothing_to_download(client, owner, campaign):
    job = export_job_create(campaign=campaign, requested_by=owner, fmt="csv", enqueue=False)
    client.force_login(owner)
    assert client.get(reverse("export_download", args=[job.pk])).status_code == 404


def test_a_file_gone_from_storage_is_a_404_not_a_500(client, owner, done_job):
    ExportJob.objects.filter(pk=done_job.pk).update(file="nowhere/missing.csv")
    client.force_login(owner)
    assert client.get(reverse("export_download", args=[done_job.pk])).status_code == 404


def test_a_gzip_export_downloads_as_gzip(client, owner, campaign, export):
    make_annotation(campaign, answers={"coherence": 5, "sentiment": 1})
    job, _ = export(campaign, "jsonl", gzip=True)
    client.force_login(owner)
    response = client.get(reverse("export_download", args=[job.pk]))
    assert response["Content-Type"] == "application/gzip"
    assert gzip.decompress(b"".join(response.streaming_content)).startswith(b'{"annotation_id"')
