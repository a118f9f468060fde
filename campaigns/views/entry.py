"""The study link /c/<slug>/: instructions, consent and intake, then a claimed assignment.

Who the worker is comes from the platform's URL parameters (Prolific, MTurk) or, for a
plain link, from a long random signed cookie. GET never hands out work; POST starts.
"""
from __future__ import annotations

import secrets
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from ..errors import ServiceError
from ..models import Campaign, Worker
from ..schema import AnswerInvalid, parse_questions, parse_schema_cached
from ..work import (
    assignment_claim,
    campaign_and_worker,
    worker_get_or_create,
    worker_open_assignment,
    worker_record_consent,
    worker_record_intake,
)
from .assignment import resume_url
from .forms import PlatformParams, answers_from_post, platform_params, question_fields
from .pages import (
    campaign_texts,
    display_rows,
    markdown_cached,
    message_page,
    mturk_frameable,
)

COOKIE_NAME = "annotate_wid"
COOKIE_SALT = "campaigns.link-worker"
COOKIE_MAX_AGE = 180 * 24 * 3600
CONSENT_REQUIRED = "Please tick the box to agree before you start."


def _identity(request: HttpRequest, params: PlatformParams) -> tuple[str, str, str | None]:
    """(platform, platform_id, new cookie value or None) for this visitor."""
    if params.platform:
        return params.platform, params.platform_id, None
    value = request.get_signed_cookie(COOKIE_NAME, default=None, salt=COOKIE_SALT)
    if value:
        return Worker.Platform.LINK, value, None
    value = secrets.token_urlsafe(32)
    return Worker.Platform.LINK, value, value


def _with_cookie(request: HttpRequest, response: HttpResponse, value: str | None) -> HttpResponse:
    if value:
        response.set_signed_cookie(COOKIE_NAME, value, salt=COOKIE_SALT, max_age=COOKIE_MAX_AGE,
                                   httponly=True, samesite="Lax", secure=request.is_secure())
    return response


def _sample(campaign: Campaign) -> dict | None:
    """A regular item to show in an MTurk preview (nothing is claimed)."""
    item = campaign.items.filter(control="").order_by("id").first()
    if item is None:
        return None
    schema = parse_schema_cached(campaign.schema)
    return {"display": display_rows(schema, item.data or {}), "questions": schema.questions}


def _page(request: HttpRequest, campaign: Campaign, params: PlatformParams, *,
          worker: Worker | None = None, status: int = 200, **extra) -> HttpResponse:
    can_start = campaign.is_live and not params.preview
    intake_fields = []
    if can_start and campaign.intake_questions and (worker is None or worker.intake is None):
        intake_fields, _ = question_fields(parse_questions(campaign.intake_questions),
                                           values=extra.pop("intake_values", None),
                                           errors=extra.pop("intake_errors", None))
    context = {
        "campaign": campaign,
        "preview": params.preview,
        "can_start": can_start,
        "hidden": params.hidden_fields(),
        "consent_html": markdown_cached(campaign.consent_text or ""),
        "intake_fields": intake_fields,
        "sample": _sample(campaign) if params.preview and campaign.is_live else None,
        # Inside MTurk's iframe the browser may withhold cookies (CSRF); a tab of its own works.
        "new_tab_url": (f"{request.path}?{urlencode(params.hidden_fields())}"
                        if can_start and params.platform == "mturk" else ""),
        **campaign_texts(campaign),
        **extra,
    }
    return render(request, "campaigns/entry.html", context, status=status)


@mturk_frameable
@never_cache
@require_http_methods(["GET", "POST"])
def campaign_entry(request: HttpRequest, slug: str) -> HttpResponse:
    params = platform_params(request.POST if request.method == "POST" else request.GET)
    identity = _identity(request, params)
    platform, platform_id, new_cookie = identity
    # The campaign and, for a returning visitor, the worker in one read.
    campaign, worker = campaign_and_worker(slug=slug, platform=platform, platform_id=platform_id)
    if campaign is None:
        raise Http404("No such study.")
    if request.method == "POST":
        return _start(request, campaign, params, identity, worker)
    if params.preview or not campaign.is_live:
        return _page(request, campaign, params)
    if worker is not None:
        current = worker_open_assignment(worker=worker)
        if current:  # the same link or platform id resumes the open assignment
            return HttpResponseRedirect(resume_url(current))
    return _with_cookie(request, _page(request, campaign, params, worker=worker), new_cookie)


def _start(request: HttpRequest, campaign: Campaign, params: PlatformParams,
           identity: tuple[str, str, str | None], worker: Worker | None) -> HttpResponse:
    """Consent, then intake (once per worker), then claim; any refusal re-renders the page."""
    if params.preview:
        return _page(request, campaign, params, status=400,
                     message="Please accept the HIT on Mechanical Turk before starting.")
    if not campaign.is_live:
        return _page(request, campaign, params, status=409)
    platform, platform_id, new_cookie = identity
    consented = request.POST.get("consent") == "yes"
    if campaign.consent_text and not consented:
        return _with_cookie(request, _page(request, campaign, params, status=400,
                                           consent_error=CONSENT_REQUIRED), new_cookie)
    try:
        worker = worker or worker_get_or_create(campaign=campaign, platform=platform,
                                                platform_id=platform_id)
        if campaign.consent_text:
            worker_record_consent(worker=worker)
        if campaign.intake_questions and worker.intake is None:
            answers = answers_from_post(parse_questions(campaign.intake_questions), request.POST)
            try:
                worker_record_intake(worker=worker, answers=answers)
            except AnswerInvalid as exc:
                return _with_cookie(request, _page(
                    request, campaign, params, status=400, consent_checked=consented,
                    intake_values=answers, intake_errors=exc.errors), new_cookie)
        assignment = assignment_claim(campaign=campaign, worker=worker,
                                      platform_ids=params.claim_kwargs())
    except ServiceError as exc:
        response = message_page(request, heading="No work right now", message=exc.message,
                                status=exc.status if exc.status < 500 else 409,
                                campaign=campaign)
        return _with_cookie(request, response, new_cookie)
    return _with_cookie(request, HttpResponseRedirect(resume_url(assignment)), new_cookie)
