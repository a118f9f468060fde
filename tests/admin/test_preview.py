"""Preview as a worker: the real item page for a chosen item, with nothing recorded."""
import pytest
from django.urls import reverse

from campaigns.models import Annotation, Assignment, Worker
from tests.admin.conftest import add_items

pytestmark = pytest.mark.django_db


def preview_url(campaign):
    return reverse("admin:campaigns_campaign_preview", args=[campaign.pk])


def test_the_chooser_lists_items_and_searches_by_id(researcher_client, campaign):
    add_items(campaign, 3)
    response = researcher_client.get(preview_url(campaign), {"q": "item-2"})
    assert response.status_code == 200
    assert [i.external_id for i in response.context["items"]] == ["item-2"]


def test_it_renders_the_worker_item_page_and_records_nothing(researcher_client, campaign):
    add_items(campaign, 2)
    item = campaign.items.first()
    response = researcher_client.get(preview_url(campaign), {"item": item.pk})
    assert response.status_code == 200
    text = response.content.decode()
    assert "nothing you enter here is recorded" in text.lower()
    assert item.data["prompt"] in text
    assert (Worker.objects.count(), Assignment.objects.count(), Annotation.objects.count()) == (
        0, 0, 0)


def test_an_item_of_another_campaign_or_garbage_is_refused_politely(researcher_client,
                                                                     researcher, campaign):
    from tests.factories import make_campaign

    other = make_campaign(owner=researcher)
    add_items(other, 1)
    for value in (str(other.items.get().pk), "abc", "9" * 30):
        response = researcher_client.get(preview_url(campaign), {"item": value}, follow=True)
        assert response.status_code == 200
        assert "This campaign has no item with id" in response.content.decode()
