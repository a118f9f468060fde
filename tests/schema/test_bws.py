"""The `bws` (best-worst) kind: settings, answers, the order shown, the page and statistics."""
import random

import pytest

from campaigns.models import Annotation, Item
from campaigns.schema import parse_schema, validate_answers, validate_schema
from campaigns.schema.base import AnswerInvalid
from campaigns.schema.outputs import order_seed, shuffled
from campaigns.selectors.dashboard import campaign_progress, score_distributions
from tests.exports.conftest import make_annotation
from tests.factories import BWS_SCHEMA, make_campaign
from tests.views.conftest import PROLIFIC, item_url, start

DATA = {"prompt": "Say hi.", "outputs": [{"system": s, "text": f"Hi from {s}."}
                                         for s in ("p", "q", "r", "s")]}


def question():
    return parse_schema(BWS_SCHEMA).questions[0]


def test_settings_are_checked_with_their_paths():
    assert validate_schema(BWS_SCHEMA) == []
    bad = {"questions": [{"id": "bw", "kind": "bws", "text": "?", "best_label": ""}]}
    assert "at least 1 character" in {i.path: i.message for i in validate_schema(bad)}[
        "questions[0].best_label"]


def test_a_valid_answer_keeps_the_order_and_names_the_systems():
    schema = parse_schema(BWS_SCHEMA)
    order = ["r", "p", "s", "q"]
    cleaned = validate_answers(schema, {"bestworst": {"best": "C", "worst": "A",
                                                      "order": order}}, DATA)["bestworst"]
    assert cleaned == {"best": "C", "worst": "A", "order": order}
    atoms = dict(question().atoms(cleaned))
    assert (atoms["best_system"], atoms["worst_system"]) == ("s", "r")
    assert [atoms[p] for p in "ABCDEF"] == [*order, None, None]
    assert question().best_worst(cleaned) == (order, "s", "r")


@pytest.mark.parametrize(("answer", "path", "message"), [
    ({"best": "B", "worst": "B"}, "bestworst.worst", "The worst one cannot also be the best one."),
    ({"best": "E", "worst": "A"}, "bestworst.best", "Choose the best one: A, B, C, D."),
    ({"best": "A"}, "bestworst.worst", "Choose the worst one: A, B, C, D."),
    ({"best": "A", "worst": "B", "order": ["p", "q", "r", "x"]}, "bestworst.order",
     "The order must name the item's systems."),
    ({"best": "A", "worst": "B", "why": "x"}, "bestworst", 'Expected an object with the keys'),
])
def test_a_bad_answer_is_refused_naming_the_part(answer, path, message):
    with pytest.raises(AnswerInvalid) as exc:
        validate_answers(parse_schema(BWS_SCHEMA), {"bestworst": answer}, DATA)
    assert exc.value.errors[path].startswith(message)


def test_an_item_needs_three_to_six_outputs():
    two = {"outputs": DATA["outputs"][:2]}
    assert question().prepare_item(two) == {
        "outputs": "a best-worst question needs 3 to 6 outputs (2 given)"}
    assert question().prepare_item(DATA) == {}


def test_example_answers_meet_the_json_schema():
    import jsonschema

    q, rng = question(), random.Random(4)
    for _ in range(30):
        answer = q.example_answer(DATA, rng)
        assert answer["best"] != answer["worst"]
        jsonschema.validate(answer, q.json_schema(DATA))
        assert "order" in q.validate_answer(answer, DATA)  # the server's, never the judge's
    assert "order" not in q.json_schema(DATA)["properties"]
    assert '"best": "A" | "B" | "C" | "D"' in q.prompt_answer(DATA)
    assert "Response D:\nHi from s." in q.prompt_section(DATA)


@pytest.fixture
def bws_campaign(owner, settings):
    settings.RATELIMIT_ENABLED = False
    campaign = make_campaign(owner=owner, schema=BWS_SCHEMA, slug="bws")
    Item.objects.create(campaign=campaign, external_id="q1", slots_wanted=3, data=DATA)
    return campaign


@pytest.mark.django_db
def test_the_page_shows_every_output_and_saves_the_order_shown(client, bws_campaign):
    assignment = start(client, bws_campaign, PROLIFIC)
    item = Item.objects.get()
    order = [DATA["outputs"][i]["system"]
             for i in shuffled(4, order_seed(assignment.token, item.pk))]
    html = client.get(item_url(assignment)).content.decode()
    assert 'data-kind="bws"' in html and "/static/campaigns/bws.js" in html
    positions = [html.index(f"Hi from {s}.") for s in order]
    assert positions == sorted(positions)
    response = client.post(item_url(assignment), {"q-bestworst.best": "B",
                                                  "q-bestworst.worst": "D"})
    assert response.status_code == 302
    assert Annotation.objects.get().answers == {"bestworst": {
        "best": "B", "worst": "D", "order": order}}


@pytest.mark.django_db
def test_the_same_output_as_best_and_worst_is_refused_and_nothing_stored(client, bws_campaign):
    assignment = start(client, bws_campaign, PROLIFIC)
    response = client.post(item_url(assignment), {"q-bestworst.best": "A",
                                                  "q-bestworst.worst": "A"})
    assert response.status_code == 400
    assert "The worst one cannot also be the best one." in response.content.decode()
    assert not Annotation.objects.exists()


@pytest.mark.django_db
def test_progress_dashboard_and_statistics_count_per_system(owner):
    from campaigns.selectors.analysis import campaign_statistics

    campaign = make_campaign(owner=owner, schema=BWS_SCHEMA)
    judged = [("A", "D", ["p", "q", "r", "s"]), ("B", "A", ["r", "p", "s", "q"]),
              ("A", "C", ["p", "s", "q", "r"])]
    for n, (best, worst, order) in enumerate(judged):
        make_annotation(campaign, item=f"i{n}", system="", data=DATA, platform_id=f"W{n}",
                        answers={"bestworst": {"best": best, "worst": worst, "order": order}})
    _, per_system = campaign_progress(campaign=campaign)
    assert [(p.system, p.items) for p in per_system] == [("p", 3), ("q", 3), ("r", 3),
                                                         ("s", 3)]
    chart = score_distributions(campaign=campaign)[0]
    assert chart.series["p"] == [3, 0, 0] and chart.series["r"] == [0, 1, 2]
    [table] = campaign_statistics(campaign=campaign, n_boot=50)["best_worst"]
    scores = {row["system"]: row["score"] for row in table["scores"]}
    # p best 3 of 3; q, r and s worst once each (items 2, 1, 0); every system shown 3 times.
    assert table["answers"] == 3
    assert scores == pytest.approx({"p": 1.0, "q": -1 / 3, "r": -1 / 3, "s": -1 / 3})
