"""Completion codes: a signed code per assignment, or the campaign's one fixed code.

A per-assignment code is stored on the assignment when it is handed in; researchers match
the codes workers report against the export.
"""
from __future__ import annotations

import base64

from django.utils.crypto import salted_hmac

from ..models import Assignment, Campaign

__all__ = ["CODE_LENGTH", "completion_code_for"]

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
