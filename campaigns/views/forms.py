"""Worker forms: read answers from a POST through each question kind, the forms' key, and the
platform's URL parameters.

Answers are read with each kind's `form_value()` and checked by the schema engine
(`validate_answers`) in the services; nothing from `request.POST` reaches the ORM unchecked.
How the questions are laid out for the page is campaigns/pages/fields.py.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.http import HttpRequest
from django.utils.crypto import constant_time_compare, salted_hmac
from django.utils.translation import gettext_lazy

from ..schema import AnswerInvalid, BaseQuestion
from ..schema.base import field_name
from ..work.workers import DEMO_PARTICIPANT_ID

MTURK_SUBMIT_HOSTS = ("www.mturk.com", "workersandbox.mturk.com")
FORM_KEY_FIELD = "form_key"
FORM_KEY_SALT = "campaigns.worker-form"
PROLIFIC_KEYS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")


def answers_from_post(questions: list[BaseQuestion], post) -> dict[str, Any]:
    """The raw answers of a submitted page, one per question id (unanswered ones left out).

    A value the database cannot store (a NUL character) or that a kind cannot read (a
    malformed number in a hidden field) makes the page invalid (AnswerInvalid, a 400 with
    the message next to its question), never a server error.
    """
    answers, errors = {}, {}
    for q in questions:
        name = field_name(q.id)
        own = [v for key, values in post.lists()
               if key.split(".")[0].split("__")[0] == name for v in values]
        if any("\x00" in v for v in own):
            errors[q.id] = gettext_lazy(
                "This answer contains a NUL character, which cannot be stored.")
            continue
        try:
            value = q.form_value(post, name)
        except (ValueError, OverflowError, TypeError):
            errors[q.id] = gettext_lazy("This answer could not be read; please answer again.")
            continue
        if value is not None:
            answers[q.id] = value
    if errors:
        raise AnswerInvalid(errors)
    return answers


# --- the worker forms' key: CSRF protection without a cookie --------------------------------
# Inside MTurk's cross-site iframe the browser may store no cookie at all (SameSite=Lax, or
# third-party cookies blocked), so Django's cookie-based CSRF check would refuse every start
# and every answer there. Each worker form instead carries a key that is an HMAC of what the
# form acts on: the assignment token (a secret in the URL), or the campaign and the worker's
# identity (a secret cookie for plain links). A page on another site cannot compute it.

def form_key(binding: str) -> str:
    """The hidden `form_key` value for a form bound to `binding`."""
    return salted_hmac(FORM_KEY_SALT, binding, algorithm="sha256").hexdigest()[:40]


def form_key_valid(request: HttpRequest, binding: str) -> bool:
    """Whether the POST carries the key of `binding`.

    Django's test client marks its requests exempt from CSRF checks unless a test asks for
    them (enforce_csrf_checks=True); this check honours the same flag.
    """
    if getattr(request, "_dont_enforce_csrf_checks", False):
        return True
    return constant_time_compare(request.POST.get(FORM_KEY_FIELD, ""), form_key(binding))


# --- platform parameters --------------------------------------------------------------------

@dataclass(frozen=True)
class PlatformParams:
    """Who is asking, as the platform's URL parameters say (empty platform: a plain link)."""

    platform: str = ""
    platform_id: str = ""
    study_id: str = ""
    session_id: str = ""
    mturk_assignment_id: str = ""
    mturk_hit_id: str = ""
    turk_submit_to: str = ""
    preview: bool = False
    # Prolific's parameters came without a usable participant id (empty, a placeholder such
    # as {{%PROLIFIC_PID%}} left unsubstituted, or STUDY_ID alone).
    prolific_id_missing: bool = False
    # The demo's participant id (work.DEMO_PARTICIPANT_ID): accepted only where it is registered.
    demo_participant: bool = False
    # turkSubmitTo was given but is not one of MTurk's hosts (the done page would post there).
    turk_submit_to_refused: bool = False
    # The platform whose participant id came in a form that platform never issues ('' if none).
    platform_id_refused: str = ""

    def hidden_fields(self) -> dict[str, str]:
        """The parameters to carry from the entry page to the start POST."""
        if self.platform == "prolific":
            return {"PROLIFIC_PID": self.platform_id, "STUDY_ID": self.study_id,
                    "SESSION_ID": self.session_id}
        if self.platform == "mturk":
            return {"workerId": self.platform_id, "assignmentId": self.mturk_assignment_id,
                    "hitId": self.mturk_hit_id, "turkSubmitTo": self.turk_submit_to}
        return {}

    def claim_kwargs(self) -> dict[str, str]:
        return {"study_id": self.study_id, "session_id": self.session_id,
                "mturk_assignment_id": self.mturk_assignment_id,
                "mturk_hit_id": self.mturk_hit_id, "turk_submit_to": self.turk_submit_to}


_ID_OK = re.compile(r"^[A-Za-z0-9_.:@-]{1,200}$")


def _clean_id(value: str | None) -> str:
    value = (value or "").strip()
    return value if _ID_OK.match(value) else ""


def clean_turk_submit_to(value: str | None) -> str:
    """Only MTurk's own submit hosts (production or sandbox), over https; else ''."""
    value = (value or "").strip().rstrip("/")
    parts = urlsplit(value)
    if parts.scheme == "https" and parts.hostname in MTURK_SUBMIT_HOSTS and not parts.query:
        return f"https://{parts.hostname}"
    return ""


# The participant ids the platforms issue: Prolific's are 24 hexadecimal characters (like its
# study and session ids), MTurk's worker ids an A and 12 to 20 capitals and digits. Any other
# id is made up, and a loop of made-up ids is how a script would hoard a campaign's work.
PROLIFIC_PID_SHAPE = re.compile(r"^[0-9a-f]{24}$")
MTURK_WORKER_ID_SHAPE = re.compile(r"^A[A-Z0-9]{12,20}$")


def platform_params(data) -> PlatformParams:
    """Prolific or MTurk parameters from a QueryDict; ids outside a safe alphabet are dropped,
    and a participant id not in its platform's form is refused (platform_id_refused)."""
    if data.get("assignmentId") == "ASSIGNMENT_ID_NOT_AVAILABLE":
        return PlatformParams(platform="mturk", preview=True)
    pid = _clean_id(data.get("PROLIFIC_PID")).lower()  # one participant, however spelt
    if pid == DEMO_PARTICIPANT_ID:
        return PlatformParams(platform="prolific", platform_id=pid, demo_participant=True,
                              study_id=_clean_id(data.get("STUDY_ID")),
                              session_id=_clean_id(data.get("SESSION_ID")))
    if pid and not PROLIFIC_PID_SHAPE.match(pid):
        return PlatformParams(platform_id_refused="prolific")
    if pid:
        return PlatformParams(platform="prolific", platform_id=pid,
                              study_id=_clean_id(data.get("STUDY_ID")),
                              session_id=_clean_id(data.get("SESSION_ID")))
    worker_id = _clean_id(data.get("workerId"))
    if worker_id and not MTURK_WORKER_ID_SHAPE.match(worker_id):
        return PlatformParams(platform_id_refused="mturk")
    if worker_id:
        submit_to = clean_turk_submit_to(data.get("turkSubmitTo"))
        return PlatformParams(platform="mturk", platform_id=worker_id,
                              mturk_assignment_id=_clean_id(data.get("assignmentId")),
                              mturk_hit_id=_clean_id(data.get("hitId")),
                              turk_submit_to=submit_to,
                              turk_submit_to_refused=bool(data.get("turkSubmitTo"))
                              and not submit_to)
    return PlatformParams(prolific_id_missing=any(key in data for key in PROLIFIC_KEYS))
