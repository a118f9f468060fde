"""The worker's hot path: claiming work, saving answers, handing in, expiry (see README.md)."""
from .answers import AnnotationSaved, annotation_submit, answer_values, control_passed
from .claim import PLATFORM_ID_FIELDS, assignment_claim
from .expiry import assignments_expire
from .handin import assignment_is_open, assignment_submit
from .locking import for_update
from .reads import (
    AssignmentEntry,
    AssignmentPage,
    Progress,
    assignment_by_token,
    assignment_entries,
    assignment_progress,
    assignment_with_page,
    campaign_and_worker,
    worker_by_platform_id,
    worker_open_assignment,
)
from .workers import worker_get_or_create, worker_record_consent, worker_record_intake

__all__ = [
    "PLATFORM_ID_FIELDS",
    "AnnotationSaved",
    "AssignmentEntry",
    "AssignmentPage",
    "Progress",
    "annotation_submit",
    "answer_values",
    "assignment_by_token",
    "assignment_claim",
    "assignment_entries",
    "assignment_is_open",
    "assignment_progress",
    "assignment_submit",
    "assignment_with_page",
    "assignments_expire",
    "campaign_and_worker",
    "control_passed",
    "for_update",
    "worker_by_platform_id",
    "worker_get_or_create",
    "worker_open_assignment",
    "worker_record_consent",
    "worker_record_intake",
]
