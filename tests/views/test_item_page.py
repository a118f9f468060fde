"""The item page /a/<token>/<position>/: display, questions, saving, errors, going back."""
import pytest
from django.test import Client
from django.urls import reverse

from campaigns.models import Annotation, Assignment, Item
from tests.factories import make_campaign, prolific_pid
from tests.views.conftest import VALID_CONTINUATION, item_url, start

pytestmark = pytest.mark.django_db


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


def test_a_valid_answer_is_saved_and_redirects_to_the_next_item(client, continuation):
    assignment = start(client, continuation)
    response = client.post(item_url(assignment, 1), VALID_CONTINUATION)
    assert response.status_code == 302 and response["Location"] == item_url(assignment, 2)
    annotation = Annotation.objects.get()
    assert annotation.answers == {"coherence": 4, "sentiment": 2, "feedback": "fine"}


def test_saving_the_last_item_hands_in_and_redirects_to_the_code(client, continuation):
    assignment = start(client, continuation)
    for position in (1, 2, 3):
        response = client.post(item_url(assignment, position), VALID_CONTINUATION)
    done = reverse("campaigns:done", args=[assignment.token])
    assert response.status_code == 302 and response["Location"] == done
    assignment.refresh_from_db()
    assert assignment.status == "submitted" and assignment.completion_code
    assert assignment.completion_code in client.get(done).content.decode()


def test_the_assignment_stays_open_until_its_last_unanswered_item_is_saved(client, continuation):
    assignment = start(client, continuation)
    client.post(item_url(assignment, 1), VALID_CONTINUATION)
    # The last position saved while item 2 is unanswered: the finish page says what is left.
    response = client.post(item_url(assignment, 3), VALID_CONTINUATION)
    assert response["Location"] == reverse("campaigns:finish", args=[assignment.token])
    assignment.refresh_from_db()
    assert assignment.status == "active" and not assignment.completion_code
    # Item 2, the last unanswered one, is saved from the middle of the assignment.
    response = client.post(item_url(assignment, 2), VALID_CONTINUATION)
    assert response["Location"] == reverse("campaigns:done", args=[assignment.token])
    assert Assignment.objects.get().status == "submitted"
    assert Annotation.objects.count() == 3


def test_going_back_and_changing_an_answer_before_the_end(client, continuation):
    assignment = start(client, continuation)
    client.post(item_url(assignment, 1), VALID_CONTINUATION)
    client.post(item_url(assignment, 2), VALID_CONTINUATION)
    page = client.get(item_url(assignment, 1)).content.decode()
    assert 'id="f-coherence-4" name="q-coherence" value="4" checked' in page
    response = client.post(item_url(assignment, 1), {**VALID_CONTINUATION, "q-coherence": "1"})
    assert response["Location"] == item_url(assignment, 2)
    assert Assignment.objects.get().status == "active"
    first = assignment.slots.get(position=1).item
    assert Annotation.objects.get(item=first).answers["coherence"] == 1
    assert Annotation.objects.count() == 2
    response = client.post(item_url(assignment, 3), VALID_CONTINUATION)
    assert response["Location"] == reverse("campaigns:done", args=[assignment.token])


def test_a_double_post_of_the_final_item_stores_once_and_lands_on_the_code(client, continuation):
    assignment = start(client, continuation)
    for position in (1, 2):
        client.post(item_url(assignment, position), VALID_CONTINUATION)
    done = reverse("campaigns:done", args=[assignment.token])
    first = client.post(item_url(assignment, 3), VALID_CONTINUATION)
    again = client.post(item_url(assignment, 3), VALID_CONTINUATION)
    assert first.status_code == again.status_code == 302
    assert first["Location"] == again["Location"] == done
    assert Annotation.objects.count() == 3
    assert all(a.answers["coherence"] == 4 for a in Annotation.objects.all())
    assert sorted(Item.objects.values_list("annotations_done", flat=True)) == [0, 0, 1, 1, 1]
    submitted = Assignment.objects.get()
    assert submitted.status == "submitted"
    assert client.post(item_url(assignment, 3), VALID_CONTINUATION)["Location"] == done
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
    assert client.post(item_url(assignment), post).status_code == 302
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
    assert client.post(item_url(assignment), post).status_code == 302
    assert Annotation.objects.get().answers["rubric"]["total"] == 14


def test_an_unmoved_slider_does_not_count(client, translation_campaign):
    assignment = start(client, translation_campaign)
    post = {"q-acceptability": "50", "q-acceptability__moved": "0"}
    response = client.post(item_url(assignment), post)
    assert response.status_code == 400
    assert b'id="f-acceptability-error"' in response.content
    post.update({"q-acceptability__moved": "1", "q-source_issues": ["typos"],
                 "q-source_issues__other": "odd"})
    assert client.post(item_url(assignment), post).status_code == 302
    assert Annotation.objects.get().answers == {
        "acceptability": 50, "source_issues": {"selected": ["typos"], "other": "odd"}}


def test_a_double_post_stores_one_annotation(client, continuation):
    assignment = start(client, continuation)
    for _ in range(2):
        assert client.post(item_url(assignment), VALID_CONTINUATION).status_code == 302
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
    assert client.get(item_url(assignment, 1))["Location"] == done
    response = client.post(item_url(assignment, 1), VALID_CONTINUATION)
    assert response.status_code == 302 and response["Location"] == done


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
    url = strict.post(entry_url, {"PROLIFIC_PID": prolific_pid("p"), "form_key": key})["Location"]
    other_url = strict.post(entry_url, {"PROLIFIC_PID": prolific_pid("q"), "form_key": _form_key(
        strict.get(entry_url, {"PROLIFIC_PID": prolific_pid("q")}).content.decode())})["Location"]
    item_key = _form_key(strict.get(url).content.decode())
    assert strict.post(url, VALID_CONTINUATION).status_code == 403
    # another assignment's key does not fit
    other_key = _form_key(strict.get(other_url).content.decode())
    assert strict.post(url, {**VALID_CONTINUATION, "form_key": other_key}).status_code == 403
    assert not Annotation.objects.exists()
    cookieless = Client(enforce_csrf_checks=True)
    assert cookieless.post(url, {**VALID_CONTINUATION, "form_key": item_key}).status_code == 302
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
