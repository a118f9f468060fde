"""The worker page of a `spans` question: the text shown escaped, the spans posted as JSON, and
a tampered post refused with the reason and nothing stored."""
import html
import json

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from campaigns.models import Annotation, Item
from tests.factories import ESA_SCHEMA, MQM_SCHEMA, make_campaign
from tests.views.conftest import PROLIFIC, item_url, start

pytestmark = pytest.mark.django_db

# A line break kept as \r\n, an emoji (two UTF-16 units, one code point) and markup.
TARGET = "Der <b>Hund</b> 🐕 bellt.\r\nDas Auto & der Baum."
DATA = {"source": "The dog barks. The car and the tree.", "target": TARGET}


def span(text, severity="minor", category=None):
    start = TARGET.index(text)
    return {"start": start, "end": start + len(text), "text": text, "severity": severity,
            "category": category}


def esa_post(spans, score="70"):
    value = spans if isinstance(spans, str) else json.dumps(spans)
    return {"q-errors": value, "q-score": score, "q-score__moved": "1"}


@pytest.fixture
def esa_campaign(owner):
    campaign = make_campaign(owner=owner, schema=ESA_SCHEMA, slug="esa")
    Item.objects.create(campaign=campaign, external_id="s1", system="mt-a", slots_wanted=3,
                        data=DATA)
    return campaign


@pytest.fixture
def mqm_campaign(owner):
    campaign = make_campaign(owner=owner, schema=MQM_SCHEMA, slug="mqm")
    Item.objects.create(campaign=campaign, external_id="s1", system="mt-a", slots_wanted=3,
                        data=DATA)
    return campaign


def test_the_page_shows_the_text_escaped_with_its_exact_value_for_the_script(client,
                                                                             esa_campaign):
    page = client.get(item_url(start(client, esa_campaign, PROLIFIC))).content.decode()
    assert 'data-kind="spans"' in page and "/static/campaigns/spans.js" in page
    assert "<b>Hund</b>" not in page and "&lt;b&gt;Hund&lt;/b&gt;" in page
    block = page.split('id="f-errors-text-data" type="application/json">')[1].split("</script>")[0]
    assert json.loads(block) == TARGET  # \r\n survives (HTML would fold it into \n)
    assert 'name="q-errors" id="f-errors-value" value="[]"' in page
    assert "No span marked" in page


def test_marked_spans_and_the_score_are_stored_sorted_with_their_text(client, esa_campaign):
    assignment = start(client, esa_campaign, PROLIFIC)
    posted = [span("bellt", "major"), span("🐕")]
    response = client.post(item_url(assignment), esa_post(posted))
    assert response.status_code == 302
    stored = Annotation.objects.get().answers
    assert stored == {"errors": [span("🐕"), span("bellt", "major")], "score": 70}
    assert [TARGET[s["start"]:s["end"]] for s in stored["errors"]] == ["🐕", "bellt"]


def test_no_span_marked_is_stored_as_an_empty_list(client, esa_campaign):
    assignment = start(client, esa_campaign, PROLIFIC)
    assert client.post(item_url(assignment), esa_post([], "95")).status_code == 302
    assert Annotation.objects.get().answers == {"errors": [], "score": 95}


@pytest.mark.parametrize(("posted", "message"), [
    ([{**span("bellt"), "text": "schläft"}], "Span 1: the text at 18-23 is “bellt”, not "
                                             "“schläft”."),
    ([{**span("bellt"), "end": 99}], "Span 1: the offsets 18-99 lie outside the text (0-46)."),
    ([{**span("bellt"), "severity": "catastrophic"}], "Span 1: the severity must be one of "
                                                      "minor, major."),
    ([span("bellt"), {**span("bellt"), "start": 17, "text": " bellt"}],
     "Spans may not overlap: “ bellt” (17-23) and “bellt” (18-23)."),
    ([{**span("bellt"), "category": "accuracy/mistranslation"}],
     "Span 1: this question asks for no category."),
    ('[{"start": 0, "end": 3', "The marked spans could not be read (expected a JSON list)."),
    ({"start": 0}, "Expected a list of spans."),
])
def test_a_tampered_post_is_refused_with_the_reason_and_nothing_stored(client, esa_campaign,
                                                                      posted, message):
    assignment = start(client, esa_campaign, PROLIFIC)
    response = client.post(item_url(assignment), esa_post(posted))
    assert response.status_code == 400
    assert html.escape(message, quote=False) in response.content.decode()
    assert not Annotation.objects.exists()


def test_an_mqm_span_without_its_required_category_is_refused(client, mqm_campaign):
    assignment = start(client, mqm_campaign, PROLIFIC)
    refused = client.post(item_url(assignment), {"q-mqm": json.dumps([span("bellt", "major")])})
    assert refused.status_code == 400
    assert "Span 1: choose a category." in refused.content.decode()
    assert not Annotation.objects.exists()
    good = [span("bellt", "critical", "accuracy/mistranslation")]
    assert client.post(item_url(assignment), {"q-mqm": json.dumps(good)}).status_code == 302
    assert Annotation.objects.get().answers == {"mqm": good}


def test_a_refused_page_keeps_the_valid_spans_for_the_worker_to_fix(client, esa_campaign):
    assignment = start(client, esa_campaign, PROLIFIC)
    posted = [span("🐕", "major"), {**span("bellt"), "text": "x"}]
    page = client.post(item_url(assignment), esa_post(posted)).content.decode()
    value = page.split('name="q-errors" id="f-errors-value" value="')[1].split('"')[0]
    assert json.loads(html.unescape(value)) == [span("🐕", "major")]
    assert "Major</span>" in page  # the server-drawn list names the kept span's severity


def test_arbitrary_span_values_never_fail_and_a_refusal_stores_nothing(esa_campaign):
    client = Client(raise_request_exception=False)
    Item.objects.update(slots_wanted=1000)
    workers = iter(range(1000))
    assignment = [start(client, esa_campaign, PROLIFIC)]
    entries = st.fixed_dictionaries({}, optional={
        "start": st.one_of(st.integers(-3, 60), st.text(max_size=3), st.none(), st.floats()),
        "end": st.one_of(st.integers(-3, 60), st.booleans()),
        "text": st.one_of(st.sampled_from(["bellt", "🐕", " ", ""]), st.text(max_size=5)),
        "severity": st.sampled_from(["minor", "major", "", "x"]),
        "category": st.one_of(st.none(), st.text(max_size=3))})
    values = st.one_of(st.lists(entries, max_size=4).map(json.dumps), st.text(max_size=50))

    @settings(derandomize=True, max_examples=60, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(value=values)
    def check(value):
        response = client.post(item_url(assignment[0]), esa_post(value))
        assert response.status_code in (302, 400)
        if response.status_code == 400:
            assert not Annotation.objects.filter(assignment=assignment[0]).exists()
        else:  # saved (and handed in): the next post comes from a new worker
            stored = Annotation.objects.get(assignment=assignment[0]).answers["errors"]
            assert all(TARGET[s["start"]:s["end"]] == s["text"] for s in stored)
            assignment[0] = start(client, esa_campaign,
                                  {**PROLIFIC, "PROLIFIC_PID": f"{next(workers):024x}"})

    check()


def test_going_back_to_a_saved_item_shows_its_spans(client, esa_campaign):
    Item.objects.create(campaign=esa_campaign, external_id="s2", system="mt-a", slots_wanted=3,
                        data=DATA)
    esa_campaign.items_per_assignment = 2
    esa_campaign.save()
    assignment = start(client, esa_campaign, PROLIFIC)
    saved = [span("🐕", "major"), span("bellt")]
    assert client.post(item_url(assignment), esa_post(saved)).status_code == 302
    page = client.get(item_url(assignment)).content.decode()
    value = page.split('name="q-errors" id="f-errors-value" value="')[1].split('"')[0]
    assert json.loads(html.unescape(value)) == saved
    assert "Marked spans: <span class=\"spans-count\">2</span>" in page


def test_the_researchers_preview_shows_stored_spans_and_records_nothing(mqm_campaign):
    from django.test import RequestFactory

    from campaigns.views import render_item_preview

    item = mqm_campaign.items.get()
    shown = [span("bellt", "major", "fluency/grammar")]
    response = render_item_preview(RequestFactory().get("/"), mqm_campaign, item,
                                   values={"mqm": shown})
    page = response.content.decode()
    assert response.status_code == 200 and "/static/campaigns/spans.js" in page
    assert "Major · Fluency / Grammar" in page
    assert not Annotation.objects.exists()
