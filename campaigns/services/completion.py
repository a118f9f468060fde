"""Completion codes: a signed code per assignment, or the campaign's one fixed code."""
from __future__ import annotations

import base64
import re

from django.utils.crypto import constant_time_compare, salted_hmac

from ..models import Assignment, Campaign

__all__ = ["CODE_LENGTH", "completion_code_for", "completion_code_verify"]

CODE_LENGTH = 12  # base32 (A-Z, 2-7; no 0/1/8/9 to confuse): 60 bits, short enough to type
_SALT = "campaigns.completion_code"


def _signed_code(assignment: Assignment) -> str:
    # HMAC keyed by SECRET_KEY over the id and the unguessable token: nobody can mint a
    # valid code for an assignment without the server, and codes differ per assignment.
    mac = salted_hmac(_SALT, f"{assignment.pk}:{assignment.token}", algorithm="sha256")
    return base64.b32encode(mac.digest()).decode()[:CODE_LENGTH]


def completion_code_for(assignment: Assignment) -> str:
    """The code a worker receives for this assignment (show it only once it is submitted)."""
    campaign = assignment.campaign
    if campaign.completion_mode == Campaign.CompletionMode.FIXED:
        return campaign.completion_code
    return _signed_code(assignment)


def _normalise(code: str) -> str:
    return re.sub(r"[\s-]", "", code or "").upper()


def completion_code_verify(*, campaign: Campaign, code: str) -> Assignment | None:
    """The submitted assignment of `campaign` this per-assignment code belongs to, or None.

    Spaces, dashes and case are ignored (workers retype codes). A fixed campaign code names
    no assignment, so it verifies to None; check it against campaign.completion_code.
    """
    code = _normalise(code)
    if len(code) != CODE_LENGTH:
        return None
    assignment = (Assignment.objects.filter(campaign=campaign, completion_code=code,
                                            status=Assignment.Status.SUBMITTED)
                  .select_related("campaign").first())
    if assignment is None or not constant_time_compare(_signed_code(assignment), code):
        return None
    return assignment
