"""The `pairwise` kind: settings, answers, the order shown, the page, progress and exports."""
import json
import random
from collections import Counter

import numpy as np
import pytest

from campaigns.importing.items import parse_items
from campaigns.importing.records import ImportRejected
from campaigns.models import Annotation, Item
from campaigns.schema import parse_schema, validate_answers, validate_schema
from campaigns.schema.base import AnswerInvalid
from campaigns.schema.outputs import order_seed, shown_data, shuffled
from campaigns.selectors.dashboard import campaign_progress, score_distributions
from tests.exports.conftest import make_annotation, read_export
from tests.factories import make_campaign
from tests.views.conftest import PROLIFIC, item_url, start

SCHEMA = {"display": [{"field": "prompt", "label": "Prompt"}],
          "questions": [{"id": "pref", "kind": "pairwise", "text": "Which answer is better?",
                         "strength": True}]}
DATA = {"prompt": "Say hi.", "outputs": [{"system": "gpt-x", "text": "Hi there."},
                                         {"system": "llama-y", "text": "Hello <b>you</b>."}]}


def question(**settings):
    return parse_schema({"questions": [{"id": "pref", "kind": "pairwise", "text": "Better?",
                                        **settings}]}).questions[0]


def test_settings_are_checked_with_their_paths():
    assert validate_schema(SCHEMA) == []
    bad = {"questions": [{"id": "pref", "kind": "pairwise", "text": "?", "label_a": "",
                          "colour": "red"}]}
    found = {i.path: i.message for i in validate_schema(bad)}
    assert found["questions[0].colour"] == "unknown setting"
    assert "at least 1 character" in found["questions[0].label_a"]


def test_a_valid_answer_is_cleaned_and_keeps_the_order_shown():
    schema = parse_schema(SCHEMA)
    answer = {"choice": "B", "strength": "clearly", "reason": "  warmer ",
              "order": ["llama-y", "gpt-x"]}
    assert validate_answers(schema, {"pref": answer}, DATA) == {"pref": {
        "choice": "B", "order": ["llama-y", "gpt-x"], "strength": "clearly", "reason": "warmer"}}
    # Without an order (API, judges), the stored order is the one shown.
    assert validate_answers(schema, {"pref": "tie"}, DATA)["pref"] == {
        "choice": "tie", "order": ["gpt-x", "llama-y"]}


@pytest.mark.parametrize(("answer", "path", "message"), [
    ({"choice": "C"}, "pref.choice", "Choose one of: A, B, tie."),
    ({"choice": "tie", "strength": "clearly"}, "pref.strength", "A tie has no strength."),
    ({"choice": "A", "strength": "hugely"}, "pref.strength", "Choose one of: slightly, clearly."),
    ({"choice": "A", "order": ["gpt-x", "other"]}, "pref.order",
     "The order must name the item's two systems."),
    ({"choice": "A", "reason": "x" * 2001}, "pref.reason", "At most 2000 characters, please."),
    ({"choice": "A", "winner": "gpt-x"}, "pref", "Expected an object with the keys"),
])
def test_a_bad_answer_is_refused_naming_the_part(answer, path, message):
    with pytest.raises(AnswerInvalid) as exc:
        validate_answers(parse_schema(SCHEMA), {"pref": answer}, DATA)
    assert exc.value.errors[path].startswith(message)


def test_ties_and_reasons_can_be_switched_off():
    q = question(tie=False, reason=False)
    with pytest.raises(AnswerInvalid):
        q.validate_answer({"choice": "tie"}, DATA)
    with pytest.raises(AnswerInvalid):
        q.validate_answer({"choice": "A", "reason": "because"}, DATA)
    assert q.parts() == ["choice", "A", "B", "winner"]


def test_an_item_needs_exactly_two_outputs():
    q = question()
    three = {"outputs": [*DATA["outputs"], {"system": "z", "text": "Yo."}]}
    assert q.prepare_item(three) == {"outputs": "a pairwise question needs exactly 2 outputs "
                                                 "(3 given)"}
    with pytest.raises(AnswerInvalid, match="exactly two outputs"):
        q.validate_answer({"choice": "A"}, three)


def test_atoms_name_the_system_in_each_position_and_the_winner():
    q = question(strength=True)
    atoms = dict(q.atoms({"choice": "B", "strength": "slightly", "order": ["llama-y", "gpt-x"]}))
    assert atoms == {"choice": "B", "strength": "slightly", "reason": None, "A": "llama-y",
                     "B": "gpt-x", "winner": "gpt-x"}
    assert dict(q.atoms({"choice": "tie", "order": ["a", "b"]}))["winner"] == "tie"
    assert [p for p in q.parts() if not q.is_free_text(p)] == ["strength", "winner"]


def test_judges_get_a_prompt_section_and_a_json_schema_the_answers_meet():
    import jsonschema

    q = question(strength=True)
    section = q.prompt_section(DATA)
    assert "Response A:\nHi there." in section and "Response B:\nHello <b>you</b>." in section
    assert '"slightly" or "clearly"' in section
    schema = q.json_schema(DATA)
    rng = random.Random(1)
    for _ in range(20):
        answer = q.example_answer(DATA, rng)
        jsonschema.validate(answer, schema)
        stored = q.validate_answer(answer, DATA)
        jsonschema.validate({k: v for k, v in stored.items() if k != "order"}, schema)
    assert "order" not in schema["properties"]  # the server's, never the judge's
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"choice": "A", "extra": 1}, schema)


def test_the_order_is_a_reproducible_shuffle_per_seed():
    assert shuffled(5, "tok:1") == shuffled(5, "tok:1")
    assert sorted(shuffled(5, "tok:1")) == [0, 1, 2, 3, 4]
    orders = Counter(tuple(shuffled(2, order_seed(f"t{n}", 7))) for n in range(400))
    assert set(orders) == {(0, 1), (1, 0)} and min(orders.values()) > 150
    assert shown_data(DATA, None) == DATA


# --- imports ---------------------------------------------------------------------------------

def test_jsonl_and_csv_items_carry_several_outputs():
    schema = parse_schema(SCHEMA)
    jsonl = json.dumps({"id": "q1", **DATA}).encode()
    [item] = parse_items(jsonl, "jsonl", schema)
    assert item.data["outputs"] == DATA["outputs"] and item.system == ""
    csv = b'id,prompt,output:gpt-x,output:llama-y\nq1,Say hi.,Hi there.,"Hello, you."\n'
    [item] = parse_items(csv, "csv", schema)
    assert item.data == {"prompt": "Say hi.", "outputs": [
        {"system": "gpt-x", "text": "Hi there."}, {"system": "llama-y", "text": "Hello, you."}]}


@pytest.mark.parametrize(("outputs", "message"), [
    ([{"system": "a", "text": "x"}], "a pairwise question needs exactly 2 outputs (1 given)"),
    ([{"system": "a", "text": "x"}, {"system": "a", "text": "y"}],
     "systems must be distinct per item; repeated: a"),
    ([{"system": "a", "text": "x"}, {"system": "b"}],
     'output 2: expected exactly the keys "system" and "text" (or "system" and "messages")'),
    ("a|b", 'expected a list of {"system": ..., "text": ...} objects'),
])
def test_bad_outputs_are_refused_by_row_and_field(outputs, message):
    line = json.dumps({"id": "q1", "prompt": "p", "outputs": outputs}).encode()
    with pytest.raises(ImportRejected) as exc:
        parse_items(line, "jsonl", parse_schema(SCHEMA))
    assert [(e.field, e.message) for e in exc.value.errors] == [("outputs", message)]


# --- the worker's page, progress, dashboard and exports ----------------------------------------

@pytest.fixture
def pair_campaign(owner, settings):
    settings.RATELIMIT_ENABLED = False
    campaign = make_campaign(owner=owner, schema=SCHEMA, slug="pair")
    Item.objects.create(campaign=campaign, external_id="q1", slots_wanted=3, data=DATA)
    return campaign


@pytest.mark.django_db
def test_the_page_shows_both_outputs_in_the_assignments_order_and_stores_it(client,
                                                                            pair_campaign):
    assignment = start(client, pair_campaign, PROLIFIC)
    item = Item.objects.get()
    order = [DATA["outputs"][i]["system"]
             for i in shuffled(2, order_seed(assignment.token, item.pk))]
    html = client.get(item_url(assignment)).content.decode()
    assert 'data-kind="pairwise"' in html and "/static/campaigns/pairwise.js" in html
    assert "Hello &lt;b&gt;you&lt;/b&gt;." in html  # escaped
    first, second = ("Hi there.", "Hello &lt;b&gt;you&lt;/b&gt;.")[::1 if order[0] == "gpt-x"
                                                                   else -1]
    assert html.index(first) < html.index(second)
    # A tampered order is replaced by the one the server showed.
    response = client.post(item_url(assignment), {
        "q-pref.choice": "A", "q-pref.strength": "clearly", "q-pref.order": "x"})
    assert response.status_code == 302
    assert Annotation.objects.get().answers == {
        "pref": {"choice": "A", "strength": "clearly", "order": order}}


@pytest.mark.django_db
def test_a_tampered_choice_is_refused_and_nothing_stored(client, pair_campaign):
    assignment = start(client, pair_campaign, PROLIFIC)
    response = client.post(item_url(assignment), {"q-pref.choice": "both"})
    assert response.status_code == 400
    assert "Choose one of: A, B, tie." in response.content.decode()
    assert not Annotation.objects.exists()


@pytest.mark.django_db
def test_progress_counts_an_item_for_each_of_its_systems(owner):
    campaign = make_campaign(owner=owner, schema=SCHEMA)
    three = [{"system": s, "text": "t"} for s in ("a", "b")]
    Item.objects.create(campaign=campaign, external_id="q1", slots_wanted=3, data={
        "prompt": "p", "outputs": three}, annotations_done=1, slots_taken=2)
    Item.objects.create(campaign=campaign, external_id="q2", slots_wanted=3, data={
        "prompt": "p", "outputs": [three[1], {"system": "c", "text": "t"}]})
    Item.objects.create(campaign=campaign, external_id="q3", slots_wanted=2, system="c",
                        data={"prompt": "p"}, annotations_done=2, slots_taken=2)
    overall, per_system = campaign_progress(campaign=campaign)
    got = {p.system: (p.items, p.wanted, p.done, p.in_progress, p.remaining) for p in per_system}
    assert got == {"a": (1, 3, 1, 1, 1), "b": (2, 6, 1, 1, 4), "c": (2, 5, 2, 0, 3)}
    assert (overall.items, overall.wanted, overall.done, overall.remaining) == (3, 8, 3, 4)


@pytest.mark.django_db
def test_the_dashboard_counts_wins_ties_and_losses_per_system(owner):
    campaign = make_campaign(owner=owner, schema=SCHEMA)
    for n, (choice, order) in enumerate([("A", ["a", "b"]), ("B", ["a", "b"]),
                                         ("tie", ["b", "a"]), ("A", ["b", "a"])]):
        make_annotation(campaign, item=f"i{n}", system="", platform_id=f"W{n}",
                        answers={"pref": {"choice": choice, "order": order}})
    chart = score_distributions(campaign=campaign)[0]
    assert chart.labels == ["Won", "Tied", "Lost"]
    assert chart.series == {"a": [1, 1, 2], "b": [2, 1, 1]}


@pytest.mark.django_db
def test_the_export_says_which_system_was_shown_where(owner, settings, tmp_path, celery_eager,
                                                      django_capture_on_commit_callbacks):
    from campaigns.services.exports import export_job_create

    settings.STORAGES = {**settings.STORAGES, "exports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "exports")}}}
    campaign = make_campaign(owner=owner, schema=SCHEMA)
    make_annotation(campaign, item="i1", system="", data=DATA, answers={"pref": {
        "choice": "A", "strength": "slightly", "order": ["llama-y", "gpt-x"]}})
    with django_capture_on_commit_callbacks(execute=True):
        job = export_job_create(campaign=campaign, requested_by=owner, fmt="csv", options={})
    lines = read_export(job).splitlines()
    header = lines[0].split(",")
    row = dict(zip(header, lines[1].split(","), strict=True))
    assert {k: row[k] for k in ("pref.choice", "pref.strength", "pref.A", "pref.B",
                                "pref.winner")} == {
        "pref.choice": "A", "pref.strength": "slightly", "pref.A": "llama-y",
        "pref.B": "gpt-x", "pref.winner": "llama-y"}


@pytest.mark.django_db
def test_the_statistics_carry_the_preference_tables_from_the_stored_answers(owner):
    from campaigns.selectors.analysis import campaign_statistics

    campaign = make_campaign(owner=owner, schema=SCHEMA)
    # x beats y as A and as B, and y wins once as A: 3 of 4 decided for x (in item order).
    judged = [("A", ["x", "y"]), ("B", ["y", "x"]), ("A", ["y", "x"]), ("tie", ["x", "y"]),
              ("A", ["x", "y"])]
    for n, (choice, order) in enumerate(judged):
        make_annotation(campaign, item=f"i{n}", system="", platform_id=f"W{n}",
                        answers={"pref": {"choice": choice, "order": order}})
    make_annotation(campaign, item="gold", system="", control="gold", platform_id="W9",
                    answers={"pref": {"choice": "B", "order": ["x", "y"]}})
    [table] = campaign_statistics(campaign=campaign, n_boot=50)["pairwise_preference"]
    assert table["question"] == "pref" and table["judgments"] == 5
    assert table["pairs"] == [{"system_a": "x", "system_b": "y", "wins_a": 3, "ties": 1,
                               "wins_b": 1, "n": 5, "win_rate_a": 0.7}]
    strengths = {row["system"]: row["strength"] for row in table["bradley_terry"]}
    assert strengths["x"] == pytest.approx(-strengths["y"]) == pytest.approx(
        np.log(3.5 / 1.5) / 2)
    bias = table["position_bias"]
    assert (bias["first_wins"], bias["second_wins"], bias["ties"]) == (3, 1, 1)


@pytest.mark.django_db
def test_ties_follow_the_questions_tie_model_unless_the_call_names_one(owner):
    from campaigns.selectors.analysis import campaign_statistics

    schema = {**SCHEMA, "questions": [{**SCHEMA["questions"][0], "tie_model": "davidson"}]}
    campaign = make_campaign(owner=owner, schema=schema)
    # x wins 3, y wins 1, 2 ties: Davidson gives +-log(3)/2 and nu = 2 / sqrt(3).
    judged = [("A", ["x", "y"]), ("B", ["y", "x"]), ("A", ["x", "y"]), ("A", ["y", "x"]),
              ("tie", ["x", "y"]), ("tie", ["y", "x"])]
    for n, (choice, order) in enumerate(judged):
        make_annotation(campaign, item=f"i{n}", system="", platform_id=f"W{n}",
                        answers={"pref": {"choice": choice, "order": order}})
    [table] = campaign_statistics(campaign=campaign, n_boot=0)["pairwise_preference"]
    assert table["ties"] == "davidson"
    assert table["tie_parameter"] == pytest.approx(2 / np.sqrt(3))
    assert table["bradley_terry"][0]["strength"] == pytest.approx(np.log(3) / 2)
    [split] = campaign_statistics(campaign=campaign, n_boot=0,
                                  ties="split")["pairwise_preference"]
    assert split["ties"] == "split" and split["tie_parameter"] is None
    assert split["bradley_terry"][0]["strength"] == pytest.approx(np.log(2) / 2)
    with pytest.raises(ValueError, match="tie model"):
        campaign_statistics(campaign=campaign, ties="bogus")


def _nominal_alpha(units):
    """Krippendorff's alpha for nominal data from its coincidence matrix (Krippendorff 2004,
    ch. 11), written out here apart from the package the product uses."""
    coincidences = Counter()
    for values in units:
        if len(values) < 2:
            continue
        for i, c in enumerate(values):
            for j, k in enumerate(values):
                if i != j:
                    coincidences[c, k] += 1 / (len(values) - 1)
    totals = Counter()
    for (c, _), o in coincidences.items():
        totals[c] += o
    n = sum(totals.values())
    observed = sum(o for (c, k), o in coincidences.items() if c != k)
    expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k) / (n - 1)
    return 1 - observed / expected


@pytest.mark.django_db
def test_agreement_on_a_pair_is_nominal_alpha_on_the_system_preferred(owner):
    from campaigns.selectors.analysis import campaign_statistics

    campaign = make_campaign(owner=owner, schema=SCHEMA)
    # Workers saw the pair in different orders: agreement is on the system they preferred,
    # not on the letter they clicked.
    answers = {"i1": [("A", ["x", "y"]), ("B", ["y", "x"]), ("A", ["x", "y"])],
               "i2": [("A", ["x", "y"]), ("A", ["y", "x"])],
               "i3": [("B", ["x", "y"]), ("tie", ["y", "x"]), ("A", ["y", "x"])],
               "i4": [("tie", ["x", "y"])]}
    winners = {}
    for item, judged in answers.items():
        for n, (choice, order) in enumerate(judged):
            make_annotation(campaign, item=item, system="", platform_id=f"W{n}",
                            answers={"pref": {"choice": choice, "order": order}})
            winners.setdefault(item, []).append(
                {"A": order[0], "B": order[1], "tie": "tie"}[choice])
    rows = [r for r in campaign_statistics(campaign=campaign, n_boot=0)["agreement"]
            if r["question"] == "pref" and r["subset"] is None]
    assert [(r["part"], r["level"]) for r in rows] == [("winner", "nominal")]
    assert rows[0]["n_items"] == 3
    assert rows[0]["alpha"] == pytest.approx(_nominal_alpha(winners.values()))
