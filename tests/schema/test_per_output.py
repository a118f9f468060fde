"""`for_each_output`: a question that rates one text, asked once per output of an item.

The wrapping lives in one place (campaigns/schema/per_output.py) and works for every kind that
rates one text; the page asks it under each output in the assignment's order, the answer is
stored keyed by system with that order, and exports, statistics and the dashboard read each
output's answer as that system's rating."""
import csv
import io
import random

import numpy as np
import pytest

from campaigns.models import Annotation, Item
from campaigns.schema import REGISTRY, parse_schema, validate_answers, validate_schema
from campaigns.schema.base import AnswerInvalid, BaseQuestion
from campaigns.schema.contract import CAPABILITIES, HOOKS, REQUIRED, Capability
from campaigns.schema.outputs import judged_answers, order_seed, shown_data
from campaigns.schema.per_output import ADDED, KEPT, PerOutput
from tests.exports.conftest import make_annotation
from tests.factories import kind_item_data, kind_question, make_campaign
from tests.views.conftest import PROLIFIC, item_url, start

POINTS = [{"value": v, "label": label} for v, label in ((1, "bad"), (2, "okay"), (3, "good"))]
SCHEMA = {"display": [{"field": "source", "label": "Document"}], "questions": [
    {"id": "faithful", "kind": "likert", "text": "Is the summary faithful?", "points": POINTS,
     "for_each_output": True},
    {"id": "bws", "kind": "bws", "text": "Best and worst summary?"}]}
DATA = {"source": "The council met on Monday.", "outputs": [
    {"system": "lead-3", "text": "The council met."},
    {"system": "pegasus", "text": "A meeting <b>happened</b>."},
    {"system": "t5", "text": "Monday: council."}]}
ONE_TEXT = sorted(name for name, cls in REGISTRY.items() if cls.rates_one_text)


def _schema(**settings):
    return parse_schema({**SCHEMA, **settings})


def _rate(schema):
    return schema.question("faithful")


def test_every_single_text_kind_and_no_other_may_be_asked_per_output():
    assert ONE_TEXT == ["choice", "flags", "likert", "rubric", "slider", "spans", "text"]
    for kind in REGISTRY:
        issues = validate_schema({"questions": [kind_question(kind, for_each_output=True)]})
        if kind in ONE_TEXT:
            assert issues == [], kind
        else:
            assert "rates one text" in issues[0].message, kind


def test_the_wrapper_answers_every_method_of_the_kind_contract_itself():
    """No contract method reaches a kind unwrapped (a kind's atoms of one text would be wrong
    for an answer keyed by system), save those that read nothing of an answer."""
    untouched = {"kind", "template", "example", "script", "supports", "measurement",
                 "source_field", "schema_with_value_renamed", "shown_widget", "record_shown",
                 "from_judge_parts", "preferences", "best_worst", "error_spans",
                 "span_labels", "weight", "rates_one_text"}
    names = {e.key for e in (*REQUIRED, *HOOKS)} | {
        n for spec in CAPABILITIES.values()
        for n in (*spec.methods, *spec.optional, *spec.attributes)}
    missing = sorted(n for n in names - untouched if n not in vars(PerOutput))
    assert missing == []
    assert "template" in vars(PerOutput)
    for kind in ONE_TEXT:
        q = parse_schema({"questions": [kind_question(kind, for_each_output=True)]}).questions[0]
        assert isinstance(q, PerOutput) and isinstance(q, REGISTRY[kind])
        assert q.capabilities == (REGISTRY[kind].capabilities & KEPT) | ADDED
        assert not isinstance(q.inner, PerOutput) and q.inner.for_each_output is False


@pytest.mark.parametrize("kind", ONE_TEXT)
def test_each_kinds_drawn_answers_validate_per_output_and_split_into_system_atoms(kind):
    # A spans question asked per output marks the output's text: its field is "output".
    settings = {"field": "output"} if kind == "spans" else {}
    q = parse_schema({"questions": [kind_question(kind, for_each_output=True, **settings)]}
                     ).questions[0]
    data = kind_item_data(kind)
    text = data.get("target", "Some output text.")
    item = {**data, "outputs": [{"system": "s1", "text": text},
                                {"system": "s2", "text": text + " More."}]}
    for seed in range(5):
        answer = q.example_answer(item, random.Random(seed))
        cleaned = validate_answers([q], {q.id: answer}, item)[q.id]
        assert cleaned["order"] == ["s1", "s2"] and set(cleaned["by_system"]) == {"s1", "s2"}
        assert {s for s, _, _ in q.output_atoms(cleaned)} == {"s1", "s2"}
        atoms = dict(q.atoms(cleaned))
        assert atoms["1.system"] == "s1" and atoms["2.system"] == "s2"
        if not q.inner.supports(Capability.SIZED_BY_ANSWERS):
            assert set(atoms) <= set(q.parts_for(2)), kind


def test_a_page_answer_by_position_is_stored_by_system_in_the_shown_order():
    q = _rate(_schema())
    raw = q.record_order({"by_position": ["3", "1", "2"]}, ["t5", "lead-3", "pegasus"])
    assert validate_answers([q], {"faithful": raw}, DATA) == {"faithful": {
        "order": ["t5", "lead-3", "pegasus"], "by_system": {"t5": 3, "lead-3": 1, "pegasus": 2}}}
    # A posted order is replaced by the server's.
    forged = q.record_order({"by_system": {"t5": 3}, "order": ["x"]}, ["t5", "lead-3", "pegasus"])
    assert forged["order"] == ["t5", "lead-3", "pegasus"]


@pytest.mark.parametrize("raw, path, message", [
    ({"by_position": ["3", "9", "2"]}, "faithful.o1", "Choose one of 1, 2, 3."),
    ({"by_position": ["3", None, "2"]}, "faithful.o1", "for Response B"),
    ({"by_position": ["3", "1", "2", "1"]}, "faithful", 'Expected an object'),
    ({"by_system": {"gpt": 1}}, "faithful", "unknown: gpt"),
    ({"by_system": {"t5": 1}, "order": ["t5", "t5", "x"]}, "faithful.order", "each of"),
    (3, "faithful", "Expected an object"),
])
def test_each_output_is_validated_and_a_bad_one_is_refused_at_its_position(raw, path, message):
    q = _rate(_schema())
    if "by_position" in raw if isinstance(raw, dict) else False:
        raw = q.record_order(raw, ["t5", "lead-3", "pegasus"])
    with pytest.raises(AnswerInvalid) as refused:
        validate_answers([q], {"faithful": raw}, DATA)
    assert message in refused.value.errors[path]


def test_an_optional_per_output_question_may_leave_outputs_unanswered():
    schema = parse_schema({"questions": [{**SCHEMA["questions"][0], "required": False}]})
    q = _rate(schema)
    raw = q.record_order({"by_position": [None, "2"]}, ["t5", "lead-3", "pegasus"])
    assert validate_answers(schema, {"faithful": raw}, DATA)["faithful"]["by_system"] == {
        "lead-3": 2}
    assert validate_answers(schema, {}, DATA) == {}


def test_a_judge_is_asked_per_response_label_and_its_order_is_the_prompts():
    schema = _schema()
    q = _rate(schema)
    json_schema = q.json_schema(DATA)
    assert list(json_schema["properties"]) == ["Response A", "Response B", "Response C"]
    assert "order" not in str(json_schema) and "lead-3" not in str(json_schema)
    section = q.prompt_section(DATA)
    assert section.index("Response A\nThe council met.") < section.index(
        "Response C\nMonday: council.")
    judged = judged_answers(schema, {"faithful": {"Response A": 1, "Response B": 3,
                                                  "Response C": 2},
                                     "bws": {"best": "B", "worst": "A", "order": ["x"]}}, DATA)
    cleaned = validate_answers(schema, judged, DATA)
    assert cleaned["faithful"] == {"order": ["lead-3", "pegasus", "t5"],
                                   "by_system": {"lead-3": 1, "pegasus": 3, "t5": 2}}
    assert cleaned["bws"]["order"] == ["lead-3", "pegasus", "t5"]
    with pytest.raises(AnswerInvalid):
        validate_answers(schema, judged_answers(schema, {"faithful": {"Response Z": 1},
                                                         "bws": {"best": "A", "worst": "B"}},
                                                DATA), DATA)


def test_shuffled_options_are_not_offered_per_output():
    issues = validate_schema({"questions": [kind_question("choice", shuffle_options=True,
                                                          for_each_output=True)]})
    assert "shuffle_options" in issues[0].message


def test_the_base_question_declares_the_setting_for_every_kind():
    assert "for_each_output" in BaseQuestion.model_fields
    assert Capability.JUDGES_OUTPUTS in ADDED


# --- the worker's page, the exports, the statistics and the dashboard ------------------------

@pytest.fixture
def per_output_campaign(owner, settings):
    settings.RATELIMIT_ENABLED = False
    campaign = make_campaign(owner=owner, schema=SCHEMA, slug="summaries")
    Item.objects.create(campaign=campaign, external_id="d1", slots_wanted=3, data=DATA)
    return campaign


@pytest.mark.django_db
def test_the_page_asks_under_each_output_in_the_shown_order_and_stores_by_system(
        client, per_output_campaign):
    assignment = start(client, per_output_campaign, PROLIFIC)
    item = Item.objects.get()
    shown = shown_data(DATA, order_seed(assignment.token, item.pk))["outputs"]
    html = client.get(item_url(assignment)).content.decode()
    assert html.count('data-kind="likert"') == 3 and 'data-kind="bws"' in html
    assert "A meeting &lt;b&gt;happened&lt;/b&gt;." in html  # escaped
    positions = [html.index(f'name="q-faithful.o{i}"') for i in range(3)]
    texts = [html.index(o["text"].replace("<", "&lt;").replace(">", "&gt;"), html.index(
        'data-kind="per-output"')) for o in shown]
    assert texts[0] < positions[0] < texts[1] < positions[1] < texts[2] < positions[2]
    assert "Is the summary faithful? (Response A)" in html
    response = client.post(item_url(assignment), {
        "q-faithful.o0": "3", "q-faithful.o1": "1", "q-faithful.o2": "2",
        "q-bws.best": "A", "q-bws.worst": "B"})
    assert response.status_code == 302, response.content.decode()[:2000]
    systems = [o["system"] for o in shown]
    answers = Annotation.objects.get().answers
    assert answers["faithful"] == {"order": systems, "by_system": dict(zip(
        systems, [3, 1, 2], strict=True))}
    assert answers["bws"]["order"] == systems


@pytest.mark.django_db
@pytest.mark.parametrize("post, error", [
    ({"q-faithful.o0": "3", "q-faithful.o1": "7", "q-faithful.o2": "2"}, "Choose one of 1, 2, 3."),
    ({"q-faithful.o0": "3", "q-faithful.o2": "2"}, "Please answer this question for Response B"),
    ({"q-faithful.o0": "3", "q-faithful.o1": "1", "q-faithful.o2": "2", "q-faithful.o3": "1"},
     "Expected an object"),
])
def test_a_tampered_or_incomplete_page_is_refused_and_nothing_stored(
        client, per_output_campaign, post, error):
    assignment = start(client, per_output_campaign, PROLIFIC)
    response = client.post(item_url(assignment), {**post, "q-bws.best": "A", "q-bws.worst": "B"})
    assert response.status_code == 400
    assert error in response.content.decode()
    assert not Annotation.objects.exists()


def _rated(campaign, workers=4, seed=0):
    """Workers rating every item's outputs: t5 high, lead-3 middling, pegasus low (noisy)."""
    rng = random.Random(seed)
    base = {"t5": 3, "lead-3": 2, "pegasus": 1}
    values = {}
    for n in range(6):
        item_data = {**DATA, "source": f"Document {n}."}
        for w in range(workers):
            order = ["t5", "lead-3", "pegasus"]
            rng.shuffle(order)
            ratings = {s: min(3, max(1, base[s] + rng.choice([0, 0, 0, 1, -1]))) for s in order}
            values.setdefault((f"d{n}", w), ratings)
            make_annotation(campaign, item=f"d{n}", system="", data=item_data,
                            platform_id=f"W{w}", answers={
                                "faithful": {"order": order, "by_system": ratings},
                                "bws": {"best": "A", "worst": "C", "order": order}})
    return values


@pytest.mark.django_db
def test_statistics_score_each_system_from_its_outputs_ratings_and_agree_per_system(owner):
    from campaigns.analysis.agreement import krippendorff_alpha
    from campaigns.selectors.analysis import campaign_statistics

    campaign = make_campaign(owner=owner, schema=SCHEMA)
    values = _rated(campaign)
    stats = campaign_statistics(campaign=campaign, n_boot=50)
    scores = {r["system"]: r for r in stats["system_scores"] if r["question"] == "faithful"}
    assert set(scores) == {"t5", "lead-3", "pegasus"}
    for system, row in scores.items():
        own = [r[system] for r in values.values()]
        assert row["n"] == len(own) == 24 and row["n_items"] == 6
        assert row["mean"] == pytest.approx(np.mean(own))
    # Agreement: each output of an item is its own unit (18 units, 4 raters), ordinal alpha.
    pooled = next(r for r in stats["agreement"] if r["question"] == "faithful"
                  and r["subset"] is None)
    units = [f"{item}/{s}" for (item, _w), r in values.items() for s in r]
    workers = [w for (_i, w), r in values.items() for _ in r]
    ratings = [v for r in values.values() for v in r.values()]
    expected = krippendorff_alpha(np.array(units), np.array(workers), np.array(ratings, float),
                                  level="ordinal", n_boot=0)
    assert pooled["n_items"] == 18 and pooled["alpha"] == pytest.approx(expected.alpha)
    per_system = {r["subset"]["system"]: r for r in stats["agreement"]
                  if r["question"] == "faithful" and r["subset"]}
    assert set(per_system) == {"t5", "lead-3", "pegasus"}
    assert all(r["n_items"] == 6 for r in per_system.values())


@pytest.mark.django_db
def test_independent_alpha_check_with_the_krippendorff_package(owner):
    krippendorff = pytest.importorskip("krippendorff")
    from campaigns.selectors.analysis import campaign_statistics

    campaign = make_campaign(owner=owner, schema=SCHEMA)
    values = _rated(campaign, seed=3)
    stats = campaign_statistics(campaign=campaign, n_boot=0)
    pooled = next(r for r in stats["agreement"] if r["question"] == "faithful"
                  and r["subset"] is None)
    units = sorted({f"{item}/{s}" for (item, _w), r in values.items() for s in r})
    matrix = np.full((4, len(units)), np.nan)
    for (item, w), r in values.items():
        for s, v in r.items():
            matrix[w, units.index(f"{item}/{s}")] = v
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
    assert pooled["alpha"] == pytest.approx(expected)


@pytest.mark.django_db
def test_csv_long_has_one_row_per_output_with_its_system_and_csv_has_positional_columns(
        owner, settings, tmp_path, celery_eager, django_capture_on_commit_callbacks):
    from campaigns.services.exports import export_job_create
    from tests.exports.conftest import read_export

    settings.STORAGES = {**settings.STORAGES, "exports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "exports")}}}
    campaign = make_campaign(owner=owner, schema=SCHEMA)
    make_annotation(campaign, item="d1", system="", data=DATA, answers={
        "faithful": {"order": ["t5", "lead-3", "pegasus"],
                     "by_system": {"t5": 3, "lead-3": 2, "pegasus": 1}},
        "bws": {"best": "A", "worst": "C", "order": ["t5", "lead-3", "pegasus"]}})
    with django_capture_on_commit_callbacks(execute=True):
        long_job = export_job_create(campaign=campaign, requested_by=owner, fmt="csv-long")
        wide_job = export_job_create(campaign=campaign, requested_by=owner, fmt="csv")
    rows = list(csv.DictReader(io.StringIO(read_export(long_job))))
    faithful = [(r["system"], r["part"], r["value"]) for r in rows if r["question"] == "faithful"]
    assert faithful == [("t5", "(whole)", "3"), ("lead-3", "(whole)", "2"),
                        ("pegasus", "(whole)", "1")]
    assert {r["system"] for r in rows if r["question"] == "bws"} == {""}
    wide = next(csv.DictReader(io.StringIO(read_export(wide_job))))
    assert [wide[f"faithful.{c}"] for c in ("1.system", "1", "2.system", "2", "3.system", "3")
            ] == ["t5", "3", "lead-3", "2", "pegasus", "1"]


@pytest.mark.django_db
def test_the_dashboard_charts_each_systems_ratings(owner):
    from campaigns.selectors.dashboard import score_distributions

    campaign = make_campaign(owner=owner, schema=SCHEMA)
    make_annotation(campaign, item="d1", system="", data=DATA, platform_id="W1", answers={
        "faithful": {"order": ["t5", "lead-3", "pegasus"],
                     "by_system": {"t5": 3, "lead-3": 2, "pegasus": 3}}})
    chart = next(c for c in score_distributions(campaign=campaign)
                 if c.title == "Is the summary faithful?")
    assert chart.series == {"lead-3": [0, 1, 0], "pegasus": [0, 0, 1], "t5": [0, 0, 1]}
