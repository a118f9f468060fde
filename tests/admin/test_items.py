"""The item list: fill counts, filters by system, control and fill state; read-only items,
deletable only in a draft before any work."""
import pytest
from django.urls import reverse

from campaigns.models import Item
from tests.admin.conftest import add_items

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("params", "expected"), [
    ({}, 5), ({"system": "sys-a"}, 2), ({"control__exact": "attention"}, 1),
    ({"fill": "complete"}, 1), ({"fill": "untouched"}, 3), ({"fill": "open"}, 3),
])
def test_the_item_list_filters_by_system_control_and_fill_state(researcher_client, campaign,
                                                                params, expected):
    add_items(campaign, 4)
    Item.objects.create(campaign=campaign, external_id="attn", control="attention",
                        data={}, slots_wanted=0)
    Item.objects.filter(external_id="item-1").update(slots_taken=3, annotations_done=3)
    response = researcher_client.get(reverse("admin:campaigns_item_changelist"), params)
    assert response.status_code == 200
    assert response.context["cl"].result_count == expected


def test_items_are_read_only_and_deletable_only_in_a_draft_before_any_work(researcher_client,
                                                                          campaign):
    add_items(campaign, 1)
    item = campaign.items.get()
    url = reverse("admin:campaigns_item_delete", args=[item.pk])
    assert researcher_client.get(url).status_code == 403  # live campaign
    campaign.status = "draft"
    campaign.save()
    assert researcher_client.get(url).status_code == 200
    response = researcher_client.get(reverse("admin:campaigns_item_change", args=[item.pk]))
    assert response.status_code == 200
    assert b'name="external_id"' not in response.content  # shown, not editable
