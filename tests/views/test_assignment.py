"""The assignment pages /a/<token>/...: the item page (display, questions, saving, errors, going
back, malformed input), the spans page, handing in, the finish page and the completion page."""
import html
import json

import pytest
from django.test import Client
from django.urls import NoReverseMatch, reverse, set_script_prefix
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from campaigns.models import Annotation, Assignment, Item
from campaigns.views import assignment as assignment_views
from campaigns.work.completion import completion_code_for
from tests.factories import ESA_SCHEMA, MQM_SCHEMA, make_campaign, mturk_worker_id, prolific_pid
from tests.views.conftest import PROLIFIC, VALID_CONTINUATION, item_url, page_url, start

pytestmark = pytest.mark.django_db


# The item page /a/<token>/<position>/: display, questions, saving, errors, going back.


def test_it_shows_the_item_fields_questions_progress_and_instructions(client, continuation):
    continuation.instructions = "Read the *prompt* first."
    continuation.save()
    assignment = start(client, continuation)
    html = client.get(item_url(assignment, 2)).content.decode()
    assert "Prompt (read me first!)" in html and "System&#x27;s generation (rate this!)" in html
    assert "Prompt 1..." in html or "Prompt 1" in html
    assert "2 of 3" in html and '<progress' in html
    assert "<details" in html and "<em>prompt</em>" in html
    assert "<fieldset" in html and "<legend" in html
    assert 'for="f-coherence-3"' in html and 'id="f-coherence-3"' in html
    assert "level 3" in html  # each point's description is on the page
    assert 'rel="prev"' in html


def test_item_text_is_escaped(client, owner):
    campaign = make_campaign(owner=owner)
    Item.objects.create(campaign=campaign, external_id="x", slots_wanted=3, data={
        "prompt": "<script>alert(1)</script>", "completion": "<img src=x onerror=alert(2)>"})
    assignment = start(client, campaign)
    html = client.get(item_url(assignment)).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html


def test_an_unknown_token_or_position_is_404(client, continuation):
    assert client.get(reverse("campaigns:item", args=["nope", 1])).status_code == 404
    assignment = start(client, continuation)
    assert client.get(item_url(assignment, 4)).status_code == 404
    assert client.get(item_url(assignment, 0)).status_code == 404


def test_a_valid_answer_is_saved_and_answered_with_the_next_item(client, continuation):
    assignment = start(client, continuation)
    response = client.post(item_url(assignment, 1), VALID_CONTINUATION)
    assert response.status_code == 200 and page_url(response) == item_url(assignment, 2)
    annotation = Annotation.objects.get()
    assert annotation.answers == {"coherence": 4, "sentiment": 2, "feedback": "fine"}


def test_the_next_page_posts_to_its_own_address_and_names_it_for_the_address_bar(
        client, continuation):
    """One request per answered item: the save answers with the next item, which the
    browser shows under the URL the save was posted to. The form's action and the page's
    data-page-url (put in the address bar by address.js) name the next item, so its save,
    a reload, back and forward all go to the right item; a GET shows the same page."""
    assignment = start(client, continuation)
    html = client.post(item_url(assignment, 1), VALID_CONTINUATION).content.decode()
    assert f'action="{item_url(assignment, 2)}"' in html
    assert f'data-page-url="{item_url(assignment, 2)}"' in html and "campaigns/address.js" in html
    assert "Item 2 of 3" in html
    shown = client.get(item_url(assignment, 2)).content.decode()
    assert f'action="{item_url(assignment, 2)}"' in shown and "data-page-url" not in shown


def test_a_resent_save_stores_once_and_answers_with_the_same_next_page(client, continuation):
    """A reload answered "resend", the back button and a double click repeat the POST: the
    save is an upsert, so the item keeps one annotation with the last answers."""
    assignment = start(client, continuation)
    first = client.post(item_url(assignment, 1), VALID_CONTINUATION)
    again = client.post(item_url(assignment, 1), {**VALID_CONTINUATION, "q-coherence": "5"})
    assert page_url(first) == page_url(again) == item_url(assignment, 2)
    annotation = Annotation.objects.get()
    assert annotation.answers["coherence"] == 5
    assert Item.objects.get(pk=annotation.item_id).annotations_done == 1


def test_saving_the_last_item_hands_in_and_answers_with_the_code(client, continuation):
    assignment = start(client, continuation)
    for position in (1, 2, 3):
        response = client.post(item_url(assignment, position), VALID_CONTINUATION)
    done = reverse("campaigns:done", args=[assignment.token])
    assert response.status_code == 200 and page_url(response) == done
    assignment.refresh_from_db()
    assert assignment.status == "submitted" and assignment.completion_code
    assert assignment.completion_code in response.content.decode()
    assert assignment.completion_code in client.get(done).content.decode()


def test_the_assignment_stays_open_until_its_last_unanswered_item_is_saved(client, continuation):
    assignment = start(client, continuation)
    client.post(item_url(assignment, 1), VALID_CONTINUATION)
    # The last position saved while item 2 is unanswered: the finish page says what is left.
    response = client.post(item_url(assignment, 3), VALID_CONTINUATION)
    assert page_url(response) == reverse("campaigns:finish", args=[assignment.token])
    assignment.refresh_from_db()
    assert assignment.status == "active" and not assignment.completion_code
    # Item 2, the last unanswered one, is saved from the middle of the assignment.
    response = client.post(item_url(assignment, 2), VALID_CONTINUATION)
    assert page_url(response) == reverse("campaigns:done", args=[assignment.token])
    assert Assignment.objects.get().status == "submitted"
    assert Annotation.objects.count() == 3


def test_going_back_and_changing_an_answer_before_the_end(client, continuation):
    assignment = start(client, continuation)
    client.post(item_url(assignment, 1), VALID_CONTINUATION)
    client.post(item_url(assignment, 2), VALID_CONTINUATION)
    page = client.get(item_url(assignment, 1)).content.decode()
    assert 'id="f-coherence-4" name="q-coherence" value="4" checked' in page
    response = client.post(item_url(assignment, 1), {**VALID_CONTINUATION, "q-coherence": "1"})
    assert page_url(response) == item_url(assignment, 2)
    assert Assignment.objects.get().status == "active"
    first = assignment.slots.get(position=1).item
    assert Annotation.objects.get(item=first).answers["coherence"] == 1
    assert Annotation.objects.count() == 2
    response = client.post(item_url(assignment, 3), VALID_CONTINUATION)
    assert page_url(response) == reverse("campaigns:done", args=[assignment.token])


def test_a_double_post_of_the_final_item_stores_once_and_lands_on_the_code(client, continuation):
    assignment = start(client, continuation)
    for position in (1, 2):
        client.post(item_url(assignment, position), VALID_CONTINUATION)
    done = reverse("campaigns:done", args=[assignment.token])
    first = client.post(item_url(assignment, 3), VALID_CONTINUATION)
    again = client.post(item_url(assignment, 3), VALID_CONTINUATION)
    assert first.status_code == again.status_code == 200
    assert page_url(first) == page_url(again) == done
    assert Annotation.objects.count() == 3
    assert all(a.answers["coherence"] == 4 for a in Annotation.objects.all())
    assert sorted(Item.objects.values_list("annotations_done", flat=True)) == [0, 0, 1, 1, 1]
    submitted = Assignment.objects.get()
    assert submitted.status == "submitted"
    assert page_url(client.post(item_url(assignment, 3), VALID_CONTINUATION)) == done
    assert Assignment.objects.get().submitted_at == submitted.submitted_at


def test_a_rejected_answer_is_400_with_messages_and_other_answers_kept(client, continuation):
    assignment = start(client, continuation)
    response = client.post(item_url(assignment), {"q-sentiment": "2", "q-feedback": "kept <b>"})
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="f-coherence-error"' in html and "Please answer this question." in html
    assert 'aria-describedby="f-coherence-error"' in html
    assert 'value="2" checked' in html  # the sentiment answer stays selected
    assert "kept &lt;b&gt;</textarea>" in html
    assert not Annotation.objects.exists()


def test_lines_errors_sit_next_to_their_line_and_all_labels_are_kept(client, summary_campaign):
    assignment = start(client, summary_campaign)
    post = {"q-lines__count": "3", "q-lines.1.label": "consistent",
            "q-lines.2.label": "inconsistent", "q-lines.2.rewrite": "",
            "q-lines.3.label": "na", "q-summary_consistent": "inconsistent"}
    response = client.post(item_url(assignment), post)
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="f-lines-2-followup-error"' in html and "Line 2: required for a line marked" in html
    # The follow-up's own text is its field's label, not repeated in the error (finding 9).
    error = html.split('id="f-lines-2-followup-error"', 1)[1].split("</p>", 1)[0]
    assert "Provide a rewrite." not in error
    assert 'aria-describedby="f-lines-2-followup-error"' in html
    assert html.count(" checked") == 4  # three line labels and the whole-summary answer
    post["q-lines.2.rewrite"] = "It rained."
    assert client.post(item_url(assignment), post).status_code == 200
    assert Annotation.objects.get().answers["lines"][1] == {"label": "inconsistent",
                                                           "rewrite": "It rained."}


def test_rubric_errors_name_the_criterion(client, rubric_campaign):
    assignment = start(client, rubric_campaign)
    post = {f"q-rubric.C{n}": "1" for n in range(1, 16) if n != 7}
    response = client.post(item_url(assignment), post)
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="f-rubric-C7-error"' in html
    assert "Total: <output data-rubric-total>14</output> / 19" in html
    post["q-rubric.C7"] = "0"
    assert client.post(item_url(assignment), post).status_code == 200
    assert Annotation.objects.get().answers["rubric"]["total"] == 14


def test_an_unmoved_slider_does_not_count(client, translation_campaign):
    assignment = start(client, translation_campaign)
    post = {"q-acceptability": "50", "q-acceptability__moved": "0"}
    response = client.post(item_url(assignment), post)
    assert response.status_code == 400
    assert b'id="f-acceptability-error"' in response.content
    post.update({"q-acceptability__moved": "1", "q-source_issues": ["typos"],
                 "q-source_issues__other": "odd"})
    assert client.post(item_url(assignment), post).status_code == 200
    assert Annotation.objects.get().answers == {
        "acceptability": 50, "source_issues": {"selected": ["typos"], "other": "odd"}}


def test_a_double_post_stores_one_annotation(client, continuation):
    assignment = start(client, continuation)
    for _ in range(2):
        assert client.post(item_url(assignment), VALID_CONTINUATION).status_code == 200
    assert Annotation.objects.count() == 1
    item = Annotation.objects.get().item
    item.refresh_from_db()
    assert item.annotations_done == 1


def test_going_back_shows_the_saved_answers_which_can_change(client, continuation):
    assignment = start(client, continuation)
    client.post(item_url(assignment, 1), VALID_CONTINUATION)
    html = client.get(item_url(assignment, 1)).content.decode()
    assert 'id="f-coherence-4" name="q-coherence" value="4" checked' in html
    assert ">fine</textarea>" in html
    client.post(item_url(assignment, 1), {**VALID_CONTINUATION, "q-coherence": "1"})
    assert Annotation.objects.get().answers["coherence"] == 1


def test_time_spent_is_measured_from_the_page_load(client, continuation):
    assignment = start(client, continuation)
    html = client.get(item_url(assignment)).content.decode()
    started = html.split('name="started" value="')[1].split('"')[0]
    client.post(item_url(assignment), {**VALID_CONTINUATION, "started": started})
    assert 0 <= Annotation.objects.get().seconds_spent < 60


def test_a_submitted_assignment_sends_the_worker_to_the_code_not_an_error(client, continuation):
    assignment = start(client, continuation)
    for position in (1, 2, 3):
        client.post(item_url(assignment, position), VALID_CONTINUATION)
    done = reverse("campaigns:done", args=[assignment.token])
    assert page_url(client.get(item_url(assignment, 1))) == done
    response = client.post(item_url(assignment, 1), VALID_CONTINUATION)
    assert response.status_code == 200 and page_url(response) == done


def test_an_expired_assignment_shows_a_clear_page(client, continuation):
    from datetime import timedelta

    from django.utils import timezone

    assignment = start(client, continuation)
    Assignment.objects.filter(pk=assignment.pk).update(deadline=timezone.now() - timedelta(1))
    response = client.get(item_url(assignment))
    assert response.status_code == 200
    assert b"time for this assignment ran out" in response.content
    response = client.post(item_url(assignment), VALID_CONTINUATION)
    assert response.status_code == 409
    assert not Annotation.objects.exists()


def _form_key(html: str) -> str:
    import re

    return re.search(r'name="form_key" value="([^"]+)"', html).group(1)


def test_answers_need_the_form_key_of_their_assignment_and_no_cookie(continuation):
    strict = Client(enforce_csrf_checks=True)
    entry_url = reverse("campaigns:entry", args=[continuation.slug])
    key = _form_key(strict.get(entry_url, {"PROLIFIC_PID": prolific_pid("p")}).content.decode())
    url = page_url(strict.post(entry_url, {"PROLIFIC_PID": prolific_pid("p"), "form_key": key}))
    other_key = _form_key(
        strict.get(entry_url, {"PROLIFIC_PID": prolific_pid("q")}).content.decode())
    other_url = page_url(strict.post(entry_url, {"PROLIFIC_PID": prolific_pid("q"),
                                                 "form_key": other_key}))
    item_key = _form_key(strict.get(url).content.decode())
    assert strict.post(url, VALID_CONTINUATION).status_code == 403
    # another assignment's key does not fit
    other_key = _form_key(strict.get(other_url).content.decode())
    assert strict.post(url, {**VALID_CONTINUATION, "form_key": other_key}).status_code == 403
    assert not Annotation.objects.exists()
    cookieless = Client(enforce_csrf_checks=True)
    assert cookieless.post(url, {**VALID_CONTINUATION, "form_key": item_key}).status_code == 200
    assert Annotation.objects.count() == 1


def test_pages_load_only_same_origin_static_scripts(client, rubric_campaign):
    assignment = start(client, rubric_campaign)
    html = client.get(item_url(assignment)).content.decode()
    assert "<script>" not in html and "onclick" not in html and "style=" not in html
    assert 'src="/static/campaigns/rubric.js"' in html
    assert "http://" not in html.replace("http://testserver", "") and "https://" not in html


def test_a_save_from_a_stale_tab_on_handed_in_work_says_it_was_not_saved(client, continuation):
    assignment = start(client, continuation)
    for position in (1, 2, 3):
        client.post(item_url(assignment, position), VALID_CONTINUATION)
    assert Assignment.objects.get().status == "submitted"
    before = list(Annotation.objects.order_by("id").values_list("answers", "updated_at"))
    stale = client.post(item_url(assignment, 1), {**VALID_CONTINUATION, "q-coherence": "1"})
    assert stale.status_code == 409
    html = stale.content.decode()
    assert "Not saved: this work was already handed in" in html
    assert reverse("campaigns:done", args=[assignment.token]) in html
    assert list(Annotation.objects.order_by("id").values_list("answers", "updated_at")) == before
    invalid = client.post(item_url(assignment, 2), {"q-coherence": "9"})
    assert invalid.status_code == 409 and b"Not saved" in invalid.content


# Worker pages answer malformed input with a 4xx and store nothing (never a 500).


@pytest.fixture
def safe_client():
    return Client(raise_request_exception=False)


@pytest.mark.parametrize("field,value", [
    ("q-coherence", "9" * 400),
    ("q-coherence", "1e400"),
    ("q-feedback", "nul \x00 inside"),
    ("q-coherence", "4\x00"),
])
def test_bad_values_on_a_likert_page_are_400(safe_client, continuation, field, value):
    assignment = start(safe_client, continuation)
    response = safe_client.post(item_url(assignment, 1), {**VALID_CONTINUATION, field: value})
    assert response.status_code == 400
    assert not Annotation.objects.exists()


@pytest.mark.parametrize("count", ["x", "1e3", "9" * 5000, "-1"])
def test_a_bad_line_count_is_400(safe_client, summary_campaign, count):
    assignment = start(safe_client, summary_campaign)
    response = safe_client.post(item_url(assignment, 1), {"q-lines__count": count,
                                                          "q-lines.1.label": "yes"})
    assert 400 <= response.status_code < 500
    assert not Annotation.objects.exists()


@pytest.mark.parametrize("path", ["/a/{token}/2147483648/", "/a/{token}/99999999999999999999/",
                                  "/a/{token}%00/1/", "/a/%00/1/", "/a/{token}%00/finish/",
                                  "/a/{token}%00/done/"])
def test_bad_assignment_urls_are_404(safe_client, continuation, path):
    assignment = start(safe_client, continuation)
    url = path.format(token=assignment.token)
    assert safe_client.get(url).status_code == 404
    assert safe_client.post(url, VALID_CONTINUATION).status_code in (403, 404)
    assert not Annotation.objects.exists()


# The worker page of a `spans` question: the text shown escaped, the spans posted as JSON, and a
# tampered post refused with the reason and nothing stored.


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
    assert response.status_code == 200
    stored = Annotation.objects.get().answers
    assert stored == {"errors": [span("🐕"), span("bellt", "major")], "score": 70}
    assert [TARGET[s["start"]:s["end"]] for s in stored["errors"]] == ["🐕", "bellt"]


def test_no_span_marked_is_stored_as_an_empty_list(client, esa_campaign):
    assignment = start(client, esa_campaign, PROLIFIC)
    assert client.post(item_url(assignment), esa_post([], "95")).status_code == 200
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


@pytest.mark.parametrize(("language", "posted", "message"), [
    ("de", [{**span("bellt"), "text": "schläft"}],
     "Abschnitt 1: der Text an 18-23 ist „bellt“, nicht „schläft“."),
    ("fr", [{**span("bellt"), "end": 99}],
     "Passage 1 : les positions 18-99 sont hors du texte (0-46)."),
    ("es", [{**span("bellt"), "severity": ""}], "Fragmento 1: elija una gravedad."),
    ("ja", [{**span("bellt"), "category": "accuracy/mistranslation"}],
     "範囲 1：この質問ではカテゴリは不要です。"),
    ("zh-Hans", [span("bellt"), {**span("bellt"), "start": 17, "text": " bellt"}],
     "片段不能重叠：“ bellt”（17-23）和“bellt”（18-23）。"),
    ("ar", {"start": 0}, "المتوقع قائمة من المقاطع."),
])
def test_a_refused_span_is_explained_in_the_campaigns_language(client, esa_campaign, language,
                                                                posted, message):
    esa_campaign.language = language
    esa_campaign.save(update_fields=["language"])
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
    assert client.post(item_url(assignment), {"q-mqm": json.dumps(good)}).status_code == 200
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
        assert response.status_code in (200, 400)
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
    assert client.post(item_url(assignment), esa_post(saved)).status_code == 200
    page = client.get(item_url(assignment)).content.decode()
    value = page.split('name="q-errors" id="f-errors-value" value="')[1].split('"')[0]
    assert json.loads(html.unescape(value)) == saved
    assert "Marked spans: <span class=\"spans-count\">2</span>" in page


def test_the_researchers_preview_shows_stored_spans_and_records_nothing(mqm_campaign):
    from django.test import RequestFactory

    from campaigns.pages import render_item_preview

    item = mqm_campaign.items.get()
    shown = [span("bellt", "major", "fluency/grammar")]
    response = render_item_preview(RequestFactory().get("/"), mqm_campaign, item,
                                   values={"mqm": shown})
    page = response.content.decode()
    assert response.status_code == 200 and "/static/campaigns/spans.js" in page
    assert "Major · Fluency / Grammar" in page
    assert not Annotation.objects.exists()


# Handing in and the completion page: the last save hands in, the code only after the work is
# saved; the finish page for what is left; platform hand-back.


def finish(assignment):
    return reverse("campaigns:finish", args=[assignment.token])


def done(assignment):
    return reverse("campaigns:done", args=[assignment.token])


def answer_all(client, assignment, post=VALID_CONTINUATION):
    """Save every item in order; the last save hands the work in (its answer is returned)."""
    for position in range(1, assignment.slots.count() + 1):
        response = client.post(item_url(assignment, position), post)
        assert response.status_code == 200
    return response


def saved_but_not_handed_in(client, assignment):
    """Every item saved, the assignment still active: work saved before the save of the last
    item handed it in (or whose hand-in failed). The finish page hands such work in."""
    answer_all(client, assignment)
    Assignment.objects.filter(pk=assignment.pk).update(status="active", submitted_at=None,
                                                       completion_code="")


def test_the_code_appears_in_no_page_before_the_work_is_saved(client, continuation):
    seen = [client.get(reverse("campaigns:entry", args=[continuation.slug]), PROLIFIC)]
    assignment = start(client, continuation)
    code = completion_code_for(assignment)
    for position in (1, 2, 3):
        seen.append(client.get(item_url(assignment, position)))
        seen.append(client.post(item_url(assignment, position), {"q-coherence": "9"}))
        if position < 3:
            client.post(item_url(assignment, position), VALID_CONTINUATION)
            seen.append(client.get(finish(assignment)))
            seen.append(client.get(done(assignment), follow=True))
    for response in seen:
        assert code.encode() not in response.content
    response = client.post(item_url(assignment, 3), VALID_CONTINUATION, follow=True)
    assert code.encode() in response.content


def test_saving_the_last_item_hands_in_and_shows_the_code(client, continuation):
    assignment = start(client, continuation)
    response = answer_all(client, assignment)
    assert page_url(response) == done(assignment)
    assignment.refresh_from_db()
    assert assignment.status == "submitted" and assignment.submitted_at is not None
    assert assignment.completion_code == completion_code_for(assignment)
    html = client.get(done(assignment)).content.decode()
    assert assignment.completion_code in html


def test_finish_with_unanswered_items_explains_and_keeps_the_work(client, continuation):
    assignment = start(client, continuation)
    client.post(item_url(assignment, 1), VALID_CONTINUATION)
    page = client.get(finish(assignment)).content.decode()
    assert "1 of 3 answered" in page and "not answered yet" in page
    response = client.post(finish(assignment))
    assert response.status_code == 409
    assert b"2, 3" in response.content
    assignment.refresh_from_db()
    assert assignment.status == "active"


def test_done_before_submitting_goes_to_the_finish_page(client, continuation):
    assignment = start(client, continuation)
    assert page_url(client.get(done(assignment))) == finish(assignment)


def test_the_finish_page_of_a_submitted_assignment_goes_to_the_code(client, continuation):
    assignment = start(client, continuation)
    answer_all(client, assignment)
    assert page_url(client.get(finish(assignment))) == done(assignment)
    assert page_url(client.post(finish(assignment))) == done(assignment)


def test_work_saved_complete_but_not_handed_in_is_handed_in_by_the_finish_page(
        client, continuation):
    assignment = start(client, continuation)
    saved_but_not_handed_in(client, assignment)
    page = client.get(finish(assignment)).content.decode()
    assert "3 of 3 answered" in page and "Finish" in page
    assert completion_code_for(assignment) not in page
    response = client.post(finish(assignment))
    assert page_url(response) == done(assignment)
    assignment.refresh_from_db()
    assert assignment.status == "submitted"
    assert assignment.completion_code == completion_code_for(assignment)


def test_a_plain_campaign_shows_a_per_assignment_code(client, continuation):
    assignment = start(client, continuation, params={})  # a plain link: no platform
    assert page_url(answer_all(client, assignment)) == done(assignment)
    assignment.refresh_from_db()
    html = client.get(done(assignment)).content.decode()
    assert assignment.status == "submitted"
    assert assignment.completion_code and assignment.completion_code in html
    assert "externalSubmit" not in html and "prolific" not in html.lower()


def test_prolific_gets_a_button_to_the_redirect_url_with_the_code(client, translation_campaign):
    assignment = start(client, translation_campaign)
    answer_all(client, assignment, {"q-acceptability": "70", "q-acceptability__moved": "1"})
    html = client.get(done(assignment)).content.decode()
    assert 'href="https://app.prolific.com/submissions/complete?cc=C7Q2M4TA"' in html
    assert "C7Q2M4TA" in html


def test_mturk_gets_a_form_posting_assignment_id_and_the_code(client, continuation):
    params = {"workerId": mturk_worker_id("A1B2C3"), "assignmentId": "3XYZ", "hitId": "H1",
              "turkSubmitTo": "https://www.mturk.com"}
    assignment = start(client, continuation, params=params)
    answer_all(client, assignment)
    html = client.get(done(assignment)).content.decode()
    assignment.refresh_from_db()
    assert 'action="https://www.mturk.com/mturk/externalSubmit"' in html
    assert 'name="assignmentId" value="3XYZ"' in html
    assert f'value="{assignment.completion_code}"' in html


def test_finishing_twice_is_harmless(client, continuation):
    assignment = start(client, continuation)
    saved_but_not_handed_in(client, assignment)
    assert page_url(client.post(finish(assignment))) == done(assignment)
    assert page_url(client.post(finish(assignment))) == done(assignment)
    assert Assignment.objects.get().status == "submitted"


def test_a_returning_prolific_participant_gets_the_same_done_page(client, continuation):
    assignment = start(client, continuation)
    answer_all(client, assignment)
    entry = reverse("campaigns:entry", args=[continuation.slug])
    # One submission per participant per study on Prolific: asking for more changes nothing.
    for params in (PROLIFIC, {**PROLIFIC, "more": "1"}):
        assert page_url(client.get(entry, params)) == done(assignment)
    assert page_url(client.post(entry, PROLIFIC)) == done(assignment)
    assert client.post(entry, {**PROLIFIC, "more": "1"}).status_code == 409
    html = client.get(done(assignment)).content.decode()
    assert assignment.completion_code in html and "more=1" not in html
    assert Assignment.objects.count() == 1


def test_a_returning_link_worker_sees_the_code_and_may_ask_for_more(client, continuation):
    assignment = start(client, continuation, params={})
    answer_all(client, assignment)
    entry = reverse("campaigns:entry", args=[continuation.slug])
    assert page_url(client.get(entry)) == done(assignment)
    html = client.get(done(assignment)).content.decode()
    assert f'href="{entry}?more=1"' in html  # the campaign sets no limit
    assert client.get(entry, {"more": "1"}).status_code == 200
    second = start(client, continuation, params={})
    assert second != assignment and second.worker_id == assignment.worker_id


def test_work_saved_before_the_deadline_can_still_be_handed_in(client, continuation):
    from datetime import timedelta

    from django.utils import timezone

    assignment = start(client, continuation)
    saved_but_not_handed_in(client, assignment)
    Assignment.objects.filter(pk=assignment.pk).update(deadline=timezone.now() - timedelta(1))
    assert b"Finish" in client.get(finish(assignment)).content
    assert page_url(client.post(finish(assignment))) == done(assignment)


def test_an_expired_unfinished_assignment_cannot_be_finished(client, continuation):
    from datetime import timedelta

    from django.utils import timezone

    assignment = start(client, continuation)
    client.post(item_url(assignment, 1), VALID_CONTINUATION)
    Assignment.objects.filter(pk=assignment.pk).update(deadline=timezone.now() - timedelta(1))
    response = client.get(finish(assignment))
    assert b"This assignment is closed" in response.content
    response = client.post(finish(assignment))
    assert response.status_code == 409
    assert Assignment.objects.get().status != "submitted"


@pytest.mark.parametrize("name,args", [
    ("campaigns:item", ["Ab-_09", 7]), ("campaigns:item", ["t", 0]),
    ("campaigns:finish", ["Ab-_09"]), ("campaigns:done", ["x" * 64]),
    ("campaigns:entry", ["my-study_2"]), ("campaigns:entry", ["s" * 80])])
def test_page_addresses_are_reverses_of_the_routes(name, args):
    assert assignment_views._address(name, *args) == reverse(name, args=args)


def test_an_address_outside_the_routes_alphabet_is_refused_as_reverse_refuses_it():
    with pytest.raises(NoReverseMatch):
        assignment_views._address("campaigns:item", "bad token", 1)
    with pytest.raises(NoReverseMatch):
        assignment_views._address("campaigns:item", "good", 1_000_000)


def test_the_study_link_is_the_reverse_of_the_entry_route_under_any_script_prefix(campaign):
    assert assignment_views.entry_url(campaign) == reverse("campaigns:entry", args=[campaign.slug])
    try:
        set_script_prefix("/under/")
        assert assignment_views.entry_url(campaign) == f"/under/c/{campaign.slug}/"
    finally:
        set_script_prefix("/")
