"""`for_each_turn`: a question that rates one text, asked once per turn of one role of a
conversation (`turn: "last"`: the final assistant turn only), stored by turn index."""
import csv
import io

import pytest

from campaigns.models import Annotation, Item
from campaigns.schema import parse_schema, validate_answers, validate_schema
from campaigns.schema.base import AnswerInvalid
from campaigns.schema.contract import Capability
from campaigns.schema.outputs import judged_answers
from tests.exports.conftest import make_annotation
from tests.factories import make_campaign
from tests.views.conftest import PROLIFIC, item_url, start

POINTS = [{"value": v, "label": str(v)} for v in range(1, 6)]
CHAT = [{"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is 2+2?"},
        {"role": "assistant", "content": "4."},
        {"role": "user", "content": "And <b>3+3</b>?"},
        {"role": "assistant", "content": "6, of course."}]
DATA = {"messages": CHAT}


def _schema(**settings):
    return parse_schema({"questions": [{"id": "helpful", "kind": "likert", "text": "Helpful?",
                                        "points": POINTS, "for_each_turn": "assistant",
                                        **settings}]})


def test_settings_name_a_role_and_last_means_the_final_assistant_turn():
    assert _schema(turn="last").questions[0].for_each_turn == "assistant"
    assert "not both" in validate_schema({"questions": [{
        "id": "q", "kind": "likert", "text": "?", "points": POINTS, "for_each_turn": "user",
        "for_each_output": True}]})[0].message
    assert "must be \"assistant\"" in validate_schema({"questions": [{
        "id": "q", "kind": "likert", "text": "?", "points": POINTS, "for_each_turn": "user",
        "turn": "last"}]})[0].message
    assert "rates one text" in validate_schema({"questions": [{
        "id": "q", "kind": "pairwise", "text": "?", "for_each_turn": "assistant"}]})[0].message
    q = _schema().questions[0]
    assert not q.supports(Capability.JUDGES_OUTPUTS) and q.item_fields() == ["messages"]


def test_each_turn_of_the_role_is_asked_and_stored_by_turn_index():
    q = _schema().questions[0]
    assert [(k, label) for k, label, _ in q.targets(DATA)] == [
        ("2", "Assistant turn 3"), ("4", "Assistant turn 5")]
    assert validate_answers([q], {"helpful": {"by_position": ["5", "2"]}}, DATA) == {
        "helpful": {"turns": ["2", "4"], "by_turn": {"2": 5, "4": 2}}}
    user = _schema(for_each_turn="user").questions[0]
    assert [k for k, _, _ in user.targets(DATA)] == ["1", "3"]
    last = _schema(turn="last").questions[0]
    assert validate_answers([last], {"helpful": {"by_turn": {"4": 3}}}, DATA)["helpful"] == {
        "turns": ["4"], "by_turn": {"4": 3}}


@pytest.mark.parametrize("raw, path, message", [
    ({"by_position": ["5", "9"]}, "helpful.o1", "Choose one of"),
    ({"by_position": ["5"]}, "helpful.o1", "Assistant turn 5"),
    ({"by_position": ["5", "2", "1"]}, "helpful", "a turn not shown"),
    ({"by_turn": {"1": 3, "2": 3, "4": 3}}, "helpful", "unknown: 1"),
    ({"by_turn": {"2": 3, "4": 3}, "turns": ["4", "2"]}, "helpful.turns", "in order"),
])
def test_each_turn_is_validated_and_a_bad_one_is_refused_at_its_position(raw, path, message):
    with pytest.raises(AnswerInvalid) as refused:
        validate_answers(_schema(), {"helpful": raw}, DATA)
    assert message in refused.value.errors[path]


def test_a_conversation_without_the_role_is_refused():
    with pytest.raises(AnswerInvalid, match="no assistant turn"):
        validate_answers(_schema(), {"helpful": {"by_turn": {"2": 3}}}, {"messages": CHAT[:2]})


def test_a_judge_answers_by_turn_label():
    schema = _schema()
    q = schema.questions[0]
    assert list(q.json_schema(DATA)["properties"]) == ["Assistant turn 3", "Assistant turn 5"]
    assert "#### Assistant turn 5\n6, of course." in q.prompt_section(DATA)
    judged = judged_answers(schema, {"helpful": {"Assistant turn 3": 4,
                                                 "Assistant turn 5": 5}}, DATA)
    assert validate_answers(schema, judged, DATA)["helpful"]["by_turn"] == {"2": 4, "4": 5}


@pytest.mark.django_db
def test_the_page_asks_under_each_turn_and_csv_long_has_one_row_per_turn(
        client, owner, settings, tmp_path, celery_eager, django_capture_on_commit_callbacks):
    from campaigns.selectors.analysis import campaign_statistics
    from campaigns.services.exports import export_job_create
    from tests.exports.conftest import read_export

    settings.RATELIMIT_ENABLED = False
    settings.STORAGES = {**settings.STORAGES, "exports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "exports")}}}
    schema = {"display": [{"field": "messages", "label": "Conversation"}],
              "questions": [{"id": "helpful", "kind": "likert", "text": "Helpful?",
                             "points": POINTS, "for_each_turn": "assistant"}]}
    campaign = make_campaign(owner=owner, schema=schema, slug="chat")
    Item.objects.create(campaign=campaign, external_id="c1", slots_wanted=3, data=DATA,
                        system="bot-1")
    assignment = start(client, campaign, PROLIFIC)
    html = client.get(item_url(assignment)).content.decode()
    assert html.index("Assistant turn 3") < html.index('name="q-helpful.o0"') < html.index(
        "Assistant turn 5") < html.index('name="q-helpful.o1"')
    assert client.post(item_url(assignment), {"q-helpful.o0": "4", "q-helpful.o1": "9"}
                       ).status_code == 400
    assert not Annotation.objects.exists()
    response = client.post(item_url(assignment), {"q-helpful.o0": "4", "q-helpful.o1": "5"})
    assert response.status_code == 302
    assert Annotation.objects.get().answers == {
        "helpful": {"turns": ["2", "4"], "by_turn": {"2": 4, "4": 5}}}
    make_annotation(campaign, item="c1", platform_id="PID-2", answers={
        "helpful": {"turns": ["2", "4"], "by_turn": {"2": 4, "4": 3}}})
    with django_capture_on_commit_callbacks(execute=True):
        job = export_job_create(campaign=campaign, requested_by=owner, fmt="csv-long")
    rows = [(r["system"], r["part"], r["value"]) for r in
            csv.DictReader(io.StringIO(read_export(job))) if r["question"] == "helpful"]
    assert sorted(rows) == [("bot-1", "2", "4"), ("bot-1", "2", "4"), ("bot-1", "4", "3"),
                            ("bot-1", "4", "5")]
    stats = campaign_statistics(campaign=campaign, n_boot=0)
    score = next(r for r in stats["system_scores"] if r["question"] == "helpful")
    assert (score["system"], score["n"], score["mean"]) == ("bot-1", 4, 4.0)
    pooled = next(r for r in stats["agreement"] if r["question"] == "helpful")
    assert pooled["n_items"] == 2  # each turn its own unit
