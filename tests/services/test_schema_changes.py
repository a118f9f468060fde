"""What a schema change may do once questions have answers, asked of each kind (not by name)."""
import copy

import pytest

from campaigns.models import Item
from campaigns.services.schema_changes import answered_questions, schema_change_issues
from tests.api.conftest import make_annotation
from tests.factories import RUBRIC_SCHEMA, SUMMARY_SCHEMA, make_campaign

pytestmark = pytest.mark.django_db


def _item(campaign, data):
    return Item.objects.create(campaign=campaign, external_id="i1", data=data,
                               slots_wanted=campaign.annotations_per_item)


def _messages(campaign, schema) -> str:
    return " ".join(str(i) for i in schema_change_issues(campaign=campaign, schema=schema))


def test_a_rubric_criterion_with_answers_cannot_go_but_its_text_may_change(owner):
    campaign = make_campaign(owner=owner, schema=RUBRIC_SCHEMA)
    scores = {c["id"]: 0 for c in RUBRIC_SCHEMA["questions"][0]["criteria"]}
    make_annotation(campaign, _item(campaign, {"answer": "x"}), answers={"rubric": scores})
    assert answered_questions(campaign=campaign) == {"rubric": 1}
    reworded = copy.deepcopy(RUBRIC_SCHEMA)
    reworded["questions"][0]["criteria"][0]["text"] = "first criterion, reworded"
    assert _messages(campaign, reworded) == ""
    dropped = copy.deepcopy(RUBRIC_SCHEMA)
    dropped["questions"][0]["criteria"].pop(0)
    assert "1 of the 1 stored answer(s) of 'rubric' would no longer fit" in _messages(
        campaign, dropped)


def test_a_lines_option_with_answers_is_checked_against_each_items_lines(owner):
    campaign = make_campaign(owner=owner, schema=SUMMARY_SCHEMA)
    item = _item(campaign, {"story": "s", "summary": "One line. Two lines."})
    make_annotation(campaign, item, answers={
        "lines": [{"label": "na"}, {"label": "consistent"}], "summary_consistent": "consistent"})
    no_na = copy.deepcopy(SUMMARY_SCHEMA)
    no_na["questions"][0]["options"] = [o for o in no_na["questions"][0]["options"]
                                        if o["value"] != "na"]
    assert "would no longer fit" in _messages(campaign, no_na)
    relabelled = copy.deepcopy(SUMMARY_SCHEMA)
    relabelled["questions"][0]["options"][2]["label"] = "Not applicable"
    assert _messages(campaign, relabelled) == ""


def test_an_answered_questions_kind_cannot_change(owner):
    campaign = make_campaign(owner=owner, schema=SUMMARY_SCHEMA)
    item = _item(campaign, {"story": "s", "summary": "One line."})
    make_annotation(campaign, item, answers={"lines": [{"label": "na"}],
                                             "summary_consistent": "consistent"})
    as_text = copy.deepcopy(SUMMARY_SCHEMA)
    as_text["questions"][1] = {"id": "summary_consistent", "kind": "text", "text": "Say"}
    assert "its kind cannot change" in _messages(campaign, as_text)


def test_a_campaign_without_answers_may_change_anything(owner):
    campaign = make_campaign(owner=owner, schema=SUMMARY_SCHEMA)
    assert _messages(campaign, RUBRIC_SCHEMA) == ""


def test_a_lines_option_rename_rewrites_labels_and_the_followups_trigger(owner):
    from campaigns.services.schema_changes import option_rename

    campaign = make_campaign(owner=owner, schema=SUMMARY_SCHEMA)
    item = _item(campaign, {"story": "s", "summary": "One line. Two lines."})
    make_annotation(campaign, item, answers={
        "lines": [{"label": "inconsistent", "rewrite": "R"}, {"label": "consistent"}],
        "summary_consistent": "consistent"})
    record = option_rename(campaign=campaign, question="lines", value="inconsistent", to="wrong")
    assert record.annotations_changed == 1
    campaign.refresh_from_db()
    lines = campaign.schema["questions"][0]
    assert lines["followup"]["when"] == ["wrong"]
    assert campaign.annotations.get().answers["lines"][0] == {"label": "wrong", "rewrite": "R"}
    assert campaign.annotations.get().answers["summary_consistent"] == "consistent"


def test_a_flags_option_rename_rewrites_the_selected_reasons(owner):
    from campaigns.services.schema_changes import option_rename
    from tests.factories import TRANSLATION_SCHEMA

    campaign = make_campaign(owner=owner, schema=TRANSLATION_SCHEMA)
    item = _item(campaign, {"source": "s", "translation": "t"})
    make_annotation(campaign, item, answers={"acceptability": 50,
                                             "source_issues": {"selected": ["typos"]}})
    option_rename(campaign=campaign, question="source_issues", value="typos", to="spelling")
    assert campaign.annotations.get().answers["source_issues"] == {"selected": ["spelling"]}
