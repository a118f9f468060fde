"""Big item uploads: imported by a background job (202, then poll), all or nothing; wide
headers are refused at once, and the repeated-column check is linear."""
import time

import pytest
from django.core.files.storage import storages
from django.core.files.uploadedfile import SimpleUploadedFile

from campaigns.importing import ImportRejected, read_records
from campaigns.models import ImportJob, Item

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


def _csv(n: int, *, bad_row: int | None = None) -> bytes:
    rows = ["id,prompt,completion"]
    rows += [f"i{i},prompt {i},{'' if i == bad_row else f'completion {i}'}"
             for i in range(1, n + 1)]
    return ("\n".join(rows) + "\n").encode()


def _post(api, campaign, content, name="items.csv"):
    return api.post(f"/api/campaigns/{campaign.slug}/items/import/",
                    {"file": SimpleUploadedFile(name, content)}, format="multipart")


def test_a_big_upload_is_a_202_job_that_imports_everything(
        api, campaign, settings, django_capture_on_commit_callbacks):
    settings.IMPORT_BACKGROUND_BYTES = 1000
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(api, campaign, _csv(300))
    assert response.status_code == 202, response.json()
    started = response.json()
    assert started["status"] == "queued" and started["url"].endswith(f"/{started['id']}/")
    polled = api.get(started["url"]).json()
    assert (polled["status"], polled["created"], polled["errors"]) == ("done", 300, [])
    assert Item.objects.filter(campaign=campaign).count() == 300
    job = ImportJob.objects.get()
    assert not storages["imports"].exists(job.file)  # the upload is gone once imported


def test_a_big_upload_with_one_bad_row_imports_nothing_and_says_why(
        api, campaign, settings, django_capture_on_commit_callbacks):
    settings.IMPORT_BACKGROUND_BYTES = 1000
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(api, campaign, _csv(300, bad_row=250))
    polled = api.get(response.json()["url"]).json()
    assert polled["status"] == "failed" and polled["error_total"] == 1
    assert "row 250" in polled["errors"][0]
    assert not Item.objects.exists()


def test_a_small_upload_still_imports_in_the_request(api, campaign):
    response = _post(api, campaign, _csv(3))
    assert response.status_code == 201 and not ImportJob.objects.exists()


def test_another_researchers_job_is_404(api, campaign, other_owner, settings,
                                        django_capture_on_commit_callbacks):
    from tests.api.conftest import token_client
    settings.IMPORT_BACKGROUND_BYTES = 1000
    with django_capture_on_commit_callbacks(execute=True):
        url = _post(api, campaign, _csv(300)).json()["url"]
    assert token_client(other_owner).get(url).status_code == 404


def test_a_header_of_100000_columns_is_refused_at_once(api, campaign):
    header = ",".join(f"c{i}" for i in range(100_000))
    started = time.monotonic()
    response = _post(api, campaign, (header + "\n" + "," * 99_999 + "\n").encode())
    assert time.monotonic() - started < 5
    assert response.status_code == 400
    assert "100000 columns; at most 1000" in str(response.json())


def test_the_repeated_column_check_is_linear(settings):
    settings.IMPORT_MAX_COLUMNS = 100_000
    header = ",".join(f"c{i}" for i in range(40_000)) + ",c7"
    started = time.monotonic()
    with pytest.raises(ImportRejected, match=r"repeated columns \['c7'\]"):
        list(read_records(header + "\n", "csv"))
    assert time.monotonic() - started < 2


def test_a_job_left_running_by_a_killed_worker_runs_again_and_only_once(api, campaign):
    from campaigns.services.imports import import_job_create, import_job_run
    job = import_job_create(campaign=campaign, requested_by=None, filename="items.csv",
                            upload=SimpleUploadedFile("items.csv", _csv(20)), fmt=None,
                            enqueue=False)
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.RUNNING)  # killed
    import_job_run(job_id=job.pk)  # the re-delivery
    import_job_run(job_id=job.pk)  # a late duplicate finds it done
    job.refresh_from_db()
    assert (job.status, job.created) == ("done", 20)
    assert Item.objects.filter(campaign=campaign).count() == 20
