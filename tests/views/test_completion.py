"""Handing in and the completion page: the last save hands in, the code only after the work is
saved; the finish page for what is left; platform hand-back."""
import pytest
from django.urls import reverse

from campaigns.models import Assignment
from campaigns.services.completion import completion_code_for
from tests.factories import mturk_worker_id
from tests.views.conftest import PROLIFIC, VALID_CONTINUATION, item_url, start

pytestmark = pytest.mark.django_db


def finish(assignment):
    return reverse("campaigns:finish", args=[assignment.token])


def done(assignment):
    return reverse("campaigns:done", args=[assignment.token])


def answer_all(client, assignment, post=VALID_CONTINUATION):
    """Save every item in order; the last save hands the work in (its redirect is returned)."""
    for position in range(1, assignment.slots.count() + 1):
        response = client.post(item_url(assignment, position), post)
        assert response.status_code == 302
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
    assert response["Location"] == done(assignment)
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
    assert client.get(done(assignment))["Location"] == finish(assignment)


def test_the_finish_page_of_a_submitted_assignment_goes_to_the_code(client, continuation):
    assignment = start(client, continuation)
    answer_all(client, assignment)
    assert client.get(finish(assignment))["Location"] == done(assignment)
    assert client.post(finish(assignment))["Location"] == done(assignment)


def test_work_saved_complete_but_not_handed_in_is_handed_in_by_the_finish_page(
        client, continuation):
    assignment = start(client, continuation)
    saved_but_not_handed_in(client, assignment)
    page = client.get(finish(assignment)).content.decode()
    assert "3 of 3 answered" in page and "Finish" in page
    assert completion_code_for(assignment) not in page
    response = client.post(finish(assignment))
    assert response["Location"] == done(assignment)
    assignment.refresh_from_db()
    assert assignment.status == "submitted"
    assert assignment.completion_code == completion_code_for(assignment)


def test_a_plain_campaign_shows_a_per_assignment_code(client, continuation):
    assignment = start(client, continuation, params={})  # a plain link: no platform
    assert answer_all(client, assignment)["Location"] == done(assignment)
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
    assert client.post(finish(assignment))["Location"] == done(assignment)
    assert client.post(finish(assignment))["Location"] == done(assignment)
    assert Assignment.objects.get().status == "submitted"


def test_a_returning_prolific_participant_gets_the_same_done_page(client, continuation):
    assignment = start(client, continuation)
    answer_all(client, assignment)
    entry = reverse("campaigns:entry", args=[continuation.slug])
    # One submission per participant per study on Prolific: asking for more changes nothing.
    for params in (PROLIFIC, {**PROLIFIC, "more": "1"}):
        assert client.get(entry, params)["Location"] == done(assignment)
    assert client.post(entry, PROLIFIC)["Location"] == done(assignment)
    assert client.post(entry, {**PROLIFIC, "more": "1"}).status_code == 409
    html = client.get(done(assignment)).content.decode()
    assert assignment.completion_code in html and "more=1" not in html
    assert Assignment.objects.count() == 1


def test_a_returning_link_worker_sees_the_code_and_may_ask_for_more(client, continuation):
    assignment = start(client, continuation, params={})
    answer_all(client, assignment)
    entry = reverse("campaigns:entry", args=[continuation.slug])
    assert client.get(entry)["Location"] == done(assignment)
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
    assert client.post(finish(assignment))["Location"] == done(assignment)


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
