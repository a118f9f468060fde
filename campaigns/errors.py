"""The one application error type: services raise it, views/API/admin render it."""
from __future__ import annotations


class ServiceError(Exception):
    """A rule of the domain was broken; `code` is stable, `message` is for people.

    `status` is the HTTP status an API or page should answer with; `extra` carries details
    (row-numbered import errors, schema paths, ...).
    """

    code = "error"
    status = 400

    def __init__(self, message: str, *, code: str | None = None, status: int | None = None,
                 extra: dict | None = None):
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        if status:
            self.status = status
        self.extra = extra or {}


class NotLive(ServiceError):
    code, status = "campaign_not_live", 409


class NoWorkAvailable(ServiceError):
    code, status = "no_work_available", 409


class WorkerLimitReached(ServiceError):
    code, status = "worker_limit_reached", 409


class ResumeRefused(ServiceError):
    """The worker has open work that the caller may not continue (another browser's)."""

    code, status = "resume_refused", 403


class Conflict(ServiceError):
    code, status = "conflict", 409


class ScreenedOut(ServiceError):
    """The worker's intake answers make them ineligible, or their quota is full: no work on
    this campaign, now or later (`reason`: "ineligible:<question id>" or "quota:<id>")."""

    code, status = "screened_out", 403


class QualificationRequired(ServiceError):
    """The worker takes the campaign's qualification test before any work is handed out
    (`qualification`: their test, campaigns/work/qualification.py)."""

    code, status = "qualification_required", 403

    def __init__(self, qualification):
        super().__init__("Please take the short qualification test first.")
        self.qualification = qualification
