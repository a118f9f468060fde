"""The provenance the item page sends: parsed against the page's own free-text inputs,
bounded, and refused whole (a specific message, nothing else read) when malformed."""
import json
import re

import pytest
from django.http import QueryDict
from django.template.loader import render_to_string

from campaigns.models import Campaign, Item
from campaigns.pages.answer_provenance import LIMITS, provenance_from_post
from campaigns.pages.item import item_context
from campaigns.schema import AnswerInvalid, parse_schema
from tests.factories import PAIRWISE_SCHEMA, SUMMARY_SCHEMA, TRANSLATION_SCHEMA

SCHEMA = parse_schema({
    "display": [{"field": "prompt"}],
    "questions": [
        {"id": "opinion", "kind": "text", "text": "Why?"},
        {"id": "score", "kind": "likert", "text": "Score",
         "points": [{"value": 1, "label": "1"}, {"value": 2, "label": "2"}]},
        *SUMMARY_SCHEMA["questions"][:1],
        *PAIRWISE_SCHEMA["questions"],
        *TRANSLATION_SCHEMA["questions"][1:],
    ],
})


def post(provenance, **fields) -> QueryDict:
    data = QueryDict(mutable=True)
    data.update(fields)
    if provenance is not None:
        data["provenance"] = provenance if isinstance(provenance, str) else json.dumps(provenance)
    return data


COUNTS = {"typed": 12, "pasted": 30, "pastes": 1, "ms": 4000}


def test_every_free_text_input_is_recorded_under_its_answer_path():
    names = {"q-opinion": "opinion", "q-lines.2.rewrite": "lines.2.rewrite",
             "q-preference.reason": "preference.reason", "q-source_issues__other":
             "source_issues.other"}
    got = provenance_from_post(SCHEMA, post({n: COUNTS for n in names},
                                            **{n: "  some text here  " for n in names}))
    assert got == {key: {**COUNTS, "chars": len("some text here")} for key in names.values()}


def test_no_field_is_no_record_and_an_input_left_empty_is_dropped():
    assert provenance_from_post(SCHEMA, post(None)) == {}
    assert provenance_from_post(SCHEMA, post({"q-opinion": COUNTS}, **{"q-opinion": "  "})) == {}


def test_counts_are_clamped_and_missing_ones_are_zero():
    got = provenance_from_post(SCHEMA, post({"q-opinion": {"typed": 10**12, "ms": 10**15}},
                                            **{"q-opinion": "x" * 30}))
    assert got["opinion"] == {"typed": LIMITS["typed"], "pasted": 0, "pastes": 0,
                              "ms": LIMITS["ms"], "chars": 30}


@pytest.mark.parametrize("raw", [
    "not json", "[1, 2]", json.dumps({"q-opinion": [1]}),
    json.dumps({"q-score": COUNTS}),  # a likert is no free-text input
    json.dumps({"q-nowhere": COUNTS}), json.dumps({"opinion": COUNTS}),
    json.dumps({"q-lines.2.label": COUNTS}), json.dumps({"q-lines.0.rewrite": COUNTS}),
    json.dumps({"q-opinion": {"typed": -1}}), json.dumps({"q-opinion": {"typed": 1.5}}),
    json.dumps({"q-opinion": {"typed": True}}), json.dumps({"q-opinion": {"keys": 3}}),
    json.dumps({"q-opinion": {"typed": "3"}}), "{" + " " * 70_000 + "}",
])
def test_a_malformed_record_is_refused_with_its_own_message(raw):
    with pytest.raises(AnswerInvalid) as caught:
        provenance_from_post(SCHEMA, post(raw, **{"q-opinion": "text", "q-score": "1"}))
    assert list(caught.value.errors) == ["provenance"]
    assert "record of your typing" in str(caught.value.errors["provenance"])


@pytest.mark.django_db
def test_the_pages_text_inputs_are_exactly_the_inputs_the_kinds_call_free_text(owner):
    """Every textarea and text input an item page renders is accepted by its kind's
    free_text_input; no other control of the page is (the script records the former)."""
    campaign = Campaign(owner=owner, slug="p", name="p", schema={
        "display": [{"field": "prompt"}], "questions": SCHEMA.model_dump(
            mode="json", exclude_defaults=True)["questions"]})
    item = Item(campaign=campaign, external_id="i", data={
        "prompt": "P", "summary": ["One.", "Two."],
        "outputs": [{"system": "a", "text": "A"}, {"system": "b", "text": "B"}]})
    html = render_to_string("campaigns/item.html", item_context(
        campaign=campaign, item=item, position=1, total=1))
    controls = re.findall(r'<(textarea|input)([^>]*)>', html)
    texts, others = set(), set()
    for tag, attrs in controls:
        name = re.search(r'name="([^"]+)"', attrs)
        kind = re.search(r'type="([^"]+)"', attrs)
        if not name or not name.group(1).startswith("q-"):
            continue
        is_text = tag == "textarea" or (kind and kind.group(1) == "text")
        (texts if is_text else others).add(name.group(1))
    assert texts == {"q-opinion", "q-lines.1.rewrite", "q-lines.2.rewrite",
                     "q-preference.reason", "q-source_issues__other"}
    data = {name: "x" for name in texts | others}
    assert set(provenance_from_post(SCHEMA, post({n: COUNTS for n in texts}, **data))) == {
        "opinion", "lines.1.rewrite", "lines.2.rewrite", "preference.reason",
        "source_issues.other"}
    for name in others:
        with pytest.raises(AnswerInvalid):
            provenance_from_post(SCHEMA, post({name: COUNTS}, **data))
