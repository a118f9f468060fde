"""Exports name workers by a keyed pseudonym by default; raw platform ids only on request."""
import pytest
from django.core.files.storage import storages

from campaigns.exporting.pseudonyms import worker_pseudonym
from campaigns.models import ExportJob
from campaigns.services.exports import export_job_create
from campaigns.work import annotation_submit, assignment_claim, worker_get_or_create
from tests.factories import make_campaign, make_items

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]

RAW_ID = "60a1b2c3d4e5f60718293a4b"


@pytest.fixture
def answered(owner, settings, tmp_path):
    settings.STORAGES = {**settings.STORAGES, "exports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path)}}}
    campaign = make_campaign(owner=owner, annotations_per_item=1)
    make_items(campaign, 1)
    worker = worker_get_or_create(campaign=campaign, platform="prolific", platform_id=RAW_ID)
    assignment = assignment_claim(campaign=campaign, worker=worker)
    annotation_submit(assignment=assignment, position=1, answers={"coherence": 3, "sentiment": 4})
    return campaign


def export(campaign, owner, capture, **options) -> str:
    with capture(execute=True):
        job = export_job_create(campaign=campaign, requested_by=owner, fmt="csv", options=options)
    job.refresh_from_db()
    assert job.status == ExportJob.Status.DONE, job.error
    with storages["exports"].open(job.file) as handle:
        return handle.read().decode("utf-8")


def test_exports_are_pseudonymised_by_default(answered, owner,
                                              django_capture_on_commit_callbacks):
    text = export(answered, owner, django_capture_on_commit_callbacks)
    assert RAW_ID not in text
    pseudonym = worker_pseudonym(campaign_id=answered.pk, platform="prolific", platform_id=RAW_ID)
    assert pseudonym in text


def test_the_campaigns_researcher_gets_raw_ids_only_when_asking(answered, owner,
                                                                django_capture_on_commit_callbacks):
    text = export(answered, owner, django_capture_on_commit_callbacks, raw_worker_ids=True)
    assert RAW_ID in text


def test_the_pseudonym_is_stable_in_a_campaign_and_differs_across_campaigns():
    one = worker_pseudonym(campaign_id=1, platform="prolific", platform_id=RAW_ID)
    assert one == worker_pseudonym(campaign_id=1, platform="prolific", platform_id=RAW_ID)
    assert one != worker_pseudonym(campaign_id=2, platform="prolific", platform_id=RAW_ID)
    assert RAW_ID not in one
