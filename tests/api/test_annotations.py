"""Annotation list: cursor pagination, filters by system, worker pseudonym and time."""
from datetime import timedelta

import pytest
from django.utils import timezone

from campaigns.exporting.pseudonyms import worker_pseudonym
from campaigns.models import Annotation, Assignment
from tests.api.conftest import make_annotation, make_items

pytestmark = pytest.mark.django_db


@pytest.fixture
def annotations(campaign):
    a_items = make_items(campaign, 3, system="a")
    b_items = make_items(campaign, 2, system="b")
    made = [make_annotation(campaign, item, worker_id="W1") for item in a_items]
    made += [make_annotation(campaign, item, worker_id="W2") for item in b_items]
    return made


def test_it_lists_annotations_with_pseudonyms_not_platform_ids(api, campaign, annotations):
    body = api.get(f"/api/campaigns/{campaign.slug}/annotations/").json()
    assert len(body["results"]) == 5
    first = body["results"][0]
    assert first["item"] == "a-0" and first["system"] == "a"
    assert first["answers"] == {"coherence": 4, "sentiment": 2}
    assert first["worker"] == worker_pseudonym(campaign_id=campaign.pk, platform="prolific",
                                               platform_id="W1")
    assert "W1" not in str(body)


def test_each_annotation_says_the_allocation_it_was_handed_out_under(api, campaign,
                                                                     annotations):
    Assignment.objects.filter(pk=annotations[0].assignment_id).update(
        allocation="adaptive_precision", allocation_epoch=4)
    body = api.get(f"/api/campaigns/{campaign.slug}/annotations/").json()
    assert [(a["allocation"], a["allocation_epoch"]) for a in body["results"][:2]] == [
        ("adaptive_precision", 4), ("", None)]  # the second made without a claim


def test_it_filters_by_system(api, campaign, annotations):
    body = api.get(f"/api/campaigns/{campaign.slug}/annotations/?system=b").json()
    assert {a["system"] for a in body["results"]} == {"b"} and len(body["results"]) == 2


def test_it_filters_by_worker_pseudonym(api, campaign, annotations):
    w2 = worker_pseudonym(campaign_id=campaign.pk, platform="prolific", platform_id="W2")
    body = api.get(f"/api/campaigns/{campaign.slug}/annotations/?worker={w2}").json()
    assert [a["item"] for a in body["results"]] == ["b-0", "b-1"]


def test_it_filters_by_submitted_after(api, campaign, annotations):
    old = timezone.now() - timedelta(days=2)
    Annotation.objects.filter(pk__in=[a.pk for a in annotations[:4]]).update(updated_at=old)
    since = (timezone.now() - timedelta(days=1)).isoformat()
    body = api.get(f"/api/campaigns/{campaign.slug}/annotations/",
                   {"submitted_after": since}).json()
    assert [a["id"] for a in body["results"]] == [annotations[4].pk]


@pytest.mark.parametrize("query", ["submitted_after=yesterday", "worker=W1"])
def test_a_malformed_filter_is_a_400_naming_it(api, campaign, query):
    response = api.get(f"/api/campaigns/{campaign.slug}/annotations/?{query}")
    assert response.status_code == 400
    assert query.split("=")[0] in response.json()["extra"]["fields"]


@pytest.mark.parametrize("page_size", [1, 5])
def test_the_annotation_list_runs_the_same_queries_whatever_the_page_size(
        api, campaign, annotations, django_assert_num_queries, page_size):
    w1 = worker_pseudonym(campaign_id=campaign.pk, platform="prolific", platform_id="W1")
    # token + user, the campaign, the page (items and workers joined)
    with django_assert_num_queries(3):
        body = api.get(f"/api/campaigns/{campaign.slug}/annotations/?page_size={page_size}")
    assert len(body.json()["results"]) == page_size
    # ... plus one for the worker filter, which hashes the campaign's workers
    with django_assert_num_queries(4):
        api.get(f"/api/campaigns/{campaign.slug}/annotations/?page_size={page_size}&worker={w1}")
