"""`shuffle_options` on choice and flags questions: a per-assignment order of the options, drawn
from a stored seed, shown on the page, stored in the answer and exported."""
import csv
import io
from collections import Counter

import pytest

from campaigns.models import Annotation, Item
from campaigns.schema import parse_schema, validate_answers, validate_schema
from campaigns.schema.base import AnswerInvalid
from campaigns.schema.outputs import order_seed, shuffled
from campaigns.selectors.dashboard import score_distributions
from tests.exports.conftest import make_annotation, read_export
from tests.factories import make_campaign
from tests.views.conftest import PROLIFIC, item_url, start

OPTIONS = [{"value": v, "label": f"Label {v}"} for v in ("red", "green", "blue", "amber")]
SCHEMA = {"display": [{"field": "text", "label": "Text"}],
          "questions": [{"id": "colour", "kind": "choice", "text": "Which colour?",
                         "options": OPTIONS, "shuffle_options": True}]}
VALUES = [o["value"] for o in OPTIONS]


def question(**settings):
    return parse_schema({"questions": [{"id": "colour", "kind": "choice", "text": "?",
                                        "options": OPTIONS, **settings}]}).questions[0]


def test_the_setting_is_a_boolean_off_by_default():
    assert validate_schema(SCHEMA) == []
    assert question().shuffle_options is False
    bad = {"questions": [{**SCHEMA["questions"][0], "shuffle_options": "maybe"}]}
    assert [i.path for i in validate_schema(bad)] == ["questions[0].shuffle_options"]


def test_without_shuffling_answers_stay_plain_option_values():
    q = question()
    assert q.validate_answer("red", None) == "red" and q.atoms("red") == [("", "red")]
    assert q.parts() == [""] and q.record_shown("red", "seed") == "red"
    assert q.sql_parts("a", [""]) == [("", "a")]  # the exports' fast path is kept


def test_the_order_is_reproducible_per_seed_and_differs_between_questions_and_seeds():
    q = question(shuffle_options=True)
    assert q.option_order("tok:1") == q.option_order("tok:1")
    assert sorted(q.option_order("tok:1")) == [0, 1, 2, 3]
    assert q.option_order("tok:1") == shuffled(4, "tok:1:colour")
    firsts = Counter(q.option_order(order_seed(f"t{n}", 3))[0] for n in range(400))
    assert set(firsts) == {0, 1, 2, 3} and min(firsts.values()) > 60  # roughly uniform


def test_a_shuffled_answer_stores_the_value_and_the_order_shown():
    q = question(shuffle_options=True)
    shown = q.record_shown("blue", "tok:9")
    assert shown == {"value": "blue", "order": [VALUES[i] for i in q.option_order("tok:9")]}
    assert validate_answers([q], {"colour": shown}) == {"colour": shown}
    # The API, a judge or a gold answer sends the plain value: no order was shown.
    assert validate_answers([q], {"colour": "blue"}) == {"colour": {"value": "blue"}}
    assert q.atoms(shown) == [("value", "blue"), ("order", "|".join(shown["order"]))]
    assert q.is_free_text("order") and not q.is_free_text("value")


@pytest.mark.parametrize(("raw", "path", "message"), [
    ({"value": "pink", "order": VALUES}, "colour", "Choose one of the options"),
    ({"value": "red", "order": ["red", "red", "blue", "amber"]}, "colour.order",
     "The order must list each option value once."),
    ({"value": "red", "shown": []}, "colour", 'object with the keys "value" and "order"'),
])
def test_a_tampered_answer_is_refused_with_its_path(raw, path, message):
    with pytest.raises(AnswerInvalid) as exc:
        validate_answers([question(shuffle_options=True)], {"colour": raw})
    assert message in exc.value.errors[path]


def test_renaming_an_option_renames_it_in_the_stored_order_too():
    q = question(shuffle_options=True)
    answer = {"value": "red", "order": ["blue", "red", "amber", "green"]}
    assert q.rename_value(answer, "red", "crimson") == {
        "value": "crimson", "order": ["blue", "crimson", "amber", "green"]}


def test_a_judges_json_schema_never_asks_for_the_order_the_server_records():
    import jsonschema

    q = question(shuffle_options=True)
    schema = q.json_schema(None)
    jsonschema.validate("red", schema)  # a judge sees the schema's order: the value alone
    assert "order" not in str(schema)


# --- the worker's page, the dashboard and the exports -----------------------------------------

@pytest.fixture
def shuffled_campaign(owner, settings):
    settings.RATELIMIT_ENABLED = False
    campaign = make_campaign(owner=owner, schema=SCHEMA, slug="colours")
    Item.objects.create(campaign=campaign, external_id="i1", slots_wanted=3,
                        data={"text": "A sky."})
    return campaign


@pytest.mark.django_db
def test_the_page_shows_the_assignments_order_and_the_answer_stores_it(client,
                                                                       shuffled_campaign):
    assignment = start(client, shuffled_campaign, PROLIFIC)
    item = Item.objects.get()
    q = parse_schema(SCHEMA).questions[0]
    order = [VALUES[i] for i in q.option_order(order_seed(assignment.token, item.pk))]
    html = client.get(item_url(assignment)).content.decode()
    positions = [html.index(f'value="{v}"') for v in order]
    assert positions == sorted(positions)  # shown in the assignment's order
    response = client.post(item_url(assignment), {"q-colour": "green"})
    assert response.status_code == 302
    assert Annotation.objects.get().answers == {"colour": {"value": "green", "order": order}}


@pytest.mark.django_db
def test_the_dashboard_counts_the_chosen_values(owner):
    campaign = make_campaign(owner=owner, schema=SCHEMA)
    for n, value in enumerate(["red", "red", "blue"]):
        make_annotation(campaign, item=f"i{n}", system="s", platform_id=f"W{n}",
                        answers={"colour": {"value": value, "order": VALUES}})
    chart = score_distributions(campaign=campaign)[0]
    assert chart.series == {"s": [2, 0, 1, 0]}


@pytest.mark.django_db
def test_the_export_carries_the_value_and_the_order_shown(owner, settings, tmp_path, celery_eager,
                                                          django_capture_on_commit_callbacks):
    from campaigns.services.exports import export_job_create

    settings.STORAGES = {**settings.STORAGES, "exports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "exports")}}}
    campaign = make_campaign(owner=owner, schema=SCHEMA)
    order = ["blue", "red", "amber", "green"]
    make_annotation(campaign, item="i1", system="s", answers={"colour": {
        "value": "red", "order": order}})
    with django_capture_on_commit_callbacks(execute=True):
        job = export_job_create(campaign=campaign, requested_by=owner, fmt="csv", options={})
    [row] = list(csv.DictReader(io.StringIO(read_export(job))))
    assert row["colour.value"] == "red"
    assert row["colour.order"] == "blue|red|amber|green"


@pytest.mark.django_db
def test_agreement_is_on_the_value_chosen_never_on_the_order_shown(owner):
    from campaigns.selectors.analysis import campaign_statistics

    campaign = make_campaign(owner=owner, schema=SCHEMA)
    for item, values in (("i1", "red red"), ("i2", "blue blue"), ("i3", "red blue")):
        for n, value in enumerate(values.split()):
            make_annotation(campaign, item=item, system="s", platform_id=f"W{n}", answers={
                "colour": {"value": value, "order": VALUES[n:] + VALUES[:n]}})
    stats = campaign_statistics(campaign=campaign, n_boot=20)
    rows = [r for r in stats["agreement"] if r["question"] == "colour"]
    assert [r["part"] for r in rows] == ["value"]
    assert rows[0]["level"] == "nominal"


# --- flags ------------------------------------------------------------------------------------

FLAGS = {"display": [{"field": "text", "label": "Text"}],
         "questions": [{"id": "issues", "kind": "flags", "text": "Any problems?",
                        "options": OPTIONS, "other": True, "shuffle_options": True}]}


def test_a_shuffled_flags_answer_stores_the_order_shown_and_exports_it():
    q = parse_schema(FLAGS).questions[0]
    assert q.shuffles_options() and q.option_order("s") == shuffled(4, "s:issues")
    shown = q.record_shown({"selected": ["blue", "red"], "other": ""}, "s")
    order = [VALUES[i] for i in q.option_order("s")]
    cleaned = validate_answers([q], {"issues": shown})["issues"]
    assert cleaned == {"selected": ["red", "blue"], "order": order}
    assert q.atoms(cleaned)[-1] == ("order", "|".join(order)) and q.parts()[-1] == "order"
    assert q.is_free_text("order") and q.sql_parts("a", q.parts()) is None
    with pytest.raises(AnswerInvalid) as exc:
        validate_answers([q], {"issues": {"selected": ["red"], "order": ["red"]}})
    assert exc.value.errors == {"issues.order": "The order must list each reason once."}


def test_without_shuffling_flags_refuse_an_order_and_keep_the_sql_path():
    q = parse_schema({"questions": [{**FLAGS["questions"][0], "shuffle_options": False}]}
                     ).questions[0]
    with pytest.raises(AnswerInvalid):
        validate_answers([q], {"issues": {"selected": ["red"], "order": VALUES}})
    assert q.sql_parts("a", q.parts()) is not None


@pytest.mark.django_db
def test_the_flags_page_shows_the_reasons_in_the_assignments_order(client, owner, settings):
    settings.RATELIMIT_ENABLED = False
    campaign = make_campaign(owner=owner, schema=FLAGS, slug="flags")
    item = Item.objects.create(campaign=campaign, external_id="i1", slots_wanted=3,
                               data={"text": "A sky."})
    assignment = start(client, campaign, PROLIFIC)
    q = parse_schema(FLAGS).questions[0]
    order = [VALUES[i] for i in q.option_order(order_seed(assignment.token, item.pk))]
    html = client.get(item_url(assignment)).content.decode()
    positions = [html.index(f'value="{v}"') for v in order]
    assert positions == sorted(positions)
    client.post(item_url(assignment), {"q-issues": ["amber"], "q-issues__other": ""})
    assert Annotation.objects.get().answers == {"issues": {"selected": ["amber"],
                                                           "order": order}}
