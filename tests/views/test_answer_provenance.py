"""Saving an item page with the free-text answers' provenance: stored with the answer, a
malformed record refused with its message in the page's language and nothing stored, and a
repeat save adding to the records it brings and keeping the others."""
import json
import re

import pytest
from django.test import Client

from campaigns.models import Annotation
from tests.factories import make_campaign, make_items
from tests.views.conftest import item_url, start

pytestmark = pytest.mark.django_db

TYPED = {"typed": 40, "pasted": 0, "pastes": 0, "ms": 9000}


def _form(client, assignment, position=1) -> dict:
    page = client.get(item_url(assignment, position)).content.decode()
    key = re.search(r'name="form_key" value="([^"]+)"', page).group(1)
    assert 'name="provenance" value=""' in page and "campaigns/provenance.js" in page
    return {"form_key": key, "q-coherence": "4", "q-sentiment": "2"}


def test_the_record_is_stored_with_the_answer_and_a_repeat_adds_to_what_it_brings(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=2)
    make_items(campaign, 2)
    client = Client()
    assignment = start(client, campaign)
    text = "A fine continuation of the prompt."
    response = client.post(item_url(assignment), {
        **_form(client, assignment), "q-feedback": text,
        "provenance": json.dumps({"q-feedback": TYPED})})
    assert response.status_code == 200
    annotation = Annotation.objects.get()
    assert annotation.provenance == {"feedback": {**TYPED, "chars": len(text)}}

    # Back to the item, no text touched: the record stays; then a paste adds to it.
    client.post(item_url(assignment), {**_form(client, assignment), "q-feedback": text,
                                       "provenance": "{}"})
    annotation.refresh_from_db()
    assert annotation.provenance == {"feedback": {**TYPED, "chars": len(text)}}
    longer = text + " Pasted line."
    pasted = {"typed": 0, "pasted": 13, "pastes": 1, "ms": 800}
    client.post(item_url(assignment), {**_form(client, assignment), "q-feedback": longer,
                                       "provenance": json.dumps({"q-feedback": pasted})})
    annotation.refresh_from_db()
    assert annotation.provenance == {"feedback": {
        "typed": 40, "pasted": 13, "pastes": 1, "ms": 9800, "chars": len(longer)}}


def test_a_page_without_the_script_saves_with_no_record(owner):
    campaign = make_campaign(owner=owner)
    make_items(campaign, 1)
    client = Client()
    assignment = start(client, campaign)
    form = _form(client, assignment)
    client.post(item_url(assignment), {**form, "q-feedback": "fine"})
    assert Annotation.objects.get().provenance == {}


def test_a_malformed_record_is_refused_in_the_pages_language_and_nothing_is_stored(owner):
    campaign = make_campaign(owner=owner, language="de")
    make_items(campaign, 1)
    client = Client()
    assignment = start(client, campaign)
    response = client.post(item_url(assignment), {
        **_form(client, assignment), "q-feedback": "fine",
        "provenance": json.dumps({"q-coherence": TYPED})})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Aufzeichnung Ihrer Eingabe" in html and "record of your typing" not in html
    assert ">fine</textarea>" in html  # the answers are kept on the page
    assert not Annotation.objects.exists()


def test_a_per_output_answer_missing_is_explained_with_the_outputs_label_in_german(owner):
    """The last English answer errors of the worker pages: "Please answer this question for
    Response A" (the heading too) now follow the campaign's language."""
    from campaigns.models import Item
    campaign = make_campaign(owner=owner, language="de", schema={
        "display": [{"field": "prompt", "label": "Frage"}],
        "questions": [{"id": "good", "kind": "text", "text": "Was fehlt?",
                       "for_each_output": True}]})
    Item.objects.create(campaign=campaign, external_id="i", slots_wanted=3, data={
        "prompt": "P", "outputs": [{"system": "a", "text": "A"}, {"system": "b", "text": "B"}]})
    client = Client()
    assignment = start(client, campaign)
    page = client.get(item_url(assignment)).content.decode()
    assert "Antwort A" in page and "Response A" not in page
    key = re.search(r'name="form_key" value="([^"]+)"', page).group(1)
    response = client.post(item_url(assignment), {"form_key": key, "q-good.o0": "Nichts."})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Bitte beantworten Sie diese Frage für Antwort B." in html
    assert "Please answer" not in html
