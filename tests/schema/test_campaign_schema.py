"""campaign_schema: the parsed schema of a campaign's row version, never a stale one."""
import copy

import pytest

from campaigns import schema as schema_module
from campaigns.models import Campaign
from campaigns.schema import campaign_schema
from campaigns.services.campaigns import campaign_update
from campaigns.services.schema_changes import question_rename
from tests.factories import CONTINUATION_SCHEMA, make_campaign

pytestmark = pytest.mark.django_db


def _texts(parsed) -> list[str]:
    return [q.text for q in parsed.questions]


@pytest.fixture
def serialised(monkeypatch) -> list[dict]:
    """The schemas turned into JSON text to be looked up by content."""
    seen = []
    original = schema_module.parse_schema_cached

    def spy(data):
        seen.append(data)
        return original(data)

    monkeypatch.setattr(schema_module, "parse_schema_cached", spy)
    return seen


def test_the_same_row_version_is_served_without_serialising_the_schema(owner, serialised):
    campaign = make_campaign(owner=owner, schema=copy.deepcopy(CONTINUATION_SCHEMA))
    first = campaign_schema(Campaign.objects.get(pk=campaign.pk))
    again = campaign_schema(Campaign.objects.get(pk=campaign.pk))  # another request's read
    assert again is first
    assert len(serialised) == 1


def test_a_schema_changed_through_the_update_service_is_parsed_again(owner):
    """The admin, the API and the rulebook change a campaign through campaign_update."""
    campaign = make_campaign(owner=owner, schema=copy.deepcopy(CONTINUATION_SCHEMA))
    assert _texts(campaign_schema(Campaign.objects.get(pk=campaign.pk)))[0] == "Coherent?"
    changed = copy.deepcopy(CONTINUATION_SCHEMA)
    changed["questions"][0]["text"] = "Is it coherent?"
    campaign_update(campaign=campaign, schema=changed)
    assert _texts(campaign_schema(Campaign.objects.get(pk=campaign.pk)))[0] == "Is it coherent?"


def test_a_renamed_question_is_served_under_its_new_id(owner):
    campaign = make_campaign(owner=owner, schema=copy.deepcopy(CONTINUATION_SCHEMA))
    assert campaign_schema(campaign).question("coherence")
    question_rename(campaign=campaign, question="coherence", to="fluency")
    parsed = campaign_schema(Campaign.objects.get(pk=campaign.pk))
    assert [q.id for q in parsed.questions][0] == "fluency"


def test_an_update_that_leaves_updated_at_alone_is_not_served_stale(owner):
    campaign = make_campaign(owner=owner, schema=copy.deepcopy(CONTINUATION_SCHEMA))
    campaign_schema(Campaign.objects.get(pk=campaign.pk))
    changed = copy.deepcopy(CONTINUATION_SCHEMA)
    changed["questions"][1]["text"] = "Upbeat?"
    Campaign.objects.filter(pk=campaign.pk).update(schema=changed)  # updated_at unchanged
    fresh = Campaign.objects.get(pk=campaign.pk)
    assert fresh.updated_at == campaign.updated_at
    assert _texts(campaign_schema(fresh))[1] == "Upbeat?"


def test_a_schema_mutated_in_place_is_not_served_stale(owner):
    campaign = make_campaign(owner=owner, schema=copy.deepcopy(CONTINUATION_SCHEMA))
    assert _texts(campaign_schema(campaign))[2] == "Feedback"
    campaign.schema["questions"][2]["text"] = "Anything else?"  # nested, same objects
    assert _texts(campaign_schema(campaign))[2] == "Anything else?"
    campaign.schema["questions"][2]["text"] = "Feedback"
    assert _texts(campaign_schema(campaign))[2] == "Feedback"


def test_an_unsaved_campaign_is_parsed_and_not_kept(owner):
    unsaved = Campaign(owner=owner, slug="draft", schema=copy.deepcopy(CONTINUATION_SCHEMA))
    assert _texts(campaign_schema(unsaved))[0] == "Coherent?"
    unsaved.schema["questions"][0]["text"] = "Reads well?"
    assert _texts(campaign_schema(unsaved))[0] == "Reads well?"
    assert not [key for key in schema_module._BY_VERSION if key[0] is None]
