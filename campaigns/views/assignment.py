"""The assignment pages /a/<token>/...: one page per item, the finish page, the completion page.

The token in the URL is the worker's only credential. Every item POST is saved at once
(annotation_submit) and answered directly with the page that comes next (the next item, the
finish page, or the done page), one request per answered item instead of a redirect and a
GET. The page carries its own address (`page_url`), which static/campaigns/address.js puts in
the address bar with history.replaceState, so reload, back and forward fetch that page with a
GET; its form posts to its own address explicitly, so the flow stays right without scripts. A
repeated POST (double click, a reload answered "resend") is harmless: a save is an upsert.
A rejected save is re-rendered with status 400, every message next to its question and all
answers kept. The save that answers the last unanswered item hands the assignment in (same
transaction) and answers with the done page and the completion code. The finish page lists what is
left when an earlier item is still unanswered, and its POST (assignment_submit) hands in
an assignment whose answers are all saved while it is still open. The
completion code appears only on the done page, once the assignment is submitted; when
the worker came from a platform it sends them back there (MTurk's externalSubmit form, or
an automatic redirect to the completion URL, e.g. Prolific's, with a button as fallback).

The forms carry a key bound to the assignment token instead of Django's CSRF cookie, which
a browser may not store inside MTurk's cross-site frame (forms.form_key_valid).
"""
from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urlencode, urlsplit

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import get_script_prefix, reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods

from ..errors import ServiceError
from ..models import Assignment, Worker
from ..pages.answer_provenance import provenance_from_post
from ..pages.fields import timer_seconds, timer_start
from ..pages.item import (
    blank_page_cacheable,
    display_html,
    form_expired,
    item_context,
    message_page,
)
from ..pages.language import activate_worker_language
from ..pages.skeleton import Same, render_filled
from ..schema import AnswerInvalid, campaign_schema, validate_answers
from ..schema.outputs import needs_shown_answers, order_seed, shown_answers
from ..work import (
    annotation_submit,
    assignment_by_token,
    assignment_entries,
    assignment_is_open,
    assignment_progress,
    assignment_submit,
    assignment_with_page,
    worker_assignment_cap,
    worker_assignment_count,
)
from ..work.completion import completion_code_for, completion_redirect_url
from .forms import (
    answers_from_post,
    clean_turk_submit_to,
    form_key,
    form_key_valid,
)

# Seconds the done page shows the code before it sends the worker back to the platform.
REDIRECT_PAUSE_SECONDS = 4

CLOSED_MESSAGES = {
    Assignment.Status.EXPIRED: gettext_lazy(
        "The time for this assignment ran out, so it was given back. The answers you saved "
        "are kept. You can start again from the study link."),
    Assignment.Status.RETURNED: gettext_lazy(
        "This assignment was returned. The answers you saved are kept."),
}


# The pages redirect to paths they have already reversed: HttpResponseRedirect, not
# shortcuts.redirect(), which first tries each path as a view name (a failing reverse on
# every claim and submit).
def item_url(assignment: Assignment, position: int) -> str:
    return _address("campaigns:item", assignment.token, position)


def finish_url(assignment: Assignment) -> str:
    return _address("campaigns:finish", assignment.token)


def done_url(assignment: Assignment) -> str:
    return _address("campaigns:done", assignment.token)


def entry_url(campaign) -> str:
    """The campaign's study link (its slug has the tokens' alphabet, or is reversed anew)."""
    return _address("campaigns:entry", campaign.slug)


_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,64}")  # campaigns.urls.TokenConverter's alphabet
_SAMPLE_TOKEN, _SAMPLE_POSITION = "tokenSample0", 987654


def _address(name: str, token: str, position: int | None = None) -> str:
    """reverse() of a worker page named by a token or slug, from its pattern reversed once per
    process (a page names several of these addresses; reverse() walks the URLconf each time)."""
    args = [token] if position is None else [token, position]
    if not _TOKEN.fullmatch(token) or not (position is None or 0 <= position <= 999999):
        return reverse(name, args=args)
    return _address_form(name, get_script_prefix(), len(args)).format(*args)


@lru_cache(maxsize=32)
def _address_form(name: str, script_prefix: str, n_args: int) -> str:
    sample = reverse(name, args=[_SAMPLE_TOKEN, _SAMPLE_POSITION][:n_args])
    form = sample.replace("{", "{{").replace("}", "}}").replace(_SAMPLE_TOKEN, "{0}", 1)
    return form.replace(str(_SAMPLE_POSITION), "{1}", 1) if n_args == 2 else form


def resume_url(assignment: Assignment) -> str:
    """Where a returning worker continues: the first unanswered item, else the finish page."""
    if assignment.status == Assignment.Status.SUBMITTED:
        return done_url(assignment)
    if getattr(assignment, "just_created", False):  # a fresh claim: nothing answered yet
        return item_url(assignment, 1)
    progress = assignment_progress(assignment=assignment)
    if progress.next_position is None:
        return finish_url(assignment)
    return item_url(assignment, progress.next_position)


def _binding(token: str) -> str:
    """What the item and finish forms' key is bound to: the assignment (its secret token)."""
    return f"assignment:{token}"


def _assignment_or_404(token: str, request: HttpRequest | None = None) -> Assignment:
    """The assignment; with `request`, the page switches to its campaign's language."""
    assignment = assignment_by_token(token=token)
    if assignment is None:
        raise Http404("No such assignment.")
    if request is not None:
        activate_worker_language(request, assignment.campaign)
    return assignment


def _closed(request: HttpRequest, assignment: Assignment, status: int = 200,
            message: str = "") -> HttpResponse:
    """A submitted assignment shows its code (under the done page's address); an expired or
    returned one says so."""
    if assignment.status == Assignment.Status.SUBMITTED:
        return _done(request, assignment, page_url=done_url(assignment))
    message = message or CLOSED_MESSAGES.get(assignment.status, CLOSED_MESSAGES["expired"])
    return message_page(request, heading=_("This assignment is closed"), message=message,
                        status=status, campaign=assignment.campaign,
                        link_url=entry_url(assignment.campaign),
                        link_text=_("Back to the study page"))


@csrf_exempt
@never_cache
@require_http_methods(["GET", "POST"])
def item_page(request: HttpRequest, token: str, position: int) -> HttpResponse:
    if request.method == "GET":
        return item_response(request, token, position)
    if not form_key_valid(request, _binding(token)):
        return form_expired(request)
    answers: dict = {}

    def read_answers(schema) -> dict:  # once the service has the campaign's schema
        answers.update(_with_order(schema, answers_from_post(schema.questions, request.POST),
                                   token, position))
        return answers

    try:
        saved = annotation_submit(
            token=token, position=position, answers=read_answers,
            seconds_spent=timer_seconds(request.POST.get("started")),
            provenance=lambda schema: provenance_from_post(schema, request.POST))
    except AnswerInvalid as exc:  # nothing saved: the page again, every answer kept
        assignment, page = assignment_with_page(token=token, position=position)
        if assignment is None or page is None:
            raise Http404("This assignment has no such item.") from None
        activate_worker_language(request, assignment.campaign)
        errors = _errors_in_page_language(assignment, page, answers) or exc.errors
        return _render_item(request, assignment, page, values=answers, errors=errors,
                            status=400)
    except ServiceError as exc:
        if exc.status == 404:
            raise Http404(exc.message) from None
        # Closed; a repeat of the final submit (double click) finds the work handed in and
        # goes to the code like the first one, nothing stored twice. Other answers posted to
        # handed-in work (a stale second tab) are not saved, and the page says so.
        assignment = _assignment_or_404(token, request)
        if (assignment.status == Assignment.Status.SUBMITTED
                and not _repeats_saved_answers(request, token, position)):
            return _not_saved(request, assignment)
        message = exc.message if assignment_is_open(assignment) else ""
        return _closed(request, assignment, status=409, message=message)
    assignment = saved.assignment
    if saved.handed_in:  # that was the last unanswered item: the work is in
        # The saved assignment carries its new status and completion code: no read again.
        return _done(request, assignment, page_url=done_url(assignment))
    # Saved: on to the next item; after the last position (earlier ones still unanswered,
    # the worker went back), the finish page lists what is left.
    total = assignment.item_count  # read with the assignment (items never change)
    if position < total:
        return item_response(request, token, position + 1, page_url=True)
    return _finish(request, assignment, page_url=finish_url(assignment))


def item_response(request: HttpRequest, token: str, position: int, *,
                  page_url: bool = False) -> HttpResponse:
    """The item page at `position` (one read), as a GET shows it or as the answer to a POST
    (`page_url`: the page then names its own address for the address bar)."""
    assignment, page = assignment_with_page(token=token, position=position)  # one read
    if assignment is None:
        raise Http404("No such assignment.")
    activate_worker_language(request, assignment.campaign)
    if not assignment_is_open(assignment):
        return _closed(request, assignment)
    if page is None:
        raise Http404("This assignment has no such item.")
    values = page.entry.annotation.answers if page.entry.annotation else None
    return _render_item(request, assignment, page, values=values, page_url=page_url)


def continue_response(request: HttpRequest, assignment: Assignment) -> HttpResponse:
    """The page where a worker continues their assignment (see resume_url), answered
    directly to the start POST: no redirect and GET between the claim and the first item.
    A new assignment brings its first item's page from the claim (no read again)."""
    page = getattr(assignment, "first_page", None)
    if page is not None:
        return _render_item(request, assignment, page, page_url=True)
    url = resume_url(assignment)
    if url == done_url(assignment):
        return _done(request, assignment, page_url=url)
    if url == finish_url(assignment):
        return _finish(request, assignment, page_url=url)
    position = int(url.rstrip("/").rsplit("/", 1)[1])
    return item_response(request, assignment.token, position, page_url=True)


def _errors_in_page_language(assignment: Assignment, page, answers: dict) -> dict:
    """The save's check again, now in the page's language (the save ran before the view knew
    the campaign); {} if it passes this time."""
    try:
        validate_answers(campaign_schema(assignment.campaign), answers,
                         page.entry.item.data)
    except AnswerInvalid as exc:
        return exc.errors
    return {}


def _repeats_saved_answers(request: HttpRequest, token: str, position: int) -> bool:
    """Do the posted answers equal the ones saved for this item (a repeated submit)?"""
    assignment, page = assignment_with_page(token=token, position=position)
    if page is None or page.entry.annotation is None:
        return False
    schema = campaign_schema(assignment.campaign)
    try:
        posted = validate_answers(schema, shown_answers(
            schema, answers_from_post(schema.questions, request.POST), page.entry.item, token),
            page.entry.item.data)
    except AnswerInvalid:
        return False
    return posted == page.entry.annotation.answers


def _not_saved(request: HttpRequest, assignment: Assignment) -> HttpResponse:
    return message_page(
        request, heading=_("Not saved: this work was already handed in"), status=409,
        message=_("The answers on this page were not saved, because this assignment was "
                  "already handed in (perhaps from another tab or window). Your earlier "
                  "answers are kept, and your completion code is on the next page."),
        campaign=assignment.campaign, link_url=done_url(assignment),
        link_text=_("Show my completion code"))


def _with_order(schema, answers: dict, token: str, position: int) -> dict:
    """The posted answers with the outputs' and options' order as this assignment showed them
    (read only for a schema with a question that judges several outputs or shuffles options)."""
    if not needs_shown_answers(schema):
        return answers
    _, page = assignment_with_page(token=token, position=position)
    return answers if page is None else shown_answers(schema, answers, page.entry.item, token)


def _render_item(request, assignment, page, *, values=None, errors=None, status=200,
                 page_url=False):
    """The item page; an unanswered one fills in the campaign's layout at this position
    (pages.skeleton) instead of rendering every question again."""
    position, item, campaign = page.entry.position, page.entry.item, assignment.campaign
    seed = order_seed(assignment.token, item.pk)
    schema = campaign_schema(campaign)
    action = item_url(assignment, position)  # posts here whichever URL answered with the page
    key = None
    if not values and not errors and blank_page_cacheable(schema):
        key = (campaign.pk, campaign.updated_at, campaign.name, campaign.instructions,
               campaign.examples, campaign.block_paste, campaign.block_copy,
               Same(schema), position, page.progress.total, page.progress.answered)

    def context() -> dict:
        return {**item_context(campaign=campaign, item=item, position=position,
                               total=page.progress.total, values=values, errors=errors,
                               order_seed=seed),
                "answered": page.progress.answered}  # the progress bar counts answers

    return render_filled(request, "campaigns/item.html", key=key, status=status, values={
        "display_html": display_html(schema, item, seed), "started": timer_start(),
        "form_key": form_key(_binding(assignment.token)), "form_action": action,
        "back_url": item_url(assignment, position - 1) if position > 1 else "",
        "page_url": action if page_url else ""}, context=context)


@csrf_exempt
@never_cache
@require_http_methods(["GET", "POST"])
def finish_page(request: HttpRequest, token: str) -> HttpResponse:
    """What is answered and what is left; its POST hands complete work in (assignment_submit)."""
    assignment = _assignment_or_404(token, request)
    if request.method == "POST" and not form_key_valid(request, _binding(token)):
        return form_expired(request, assignment.campaign)
    if assignment.status == Assignment.Status.SUBMITTED:
        return HttpResponseRedirect(done_url(assignment))
    message, status = "", 200
    if request.method == "POST":
        try:
            assignment_submit(assignment=assignment)
        except ServiceError as exc:
            message, status = exc.message, 409
        else:  # handed in: the code at once, under the done page's address
            return _done(request, assignment, page_url=done_url(assignment))
    return _finish(request, assignment, message=message, status=status)


def _finish(request: HttpRequest, assignment: Assignment, *, message: str = "",
            status: int = 200, page_url: str = "") -> HttpResponse:
    activate_worker_language(request, assignment.campaign)  # also when it answers a save
    entries = assignment_entries(assignment=assignment)
    complete = bool(entries) and all(e.answered for e in entries)
    # Work fully saved before the deadline passed can still be handed in (the engine allows
    # it); anything else that is no longer open gets the clear "closed" page.
    if not assignment_is_open(assignment) and not (
            complete and assignment.status in (Assignment.Status.ACTIVE,
                                               Assignment.Status.EXPIRED)):
        return _closed(request, assignment, status=status, message=message)
    rows = [{"position": e.position, "answered": e.answered,
             "url": item_url(assignment, e.position)} for e in entries]
    return render(request, "campaigns/finish.html", {
        "campaign": assignment.campaign, "rows": rows, "total": len(rows),
        "answered": sum(1 for r in rows if r["answered"]), "message": message,
        "finish_url": finish_url(assignment), "form_key": form_key(_binding(assignment.token)),
        "page_url": page_url,
    }, status=status)


def platform_name(url: str) -> str:
    host = urlsplit(url).hostname or ""
    return "Prolific" if host.endswith("prolific.com") or host.endswith("prolific.co") else host


@never_cache
@require_GET
def done_page(request: HttpRequest, token: str) -> HttpResponse:
    """The completion code, shown only once the assignment is submitted, and the way back."""
    assignment = _assignment_or_404(token, request)
    if assignment.status != Assignment.Status.SUBMITTED:
        if assignment_is_open(assignment):
            return HttpResponseRedirect(finish_url(assignment))
        return _closed(request, assignment)
    return _done(request, assignment)


def _done(request: HttpRequest, assignment: Assignment, *, page_url: str = "") -> HttpResponse:
    """The done page of a submitted assignment (`page_url` when it answers a POST), filled in
    per campaign and platform (pages.skeleton)."""
    campaign = assignment.campaign
    activate_worker_language(request, campaign)  # also when it answers the final save
    code = assignment.completion_code or completion_code_for(assignment)
    values = {"code": code, "page_url": page_url, "mturk_submit_url": "",
              "mturk_assignment_id": "", "redirect_url": "", "another_url": ""}
    submit_to = clean_turk_submit_to(assignment.turk_submit_to)
    if submit_to and assignment.mturk_assignment_id:
        values.update(mturk_submit_url=f"{submit_to}/mturk/externalSubmit",
                      mturk_assignment_id=assignment.mturk_assignment_id)
    else:
        values["redirect_url"] = completion_redirect_url(assignment, code) or ""
        if not values["redirect_url"]:
            values["another_url"] = _another_url(assignment)
    platform = platform_name(values["redirect_url"]) if values["redirect_url"] else ""
    return render_filled(
        request, "campaigns/done.html", key=(campaign.name, platform), values=values,
        context=lambda: {"campaign": campaign, "redirect_pause": REDIRECT_PAUSE_SECONDS,
                         "platform_name": platform})


def _another_url(assignment: Assignment) -> str:
    """The study link for one more assignment, when the campaign allows this worker more."""
    worker = assignment.worker
    if worker.platform == Worker.Platform.MTURK:
        return ""  # on MTurk, more work is another HIT accepted there
    cap = worker_assignment_cap(assignment.campaign, worker)
    if cap is not None and worker_assignment_count(worker=worker) >= cap:
        return ""
    params = {"more": "1"}
    if worker.platform == Worker.Platform.PROLIFIC:
        params = {"PROLIFIC_PID": worker.platform_id, "STUDY_ID": assignment.study_id,
                  "SESSION_ID": assignment.session_id, **params}
    return f"{entry_url(assignment.campaign)}?{urlencode(params)}"
