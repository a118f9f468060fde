"""Completion codes: a signed code per assignment, or the study's code for each outcome.

A per-assignment code is stored on the assignment when it is handed in; researchers match
the codes workers report against the export. A Prolific study instead checks the code
against the completion codes configured on the study: one for completed work, and
optionally one for participants who failed attention checks and one for participants who
found no work to do.
"""
from __future__ import annotations

import base64
from urllib.parse import quote

from django.utils.crypto import salted_hmac

from ..analysis import ATTENTION_FAILURES_TO_FLAG
from ..models import Annotation, Assignment, Campaign, Item, Worker

__all__ = ["CODE_LENGTH", "FAILED_CHECKS_TO_FLAG", "PROLIFIC_COMPLETE_URL",
           "completion_code_for", "completion_redirect_url", "failed_attention_checks",
           "no_work_redirect_url", "outcome_depends_on_checks", "screened_out_code",
           "screened_out_redirect_url"]

CODE_LENGTH = 12  # base32 (A-Z, 2-7; no 0/1/8/9 to confuse): 60 bits, short enough to type
_SALT = "campaigns.completion_code"
FAILED_CHECKS_TO_FLAG = ATTENTION_FAILURES_TO_FLAG
PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc={code}"


def _signed_code(assignment: Assignment) -> str:
    # HMAC keyed by SECRET_KEY over the id and the unguessable token: nobody can mint a
    # valid code for an assignment without the server, and codes differ per assignment.
    mac = salted_hmac(_SALT, f"{assignment.pk}:{assignment.token}", algorithm="sha256")
    return base64.b32encode(mac.digest()).decode()[:CODE_LENGTH]


def completion_code_for(assignment: Assignment, *, failed_checks: int = 0) -> str:
    """The code a worker receives for this assignment (show it only once it is submitted).

    `failed_checks` is the number of attention checks the assignment failed: from
    FAILED_CHECKS_TO_FLAG on, a campaign with a failed-checks code gives that code.
    """
    campaign = assignment.campaign
    if campaign.completion_code_failed_checks and failed_checks >= FAILED_CHECKS_TO_FLAG:
        return campaign.completion_code_failed_checks
    if campaign.completion_mode == Campaign.CompletionMode.FIXED:
        return campaign.completion_code
    return _signed_code(assignment)


def outcome_depends_on_checks(campaign: Campaign) -> bool:
    """Whether the code depends on the attention checks (worth a query at hand-in)."""
    return bool(campaign.completion_code_failed_checks
                and campaign.attention_checks_per_assignment)


def failed_attention_checks(assignment_id: int) -> int:
    return Annotation.objects.filter(assignment_id=assignment_id, control_passed=False,
                                     item__control=Item.Control.ATTENTION).count()


def _redirect_template(campaign: Campaign, platform: str) -> str:
    """The completion URL with {code}: the campaign's, else Prolific's for its participants."""
    if campaign.completion_redirect_url:
        return campaign.completion_redirect_url
    if platform == Worker.Platform.PROLIFIC:
        return PROLIFIC_COMPLETE_URL
    return ""


def completion_redirect_url(assignment: Assignment, code: str) -> str:
    """Where the done page sends the worker back with `code` ('' when nowhere)."""
    template = _redirect_template(assignment.campaign, assignment.worker.platform)
    return template.replace("{code}", quote(code)) if template and code else ""


def no_work_redirect_url(campaign: Campaign, platform: str) -> str:
    """The study's "no work" completion URL for a participant who found nothing to do."""
    template = _redirect_template(campaign, platform)
    code = campaign.completion_code_no_work
    return template.replace("{code}", quote(code)) if template and code else ""


def screened_out_code(campaign: Campaign, reason: str = "") -> str:
    """The study's code for a screened-out participant: a failed qualification test gives
    the failed-checks code (else the screened-out code), the intake's rules the screened-out
    code; '' when the study has none."""
    if reason == "qualification" and campaign.completion_code_failed_checks:
        return campaign.completion_code_failed_checks
    return campaign.completion_code_screened_out


def screened_out_redirect_url(campaign: Campaign, platform: str, reason: str = "") -> str:
    """The study's screened-out completion URL (Prolific's screen-out flow), or ''."""
    template = _redirect_template(campaign, platform)
    code = screened_out_code(campaign, reason)
    return template.replace("{code}", quote(code)) if template and code else ""
