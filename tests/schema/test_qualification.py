"""The qualification setting: its shape is checked on every route, its items against the
campaign's gold items (warned at save, refused at publish)."""
import pytest

from campaigns.errors import ServiceError
from campaigns.models import Item
from campaigns.schema import SchemaInvalid
from campaigns.schema.qualification import parse_qualification
from campaigns.services.campaigns import (
    campaign_control_problems,
    campaign_publish,
    campaign_update,
)
from tests.factories import make_campaign, make_items


def paths(value):
    with pytest.raises(SchemaInvalid) as caught:
        parse_qualification(value)
    return {issue.path for issue in caught.value.issues}


def test_empty_means_no_test_and_a_full_setting_parses():
    assert parse_qualification({}) is None and parse_qualification(None) is None
    settings = parse_qualification({"items": ["a", " b"], "pass_mark": 0.5, "feedback": True,
                                    "group": "summaries-2026"})
    assert settings.items == ("a", "b") and settings.pass_mark == 0.5 and settings.feedback
    assert settings.group == "summaries-2026"


@pytest.mark.parametrize("value, path", [
    ([], "qualification"),
    ({"pass_mark": 0.5}, "qualification.items"),
    ({"items": [], "pass_mark": 0.5}, "qualification.items"),
    ({"items": ["a", "a"], "pass_mark": 0.5}, "qualification.items"),
    ({"items": [f"i{n}" for n in range(21)], "pass_mark": 0.5}, "qualification.items"),
    ({"items": ["a"], "pass_mark": 0}, "qualification.pass_mark"),
    ({"items": ["a"], "pass_mark": 80}, "qualification.pass_mark"),
    ({"items": ["a"], "pass_mark": True}, "qualification.pass_mark"),
    ({"items": ["a"], "pass_mark": 1, "feedback": "yes"}, "qualification.feedback"),
    ({"items": ["a"], "pass_mark": 1, "group": "two words"}, "qualification.group"),
    ({"items": ["a"], "pass_mark": 1, "passmark": 1}, "qualification.passmark"),
])
def test_each_wrong_setting_is_named_by_its_path(value, path):
    assert path in paths(value)


@pytest.mark.parametrize("correct, total, mark, passes", [
    (4, 5, 0.8, True), (3, 5, 0.8, False), (2, 3, 0.67, False), (2, 3, 0.66, True),
    (1, 1, 1.0, True), (0, 1, 0.01, False)])
def test_the_pass_mark_is_at_least_that_share_correct(correct, total, mark, passes):
    settings = parse_qualification({"items": ["a"], "pass_mark": mark})
    assert settings.passes(correct, total) is passes


@pytest.mark.django_db
def test_an_update_with_a_wrong_setting_is_refused(owner):
    campaign = make_campaign(owner=owner)
    with pytest.raises(SchemaInvalid, match="qualification.pass_mark"):
        campaign_update(campaign=campaign, qualification={"items": ["a"], "pass_mark": 2})


@pytest.mark.django_db
def test_items_that_are_not_gold_with_answers_are_warned_and_refused_at_publish(owner):
    campaign = make_campaign(owner=owner, status="draft", gold_items_per_assignment=2)
    make_items(campaign, 2)
    make_items(campaign, 2, control=Item.Control.GOLD, gold={"coherence": 4}, prefix="q")
    make_items(campaign, 1, control=Item.Control.GOLD, prefix="nogold")
    campaign_update(campaign=campaign, qualification={"items": ["q-0", "nogold-0", "item-0"],
                                                      "pass_mark": 1})
    problems = campaign_control_problems(campaign=campaign)
    assert any("2 item(s)" in p and "nogold-0, item-0" in p for p in problems)
    with pytest.raises(ServiceError, match="qualification test lists"):
        campaign_publish(campaign=campaign)
    # The test's items are not mixed in: two gold items per assignment need two others.
    campaign_update(campaign=campaign, qualification={"items": ["q-0", "q-1"], "pass_mark": 1})
    assert any("Gold items per assignment is 2" in p
               for p in campaign_control_problems(campaign=campaign))
    campaign_update(campaign=campaign, qualification={"items": ["q-0"], "pass_mark": 1})
    assert campaign_control_problems(campaign=campaign) == []
    assert campaign_publish(campaign=campaign).status == "live"
