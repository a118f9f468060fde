"""The qualification test's pages /q/<token>/...: its items, the feedback, the outcome.

The study link starts the test when the claim asks for it (views/entry.py, on
QualificationRequired); nothing is claimed while the participant takes it. Each item page is
the item page's widgets; its POST saves and scores the answer (work/qualification.py) and is
answered directly with what comes next, naming its own address (`page_url`) as the item pages
do: the feedback for this answer (with feedback on, at the item's own address), the next
item, or the outcome. A participant below the pass mark gets the screened-out page with the
failed-checks code; one who passes gets a page whose button claims the main items and
answers with the first of them. The token in the URL is the credential, as an assignment's.
"""
from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from ..errors import ScreenedOut, ServiceError
from ..models import Qualification
from ..pages.answer_provenance import provenance_from_post
from ..pages.fields import timer_seconds
from ..pages.item import form_expired, item_context
from ..pages.language import activate_worker_language
from ..pages.qualification import feedback_rows
from ..schema import AnswerInvalid, campaign_schema
from ..schema.outputs import needs_shown_answers, order_seed, shown_answers
from ..work import PLATFORM_ID_FIELDS, assignment_claim
from ..work.completion import no_work_redirect_url
from ..work.qualification import (
    QUALIFICATION_FAILED,
    qualification_answer,
    qualification_by_token,
    qualification_next_position,
    qualification_of,
    qualification_position_answer,
)
from .assignment import continue_response
from .forms import answers_from_post, form_key, form_key_valid
from .screening import screened_out_page


def test_item_url(test: Qualification, position: int) -> str:
    return reverse("campaigns:qualification-item", args=[test.token, position])


def test_outcome_url(test: Qualification) -> str:
    return reverse("campaigns:qualification", args=[test.token])


def _binding(token: str) -> str:
    return f"qualification:{token}"


def _test_or_404(request: HttpRequest, token: str) -> Qualification:
    test = qualification_by_token(token)
    if test is None:
        raise Http404("No such test.")
    activate_worker_language(request, test.campaign)
    return test


def test_continue_response(request: HttpRequest, test: Qualification) -> HttpResponse:
    """Where the participant continues their test (its first unanswered item, else its
    outcome), answered directly to the study link's start POST."""
    position = qualification_next_position(test)
    if position is None or test.status != Qualification.Status.ACTIVE:
        return _outcome(request, test, page_url=test_outcome_url(test))
    return _render_item(request, test, position, page_url=True)


def _render_item(request: HttpRequest, test: Qualification, position: int, *,
                 values: dict | None = None, errors: dict | None = None, status: int = 200,
                 page_url: bool = False) -> HttpResponse:
    item, _ = qualification_position_answer(test, position)
    if item is None:
        raise Http404("This test has no such item.")
    context = item_context(campaign=test.campaign, item=item, position=position,
                           total=len(test.items), values=values, errors=errors,
                           order_seed=order_seed(test.token, item.pk))
    context.update(answered=position - 1, form_key=form_key(_binding(test.token)),
                   form_action=test_item_url(test, position))
    if page_url:
        context["page_url"] = context["form_action"]
    return render(request, "campaigns/qualification_item.html", context, status=status)


@csrf_exempt
@never_cache
@require_http_methods(["GET", "POST"])
def qualification_item_page(request: HttpRequest, token: str, position: int) -> HttpResponse:
    test = _test_or_404(request, token)
    if request.method == "POST":
        if not form_key_valid(request, _binding(token)):
            return form_expired(request, test.campaign)
        return _save(request, test, position)
    item, answer = qualification_position_answer(test, position)
    if item is None:
        raise Http404("This test has no such item.")
    if answer is not None:  # answers are final: its feedback, or on to what comes next
        if _with_feedback(test):
            return _feedback(request, test, position)
        return HttpResponseRedirect(_next_url(test))
    if test.status != Qualification.Status.ACTIVE:
        return HttpResponseRedirect(test_outcome_url(test))
    return _render_item(request, test, position)


def _save(request: HttpRequest, test: Qualification, position: int) -> HttpResponse:
    posted: dict = {}
    item, _ = qualification_position_answer(test, position)
    if item is None:
        raise Http404("This test has no such item.")

    def read_answers(schema) -> dict:
        posted.update(answers_from_post(schema.questions, request.POST))
        if needs_shown_answers(schema):  # the order this test showed, not the browser's
            posted.update(shown_answers(schema, dict(posted), item, test.token))
        return posted

    try:
        saved = qualification_answer(
            token=test.token, position=position, answers=read_answers,
            seconds_spent=timer_seconds(request.POST.get("started")),
            provenance=lambda schema: provenance_from_post(schema, request.POST))
    except AnswerInvalid as exc:  # nothing saved: the page again, every answer kept
        return _render_item(request, test, position, values=posted, errors=exc.errors,
                            status=400)
    except ServiceError as exc:
        if exc.status == 404:
            raise Http404(exc.message) from None
        return HttpResponseRedirect(test_outcome_url(test))  # over (another tab finished it)
    test = saved.qualification
    if _with_feedback(test):
        return _feedback(request, test, position, page_url=test_item_url(test, position))
    following = qualification_next_position(test)
    if following is None:
        return _outcome(request, test, page_url=test_outcome_url(test))
    return _render_item(request, test, following, page_url=True)


def _with_feedback(test: Qualification) -> bool:
    settings = qualification_of(test.campaign)
    return settings is not None and settings.feedback


def _next_url(test: Qualification) -> str:
    following = qualification_next_position(test)
    return test_outcome_url(test) if following is None else test_item_url(test, following)


def _feedback(request: HttpRequest, test: Qualification, position: int, *,
              page_url: str = "") -> HttpResponse:
    """Whether the answer at `position` was right, and the expected answer beside it."""
    item, answer = qualification_position_answer(test, position)
    schema = campaign_schema(test.campaign)
    context = item_context(campaign=test.campaign, item=item, position=position,
                           total=len(test.items), values=answer.answers,
                           order_seed=order_seed(test.token, item.pk))
    context.update(correct=answer.correct, answered=position, page_url=page_url,
                   rows=feedback_rows(schema, item, answer.answers), next_url=_next_url(test),
                   last=position == len(test.items))
    return render(request, "campaigns/qualification_feedback.html", context)


@never_cache
@require_http_methods(["GET"])
def qualification_outcome_page(request: HttpRequest, token: str) -> HttpResponse:
    test = _test_or_404(request, token)
    if test.status == Qualification.Status.ACTIVE:
        return HttpResponseRedirect(_next_url(test))
    return _outcome(request, test)


def _outcome(request: HttpRequest, test: Qualification, *, page_url: str = "") -> HttpResponse:
    """Failed: the screened-out page with the failed-checks code; passed: the way in."""
    if test.status == Qualification.Status.FAILED:
        return screened_out_page(request, test.campaign, test.worker.platform,
                                 reason=QUALIFICATION_FAILED, page_url=page_url)
    return render(request, "campaigns/qualification_passed.html", {
        "campaign": test.campaign, "test": test, "page_url": page_url,
        "begin_url": reverse("campaigns:qualification-begin", args=[test.token]),
        "form_key": form_key(_binding(test.token))})


@csrf_exempt
@never_cache
@require_POST
def qualification_begin(request: HttpRequest, token: str) -> HttpResponse:
    """A passed test's way in: claim the main items and answer with the first of them."""
    test = _test_or_404(request, token)
    if not form_key_valid(request, _binding(token)):
        return form_expired(request, test.campaign)
    if test.status != Qualification.Status.PASSED:
        return HttpResponseRedirect(test_outcome_url(test))
    ids = {k: v for k, v in test.platform_ids.items() if k in PLATFORM_ID_FIELDS}
    try:  # the token holder is the test's participant: their open work is theirs
        assignment = assignment_claim(campaign=test.campaign, worker=test.worker,
                                      platform_ids=ids, max_items=test.max_items)
    except ScreenedOut as exc:  # e.g. the participant's quota filled meanwhile
        return screened_out_page(request, test.campaign, test.worker.platform,
                                 reason=exc.extra.get("reason", ""))
    except ServiceError as exc:
        campaign, platform = test.campaign, test.worker.platform
        return render(request, "campaigns/no_work.html", {
            "campaign": campaign, "message": _(str(exc.message)), "platform": platform,
            "no_work_code": campaign.completion_code_no_work,
            "no_work_url": no_work_redirect_url(campaign, platform)},
            status=exc.status if exc.status < 500 else 409)
    return continue_response(request, assignment)
