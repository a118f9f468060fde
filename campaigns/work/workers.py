"""The worker as seen by one campaign: found or created on first sight, intake, consent."""
from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from ..errors import ServiceError
from ..models import Campaign, Worker
from ..schema import SchemaInvalid, parse_questions, validate_answers
from .reads import worker_by_platform_id

__all__ = ["DEMO_PARTICIPANT_ID", "worker_get_or_create", "worker_record_consent",
           "worker_record_intake"]

# The Prolific participant `manage.py demo_setup` registers on each campaign it sets up, so the
# links it prints open as Prolific's would. Not in Prolific's form, so a study link refuses it
# on any campaign where that worker was not registered (campaigns/views/entry.py).
DEMO_PARTICIPANT_ID = "demo-participant"


def worker_get_or_create(*, campaign: Campaign, platform: str, platform_id: str) -> Worker:
    """The campaign's worker with this platform id, created on first sight.

    `platform` is one of Worker.Platform (prolific, mturk, link, account, llm). A concurrent
    first visit is safe: the unique constraint decides and the loser re-reads the winner.
    """
    if platform not in Worker.Platform.values:
        raise ServiceError(f"Unknown platform {platform!r}.", code="unknown_platform")
    platform_id = (platform_id or "").strip()
    if not platform_id:
        raise ServiceError("A worker id is required.", code="missing_worker_id")
    if len(platform_id) > 200:
        raise ServiceError("The worker id is too long (200 characters at most).",
                           code="worker_id_too_long")
    worker = worker_by_platform_id(campaign=campaign, platform=platform,
                                   platform_id=platform_id)
    if worker is None:  # first sight: create; a concurrent first visit may win the race
        try:
            with transaction.atomic():
                worker = Worker.objects.create(campaign=campaign, platform=platform,
                                               platform_id=platform_id)
        except IntegrityError:
            worker = worker_by_platform_id(campaign=campaign, platform=platform,
                                           platform_id=platform_id)
            if worker is None:
                raise
    return worker


def worker_record_intake(*, worker: Worker, answers: dict) -> Worker:
    """Validate and store the worker's answers to the campaign's intake questions.

    Raises AnswerInvalid (with a message per question) and stores nothing when they break
    the questions; answering again replaces the earlier answers.
    """
    try:
        questions = parse_questions(worker.campaign.intake_questions or [])
    except SchemaInvalid as exc:
        raise ServiceError(f"The campaign's intake questions are invalid: {exc}",
                           code="intake_invalid", status=409) from None
    worker.intake = validate_answers(questions, answers)
    worker.save(update_fields=["intake"])
    return worker


def worker_record_consent(*, worker: Worker) -> Worker:
    """Record that the worker agreed to the consent text (the first agreement counts)."""
    if worker.consented_at is None:
        worker.consented_at = timezone.now()
        Worker.objects.filter(pk=worker.pk, consented_at__isnull=True).update(
            consented_at=worker.consented_at
        )
    return worker
