"""The worker reads' campaign, kept per process by its row version: read once, and read again
whenever the row changed, by whatever path it changed."""
import pytest
from django.db import connection
from django.utils import timezone

from campaigns.errors import ServiceError
from campaigns.models import Campaign
from campaigns.work import (
    annotation_submit,
    assignment_by_token,
    assignment_with_page,
    campaign_and_worker,
    campaign_rows,
)
from tests.factories import make_campaign

pytestmark = pytest.mark.django_db


def read(assignment):
    return assignment_by_token(token=assignment.token).campaign


def test_the_campaign_is_read_once_then_taken_from_the_process(assignment,
                                                               django_assert_num_queries):
    with django_assert_num_queries(2):  # the assignment with the row's version, then the row
        first = read(assignment)
    with django_assert_num_queries(1):
        second = read(assignment)
    assert first == second and first is not second
    assert second.schema == assignment.campaign.schema
    assert second.name == assignment.campaign.name
    with django_assert_num_queries(1):
        campaign, worker = campaign_and_worker(slug=assignment.campaign.slug, platform="link",
                                               platform_id="w1")
    assert campaign.slug == assignment.campaign.slug and worker.pk == assignment.worker_id


def test_a_queryset_update_that_leaves_updated_at_alone_is_seen_at_once(assignment):
    before = read(assignment)
    Campaign.objects.filter(pk=before.pk).update(status=Campaign.Status.PAUSED)
    assert read(assignment).status == Campaign.Status.PAUSED
    assert read(assignment).updated_at == before.updated_at


def test_a_row_changed_by_sql_alone_is_seen_at_once(assignment):
    read(assignment)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE campaigns_campaign SET name = 'renamed by hand' WHERE id = %s",
                       [assignment.campaign_id])
    assert read(assignment).name == "renamed by hand"


def test_two_changes_in_one_transaction_are_told_apart(assignment):
    # The test runs in one transaction: both versions have the same xmin, not the same place.
    campaign = read(assignment)
    campaign.schema = {**campaign.schema, "display": campaign.schema["display"][:1]}
    campaign.save()
    assert len(read(assignment).schema["display"]) == 1
    Campaign.objects.filter(pk=campaign.pk).update(name="second change")
    changed = read(assignment)
    assert changed.name == "second change" and len(changed.schema["display"]) == 1


def test_what_a_request_changes_on_its_campaign_stays_in_that_request(assignment):
    campaign = read(assignment)
    campaign.schema["questions"].clear()
    campaign.name = "changed in memory only"
    again = read(assignment)
    assert again.schema["questions"] and again.name != "changed in memory only"


def test_every_worker_read_gets_the_same_campaign(assignment):
    page_assignment, page = assignment_with_page(token=assignment.token, position=1)
    saved = annotation_submit(token=assignment.token, position=1,
                              answers={"coherence": 3, "sentiment": 4})
    for campaign in (read(assignment), page_assignment.campaign, saved.assignment.campaign):
        assert campaign.pk == assignment.campaign_id
        assert campaign.schema == assignment.campaign.schema
    assert page.entry.position == 1


def test_a_campaign_gone_since_its_version_was_read_is_none(owner):
    campaign = make_campaign(owner=owner)
    version = [campaign.pk, "1", "(0,1)", timezone.now()]
    campaign.delete()
    assert campaign_rows.campaign_row(version) is None


def test_the_process_keeps_at_most_so_many_campaigns(owner, monkeypatch):
    monkeypatch.setattr(campaign_rows, "MAX_CAMPAIGNS", 2)
    monkeypatch.setattr(campaign_rows, "_rows", type(campaign_rows._rows)())
    slugs = [make_campaign(owner=owner, slug=f"kept-{n}").slug for n in range(3)]
    for slug in slugs:
        campaign_and_worker(slug=slug, platform="link", platform_id="w1")
    kept = {key[1] for key in campaign_rows._rows}
    assert len(kept) == 2
    assert Campaign.objects.get(slug=slugs[0]).pk not in kept  # the least recently read


def test_a_campaign_deleted_between_the_read_and_its_row_is_not_found(assignment,
                                                                       monkeypatch):
    # The miss's read finds no row: every worker read answers as for an unknown token or slug.
    monkeypatch.setattr("campaigns.work.reads.campaign_row", lambda version: None)
    assert assignment_by_token(token=assignment.token) is None
    assert assignment_with_page(token=assignment.token, position=1) == (None, None)
    assert campaign_and_worker(slug=assignment.campaign.slug, platform="link",
                               platform_id="w1") == (None, None)
    with pytest.raises(ServiceError) as gone:
        annotation_submit(token=assignment.token, position=1,
                          answers={"coherence": 3, "sentiment": 4})
    assert gone.value.status == 404
