"""The campaign's free-text switches (block_paste, block_copy): true or false, whichever way
they come in (the command's JSON file, the API, the admin form)."""
import json

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from campaigns.schema import SchemaInvalid
from campaigns.services.campaigns import campaign_update
from tests.factories import make_campaign

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("value", ["yes", 1, None, [True]])
def test_anything_but_true_or_false_is_refused_and_nothing_changes(owner, value):
    campaign = make_campaign(owner=owner)
    with pytest.raises(SchemaInvalid) as caught:
        campaign_update(campaign=campaign, block_paste=value)
    assert [(i.path, i.message) for i in caught.value.issues] == [
        ("block_paste", "must be true or false")]
    campaign.refresh_from_db()
    assert campaign.block_paste is False


def test_the_command_refuses_a_non_boolean_with_the_services_words(owner, tmp_path):
    campaign = make_campaign(owner=owner)
    settings = tmp_path / "s.json"
    settings.write_text(json.dumps({"block_copy": "on"}))
    with pytest.raises(CommandError, match="block_copy: must be true or false"):
        call_command("campaign", "update", campaign.slug, str(settings))
    settings.write_text(json.dumps({"block_copy": True}))
    call_command("campaign", "update", campaign.slug, str(settings))
    campaign.refresh_from_db()
    assert campaign.block_copy is True


def test_the_api_reads_and_writes_them(owner):
    from tests.api.conftest import token_client
    campaign = make_campaign(owner=owner)
    api: APIClient = token_client(owner)
    response = api.patch(f"/api/campaigns/{campaign.slug}/", {"block_paste": True},
                         format="json")
    assert response.status_code == 200, response.json()
    assert (response.json()["block_paste"], response.json()["block_copy"]) == (True, False)
    response = api.patch(f"/api/campaigns/{campaign.slug}/", {"block_paste": "maybe"},
                         format="json")
    assert response.status_code == 400
    campaign.refresh_from_db()
    assert campaign.block_paste is True
