"""Whether a Prolific start is a real submission of the study, asked of Prolific's API with the
researcher's token (PROLIFIC_API_TOKEN), before a participant is handed more than a first item:

    GET /api/v1/submissions/<SESSION_ID>/   (Authorization: Token <token>)
    -> {"id", "participant", "study_id", "status", "started_at", ...}; 404 for an unknown id

Through the egress policy (PROLIFIC_API_URL is the operator's origin; a stand-in in tests).
Kept apart from prolific.py, whose approvals import the analysis packages: the study link's
view imports this module.
"""
from __future__ import annotations

import json
import logging

from django.conf import settings
from django.core.cache import cache

from annotate.http import egress

logger = logging.getLogger(__name__)

# A participant's place is real once Prolific lists their submission of the study: reserved
# (the place is theirs) or active (they started).
LIVE_SUBMISSION = ("RESERVED", "ACTIVE")
CHECK_SECONDS = 3.0  # the participant waits on this at the start
VERIFIED_CACHE_SECONDS = 3600


def prolific_participant_verified(*, participant_id: str, study_id: str,
                                  session_id: str) -> bool | None:
    """Whether Prolific has a live submission `session_id` of study `study_id` by
    `participant_id` (GET /api/v1/submissions/<SESSION_ID>/ with the researcher's token,
    PROLIFIC_API_TOKEN); None when no token is configured (nothing is checked). Prolific
    unreachable, slow or answering anything but that submission counts as not verified.
    A verified session is remembered for an hour (a returning participant is not asked
    again)."""
    token = getattr(settings, "PROLIFIC_API_TOKEN", "") or ""
    if not token:
        return None
    if not (participant_id and study_id and session_id) or len(session_id) > 64 \
            or not session_id.isalnum():
        return False
    key = f"prolific-verified:{session_id}:{participant_id}:{study_id}"
    if cache.get(key):
        return True
    url = f"{settings.PROLIFIC_API_URL.rstrip('/')}/api/v1/submissions/{session_id}/"
    try:
        answer = egress.request("GET", url, body=None, deadline_seconds=CHECK_SECONDS,
                                max_bytes=64 * 1024,
                                headers={"Authorization": f"Token {token}",
                                         "Accept": "application/json"})
        submission = json.loads(answer.body) if answer.status == 200 else {}
    except (egress.EgressRefused, egress.EgressFailed, ValueError, RecursionError) as exc:
        logger.warning("Prolific submission check failed: %s", type(exc).__name__)
        return False
    verified = (isinstance(submission, dict) and submission.get("participant") == participant_id
                and submission.get("study_id") == study_id
                and submission.get("status") in LIVE_SUBMISSION)
    if verified:
        cache.set(key, True, VERIFIED_CACHE_SECONDS)
    return bool(verified)
