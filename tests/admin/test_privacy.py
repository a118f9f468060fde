"""The worker list's admin action deletes the selected workers' data after a confirmation page."""
import pytest
from django.urls import reverse

from campaigns.models import DeletionRecord, Worker
from campaigns.work import annotation_submit, assignment_claim, worker_get_or_create
from tests.factories import as_researcher, make_campaign, make_items

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:campaigns_worker_changelist"


@pytest.fixture
def answered_worker(owner):
    campaign = make_campaign(owner=owner, annotations_per_item=1)
    make_items(campaign, 1)
    worker = worker_get_or_create(campaign=campaign, platform="prolific", platform_id="PID-ADMIN")
    assignment = assignment_claim(campaign=campaign, worker=worker)
    annotation_submit(assignment=assignment, position=1, answers={"coherence": 2, "sentiment": 5})
    return worker


def post_action(client, worker, **extra):
    return client.post(reverse(CHANGELIST), {"action": "erase_workers",
                                             "_selected_action": [worker.pk], **extra})


def test_the_owner_confirms_and_the_data_is_deleted_and_recorded(client, owner, answered_worker):
    client.force_login(as_researcher(owner))
    confirm = post_action(client, answered_worker)
    assert confirm.status_code == 200
    assert b"Yes, delete their data" in confirm.content
    assert not DeletionRecord.objects.exists(), "nothing is deleted before the confirmation"

    done = post_action(client, answered_worker, confirm="yes", reason="email of 3 May")
    assert done.status_code == 302
    answered_worker.refresh_from_db()
    assert answered_worker.erased_at and answered_worker.platform_id.startswith("erased-")
    record = DeletionRecord.objects.get()
    assert (record.requested_by, record.requested_via, record.reason) == (
        owner, "admin", "email of 3 May")
    assert record.annotations_deleted == 1


def test_a_researcher_of_another_campaign_cannot_erase_the_worker(client, other_owner,
                                                                  answered_worker):
    client.force_login(as_researcher(other_owner))
    post_action(client, answered_worker, confirm="yes")
    assert Worker.objects.get(pk=answered_worker.pk).erased_at is None
    assert not DeletionRecord.objects.exists()
