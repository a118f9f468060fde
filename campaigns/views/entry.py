"""The study link /c/<slug>/: instructions, consent and intake, then a claimed assignment.

Who the worker is comes from the platform's URL parameters (Prolific, MTurk) or, for a
plain link, from a long random signed cookie. GET never hands out work; POST starts, within
the start limits (annotate/http/ratelimit.py, start_retry_after). A worker who comes back
finds their open assignment, or the done page of their submitted one (same code, same way
back to the platform) unless they may and ask to do more; a platform id is not secret, so
that needs this browser's owner cookie or the platform's proof of the same session (_owns).
A Prolific link without a usable participant id, one whose participant id is not in the
platform's form, and an MTurk link whose turkSubmitTo is not MTurk's, get a page that says
so instead of a start.
"""
from __future__ import annotations

import math
import secrets

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from annotate.http.ratelimit import START_MESSAGE, start_retry_after, too_many_requests

from ..errors import (
    NotLive,
    NoWorkAvailable,
    QualificationRequired,
    ResumeRefused,
    ScreenedOut,
    ServiceError,
    WorkerLimitReached,
)
from ..models import Assignment, Campaign, Worker
from ..pages.fields import question_fields
from ..pages.item import campaign_texts, display_rows, form_expired, markdown_cached, message_page
from ..pages.language import activate_worker_language
from ..schema import AnswerInvalid, campaign_schema, parse_questions
from ..services.prolific_starts import prolific_participant_verified
from ..work import (
    assignment_claim,
    campaign_and_worker,
    campaign_next_release,
    study_size,
    worker_assignment_cap,
    worker_assignment_count,
    worker_get_or_create,
    worker_open_assignment,
    worker_record_consent,
    worker_record_intake,
    worker_submitted_assignment,
)
from ..work.claim import NOT_LIVE_MESSAGES
from ..work.completion import no_work_redirect_url
from .assignment import continue_response, done_url, entry_url, resume_url
from .forms import (
    FORM_KEY_FIELD,
    PlatformParams,
    answers_from_post,
    form_key,
    form_key_valid,
    platform_params,
)
from .qualification import test_continue_response
from .screening import screened_out_page

COOKIE_NAME = "annotate_wid"
COOKIE_SALT = "campaigns.link-worker"
COOKIE_MAX_AGE = 180 * 24 * 3600
# Set on the study link's path when a platform worker starts or resumes: this browser is the
# one that holds that worker's work (their signed worker id).
OWNER_COOKIE = "annotate_owner"
OWNER_SALT = "campaigns.owner"
CONSENT_REQUIRED = gettext_lazy("Please tick the box to agree before you start.")
# A study that is not open yet (or for now) shows a neutral page: not its name, description,
# instructions, examples or consent text, which its researcher has not published.
WITHHELD = (Campaign.Status.DRAFT, Campaign.Status.PAUSED)
Identity = tuple[str, str, str | None]
PLATFORM_ID_NAMES = {"prolific": ("Prolific", "PROLIFIC_PID"),
                     "mturk": ("Mechanical Turk", "workerId")}


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
    schema = campaign_schema(campaign)
    return {"display": display_rows(schema, item.data or {}), "questions": schema.questions}


def _page(request: HttpRequest, campaign: Campaign, params: PlatformParams, identity: Identity,
          *, worker: Worker | None = None, status: int = 200, **extra) -> HttpResponse:
    withheld = campaign.status in WITHHELD
    can_start = campaign.is_live and not params.preview
    intake_fields = []
    if can_start and campaign.intake_questions and (worker is None or worker.intake is None):
        intake_fields, _ = question_fields(parse_questions(campaign.intake_questions),
                                           values=extra.pop("intake_values", None),
                                           errors=extra.pop("intake_errors", None))
    context = {
        "campaign": campaign,
        "withheld": withheld,
        "preview": params.preview,
        "can_start": can_start,
        "hidden": {**params.hidden_fields(),
                   FORM_KEY_FIELD: form_key(_binding(campaign, identity))},
        "consent_html": "" if withheld else markdown_cached(campaign.consent_text or ""),
        "intake_fields": intake_fields,
        "sample": _sample(campaign) if params.preview and campaign.is_live else None,
        # Not live: a Prolific participant can still give the place back with the no-work code.
        "no_work_url": ("" if campaign.is_live
                        else no_work_redirect_url(campaign, params.platform)),
        **({} if withheld else campaign_texts(campaign)),
        **extra,
    }
    return render(request, "campaigns/entry.html", context, status=status)


# Worker pages are not protected by Django's cookie-based CSRF check, which fails inside
# MTurk's cross-site frame; each form carries a key instead (forms.form_key_valid).
@csrf_exempt
@never_cache
@require_http_methods(["GET", "POST"])
def campaign_entry(request: HttpRequest, slug: str) -> HttpResponse:
    data = request.POST if request.method == "POST" else request.GET
    params = platform_params(data)
    identity = _identity(request, params)
    platform, platform_id, new_cookie = identity
    # The campaign and, for a returning visitor, the worker in one read.
    campaign, worker = campaign_and_worker(slug=slug, platform=platform, platform_id=platform_id)
    if campaign is None:
        raise Http404("No such study.")
    activate_worker_language(request, campaign)
    named = None if campaign.status in WITHHELD else campaign  # pages that may show its name
    refused = _refused_link(request, campaign, params, named, worker)
    if refused is not None:
        return refused
    if request.method == "POST":
        if not form_key_valid(request, _binding(campaign, identity)):
            return form_expired(request, named)
        return _start(request, campaign, params, identity, worker, data)
    if params.preview:
        return _page(request, campaign, params, identity)
    if worker is not None and worker.screened_out_at is not None:  # the same outcome again
        return screened_out_page(request, campaign, worker.platform,
                                 reason=worker.screened_out_reason)
    if worker is not None:
        earlier = _earlier_assignment(campaign, params, worker, data)
        if earlier is not None:  # resume the open one, or show the submitted one's code
            return _resume(request, campaign, params, worker, earlier)
    if not campaign.is_live:
        return _page(request, campaign, params, identity)
    return _with_cookie(request, _page(request, campaign, params, identity, worker=worker),
                        new_cookie)


def _binding(campaign: Campaign, identity: Identity) -> str:
    """What the start form's key is bound to: this campaign and this visitor."""
    platform, platform_id, _ = identity
    return f"entry:{campaign.pk}:{platform}:{platform_id}"


def _refused_link(request: HttpRequest, campaign: Campaign, params: PlatformParams,
                  named: Campaign | None, worker: Worker | None) -> HttpResponse | None:
    """A page for a study link that cannot identify the worker on their platform (the demo's
    participant id is one only where demo_setup registered that worker)."""
    if params.turk_submit_to_refused:
        return message_page(
            request, heading=_("This link is not from Mechanical Turk"), status=400,
            campaign=named,
            message=_("Its turkSubmitTo is not Mechanical Turk's (https://www.mturk.com or "
                      "https://workersandbox.mturk.com), so finished work could not be sent "
                      "back. Please open the HIT from Mechanical Turk."))
    refused_platform = params.platform_id_refused or (
        "prolific" if params.demo_participant and worker is None else "")
    if refused_platform:
        name, field = PLATFORM_ID_NAMES[refused_platform]
        return message_page(
            request, heading=_("This link's %(platform)s ID is not valid") % {"platform": name},
            status=400, campaign=named,
            message=_("The %(field)s in this link is not in the form %(platform)s gives its "
                      "participants, so no work was handed out. Please open the study from "
                      "%(platform)s again; if this keeps happening, contact the researchers "
                      "there.") % {"field": field, "platform": name})
    prolific_expected = campaign.recruitment == Campaign.Recruitment.PROLIFIC
    if params.prolific_id_missing or (prolific_expected and not params.platform):
        return message_page(
            request, heading=_("Please open this study from Prolific"), status=400,
            campaign=named,
            message=_("This link has no Prolific ID in it, so your work could not be matched "
                      "to your submission or paid. Please go back to Prolific "
                      "(app.prolific.com) and open the study from there."))
    return None


def _owns(request: HttpRequest, params: PlatformParams, worker: Worker,
          assignment: Assignment) -> bool:
    """Whether this browser may continue `assignment` or see its code. Platform ids are not
    secret (anyone can type one into the link), so for Prolific and MTurk it takes this
    browser's owner cookie, or the platform's proof of the same session: Prolific's
    SESSION_ID or MTurk's assignmentId as sent when the assignment was claimed. A plain
    link's worker id is this browser's own signed cookie."""
    if worker.platform == Worker.Platform.LINK:
        return True
    cookie = request.get_signed_cookie(OWNER_COOKIE, default=None, salt=OWNER_SALT)
    if cookie == str(worker.pk):
        return True
    return bool((params.session_id and params.session_id == assignment.session_id)
                or (params.mturk_assignment_id
                    and params.mturk_assignment_id == assignment.mturk_assignment_id))


def _with_owner(request: HttpRequest, response: HttpResponse, campaign: Campaign,
                worker_id: int, platform: str) -> HttpResponse:
    """Mark this browser as the holder of a platform worker's work on this study."""
    if platform != Worker.Platform.LINK:
        response.set_signed_cookie(
            OWNER_COOKIE, str(worker_id), salt=OWNER_SALT, max_age=COOKIE_MAX_AGE,
            path=entry_url(campaign), httponly=True,
            samesite="Lax", secure=request.is_secure())
    return response


def _resume(request: HttpRequest, campaign: Campaign, params: PlatformParams, worker: Worker,
            assignment: Assignment) -> HttpResponse:
    """To the worker's earlier assignment, if this browser owns it; else a neutral page."""
    if not _owns(request, params, worker, assignment):
        return _not_owner(request, campaign, params)
    return _with_owner(request, HttpResponseRedirect(resume_url(assignment)), campaign,
                       worker.pk, worker.platform)


def _not_owner(request: HttpRequest, campaign: Campaign, params: PlatformParams) -> HttpResponse:
    name = PLATFORM_ID_NAMES.get(params.platform, (_("the platform"), ""))[0]
    return message_page(
        request, heading=_("Please continue where you started"), status=403, campaign=campaign,
        message=_("Work for this participant was started in another browser or session. "
                  "Please continue in the browser where you started, or open the study again "
                  "from %(platform)s. Work that is not continued is given back after a "
                  "while.") % {"platform": name})


def _wants_more(params: PlatformParams, submitted: Assignment, data) -> bool:
    """Whether a worker with submitted work asks for another assignment: a new HIT
    assignment on MTurk, or the done page's "another" link (more=1)."""
    if params.platform == Worker.Platform.MTURK:
        return bool(params.mturk_assignment_id) and (
            params.mturk_assignment_id != submitted.mturk_assignment_id)
    return data.get("more") == "1"


def _may_do_more(campaign: Campaign, worker: Worker) -> bool:
    cap = worker_assignment_cap(campaign, worker)
    return cap is None or worker_assignment_count(worker=worker) < cap


def _earlier_assignment(campaign: Campaign, params: PlatformParams, worker: Worker,
                        data) -> Assignment | None:
    """The assignment a returning worker goes back to: the open one, else the submitted one
    (its done page) unless the campaign allows more for this worker and they ask for it."""
    current = worker_open_assignment(worker=worker)
    if current is not None:
        return current
    submitted = worker_submitted_assignment(worker=worker)
    if submitted is None:
        return None
    if _wants_more(params, submitted, data) and _may_do_more(campaign, worker):
        return None
    return submitted


def _start(request: HttpRequest, campaign: Campaign, params: PlatformParams,
           identity: Identity, worker: Worker | None, data) -> HttpResponse:
    """Consent, then intake (once per worker), then claim; any refusal re-renders the page."""
    if params.preview:
        return _page(request, campaign, params, identity, status=400,
                     message=_("Please accept the HIT on Mechanical Turk before starting."))
    platform, platform_id, new_cookie = identity
    if campaign.status in WITHHELD:
        return _page(request, campaign, params, identity, status=NotLive.status)
    if not campaign.is_live:
        not_live = NotLive(NOT_LIVE_MESSAGES.get(str(campaign.status),
                                                 NOT_LIVE_MESSAGES["closed"]))
        return _no_work(request, campaign, params, not_live, worker, data)
    consented = request.POST.get("consent") == "yes"
    if campaign.consent_text and not consented:
        return _with_cookie(request, _page(request, campaign, params, identity, status=400,
                                           consent_error=CONSENT_REQUIRED), new_cookie)
    retry_after = start_retry_after(request, campaign_id=campaign.pk,
                                    worker_key=f"{platform}:{platform_id}",
                                    newcomer=worker is None,
                                    study_size=study_size(campaign) if worker is None else 0)
    if retry_after is not None:  # nothing created, nothing claimed
        return too_many_requests(request, retry_after, "start", START_MESSAGE)
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
                    request, campaign, params, identity, status=400, consent_checked=consented,
                    intake_values=answers, intake_errors=exc.errors), new_cookie)
        owner = worker  # the open assignment is resumed only for its browser or session
        assignment = assignment_claim(
            campaign=campaign, worker=worker, platform_ids=params.claim_kwargs(),
            may_resume=lambda current: _owns(request, params, owner, current),
            max_items=_unvouched_items(params))
    except ResumeRefused:
        return _not_owner(request, campaign, params)
    except QualificationRequired as exc:  # the test first: nothing claimed, no slot held
        if not _owns(request, params, worker, exc.qualification):
            return _not_owner(request, campaign, params)
        response = _with_owner(request, test_continue_response(request, exc.qualification),
                               campaign, worker.pk, platform)
        return _with_cookie(request, response, new_cookie)
    except ScreenedOut as exc:  # nothing claimed, no slot held
        return _with_cookie(request, screened_out_page(
            request, campaign, platform, reason=exc.extra.get("reason", "")), new_cookie)
    except ServiceError as exc:
        return _with_cookie(request, _no_work(request, campaign, params, exc, worker, data),
                            new_cookie)
    # The first item (or wherever the worker continues) at once, not a redirect to it.
    response = _with_owner(request, continue_response(request, assignment), campaign,
                           worker.pk, platform)
    return _with_cookie(request, response, new_cookie)


def _unvouched_items(params: PlatformParams) -> int | None:
    """A Prolific start whose submission Prolific does not confirm (with the researcher's
    token configured) gets a first item only: a made-up participant id holds one slot, for the
    first-answer hold, instead of a whole assignment's. None: no limit."""
    if params.platform != Worker.Platform.PROLIFIC:
        return None
    verified = prolific_participant_verified(participant_id=params.platform_id,
                                             study_id=params.study_id,
                                             session_id=params.session_id)
    return 1 if verified is False else None


def _no_work(request: HttpRequest, campaign: Campaign, params: PlatformParams,
             exc: ServiceError, worker: Worker | None, data) -> HttpResponse:
    """No assignment for this worker: their earlier code if they already finished, else
    whether to wait (how long) or to give their place back on the platform."""
    if isinstance(exc, WorkerLimitReached) and worker is not None:
        submitted = worker_submitted_assignment(worker=worker)
        if submitted is not None and not _wants_more(params, submitted, data):
            if not _owns(request, params, worker, submitted):
                return _not_owner(request, campaign, params)
            return HttpResponseRedirect(done_url(submitted))
    wait_minutes = None
    if isinstance(exc, NoWorkAvailable):
        release = campaign_next_release(campaign=campaign)
        if release is not None:
            wait_minutes = max(1, math.ceil((release - timezone.now()).total_seconds() / 60))
    # Messages of the hot path are marked for translation where they are written.
    context = {"campaign": campaign, "message": _(str(exc.message)),
               "wait_minutes": wait_minutes,
               "platform": params.platform,
               "no_work_code": campaign.completion_code_no_work,
               "no_work_url": no_work_redirect_url(campaign, params.platform)}
    return render(request, "campaigns/no_work.html", context,
                  status=exc.status if exc.status < 500 else 409)
