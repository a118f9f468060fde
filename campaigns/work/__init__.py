"""The worker's hot path: claiming work, saving answers, handing in, expiry (see README.md)."""
from ..schema.scoring import answer_values, control_passed
from .answers import AnnotationSaved, annotation_submit
from .claim import PLATFORM_ID_FIELDS, assignment_claim, worker_assignment_cap
from .expiry import assignment_answered, assignment_release, assignments_expire
from .handin import assignment_is_open, assignment_submit, campaign_close_if_full
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
    campaign_next_release,
    study_size,
    worker_assignment_count,
    worker_by_platform_id,
    worker_open_assignment,
    worker_submitted_assignment,
)
from .workers import (
    DEMO_PARTICIPANT_ID,
    worker_get_or_create,
    worker_record_consent,
    worker_record_intake,
)

__all__ = [
    "DEMO_PARTICIPANT_ID",
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
    "assignment_answered",
    "assignment_progress",
    "assignment_release",
    "assignment_submit",
    "assignment_with_page",
    "assignments_expire",
    "campaign_and_worker",
    "campaign_close_if_full",
    "campaign_next_release",
    "control_passed",
    "for_update",
    "study_size",
    "worker_assignment_cap",
    "worker_assignment_count",
    "worker_by_platform_id",
    "worker_get_or_create",
    "worker_open_assignment",
    "worker_submitted_assignment",
    "worker_record_consent",
    "worker_record_intake",
]
