"""Deleting a worker's data on request: answers, intake, platform ids, and a record of it.

`worker_erase` removes everything that ties the person to the campaign:

- their annotations and assignments (with the platform's study/session/assignment ids), and the
  items' counters are corrected so that the freed slots are handed out again; their
  qualification test and its answers;
- their intake answers, and the platform id itself (replaced by a random "erased-..." value,
  so the Worker row stays only as an anonymous placeholder with `erased_at` set);
- the campaign's stored export files made before the deletion, which contain their rows
  (the jobs are marked failed with the reason; a new export leaves them out), exports running
  at the time (withdrawn: they stop at their next chunk and store nothing) and every export
  spool of the campaign;
- the campaign's cached statistics, reports and side-by-side tables (recomputed on request);

and writes a DeletionRecord (when, by whom, which campaign, the pseudonym the worker had in
earlier exports, and what was removed) so the researcher can show the request was honoured.
"""
from __future__ import annotations

import logging
import secrets
from collections import Counter
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from ..errors import ServiceError
from ..exporting.pseudonyms import worker_pseudonym
from ..models import (
    Annotation,
    Assignment,
    AssignmentItem,
    Campaign,
    DeletionRecord,
    ExportJob,
    Item,
    Qualification,
    Worker,
)
from ..work.locking import for_update
from .spools import spools_purge
from .statistics import statistics_purge

logger = logging.getLogger(__name__)

ERASED_PREFIX = "erased-"


@dataclass(frozen=True)
class ErasureResult:
    record: DeletionRecord
    already_erased: bool = False


def worker_find(*, campaign: Campaign, platform: str, platform_id: str) -> Worker:
    """The worker with this platform id in this campaign (ServiceError 404 if there is none)."""
    worker = Worker.objects.filter(
        campaign=campaign, platform=platform, platform_id=platform_id
    ).first()
    if worker is None:
        raise ServiceError(
            f"No worker with {platform} id {platform_id!r} in campaign {campaign.slug!r}.",
            code="not_found", status=404,
        )
    return worker


def worker_erase(*, worker: Worker, requested_by=None, via: str = "service",
                 reason: str = "") -> ErasureResult:
    """Delete a worker's data on request; idempotent (a second call returns the first record)."""
    with transaction.atomic():
        locked = for_update(Worker.objects.filter(pk=worker.pk)).select_related("campaign").first()
        if locked is None:
            raise ServiceError("This worker no longer exists.", code="not_found", status=404)
        if locked.erased_at is not None:
            record = locked.deletion_records.order_by("-created_at").first()
            if record is not None:
                return ErasureResult(record=record, already_erased=True)
        campaign = locked.campaign
        pseudonym = worker_pseudonym(
            campaign_id=campaign.pk, platform=locked.platform, platform_id=locked.platform_id
        )
        annotations, assignments = _delete_work(locked)
        # The qualification test too: its answers and the platform session ids it kept.
        Qualification.objects.filter(worker=locked).delete()
        intake_cleared = bool(locked.intake)
        locked.platform_id = f"{ERASED_PREFIX}{secrets.token_hex(12)}"
        locked.intake = None
        locked.erased_at = timezone.now()
        locked.save(update_fields=["platform_id", "intake", "erased_at"])
        files = _retire_exports(campaign, locked.erased_at) if annotations else []
        statistics_purge(campaign=campaign)
        record = DeletionRecord.objects.create(
            campaign=campaign, campaign_slug=campaign.slug, worker=locked,
            platform=locked.platform, pseudonym=pseudonym,
            requested_by=requested_by if getattr(requested_by, "pk", None) else None,
            requested_via=via, reason=reason, annotations_deleted=annotations,
            assignments_deleted=assignments, intake_cleared=intake_cleared,
            export_files_deleted=len(files),
        )
        spools = campaign.pk if annotations else None  # running exports were withdrawn
        transaction.on_commit(lambda: _delete_files(files, spools_of=spools))
    worker.refresh_from_db()
    logger.info("erased worker %s (%s) in %s: %d annotations, %d assignments",
                worker.pk, pseudonym, campaign.slug, annotations, assignments)
    return ErasureResult(record=record)


def _delete_work(worker: Worker) -> tuple[int, int]:
    """Delete the worker's assignments and annotations, giving back their items' counters."""
    # Lock order as in the assignment services: assignments, then items by id.
    assignment_ids = list(
        for_update(Assignment.objects.filter(worker=worker).order_by("pk"))
        .values_list("pk", flat=True)
    )
    done = Counter(
        Annotation.objects.filter(worker=worker, item__control="").values_list("item_id", flat=True)
    )
    taken = Counter(
        AssignmentItem.objects.filter(
            assignment__in=assignment_ids, holds_slot=True, item__control=""
        ).values_list("item_id", flat=True)
    )
    item_ids = sorted(set(done) | set(taken))
    if item_ids:
        list(for_update(Item.objects.filter(pk__in=item_ids).order_by("pk")).values_list("pk"))
    by_change: dict[tuple[int, int], list[int]] = {}
    for item_id in item_ids:
        by_change.setdefault((done[item_id], taken[item_id]), []).append(item_id)
    for (minus_done, minus_taken), ids in sorted(by_change.items()):
        # One UPDATE for both counters keeps 0 <= annotations_done <= slots_taken at all times.
        Item.objects.filter(pk__in=ids).update(
            annotations_done=F("annotations_done") - minus_done,
            slots_taken=F("slots_taken") - minus_taken,
        )
    annotations, _ = Annotation.objects.filter(worker=worker).delete()
    Assignment.objects.filter(pk__in=assignment_ids).delete()
    return annotations, len(assignment_ids)


def _retire_exports(campaign: Campaign, when) -> list[str]:
    """Mark the campaign's finished exports (which hold the worker's rows) and its running ones
    (which may have read them) as withdrawn; a running one stops at its next chunk."""
    jobs = list(ExportJob.objects.filter(campaign=campaign, created_at__lte=when).filter(
        ~Q(file="") | Q(status=ExportJob.Status.RUNNING)))
    files = [job.file for job in jobs if job.file]
    ExportJob.objects.filter(pk__in=[job.pk for job in jobs]).update(
        status=ExportJob.Status.FAILED, file="",
        error=(f"Withdrawn on {when:%Y-%m-%d %H:%M} UTC: this file held the data of a worker "
               "whose data was deleted on request. Please export again."),
    )
    return files


def _delete_files(paths: list[str], *, spools_of: int | None) -> None:
    from django.core.files.storage import storages

    if spools_of is not None:
        spools_purge(campaign_id=spools_of)

    storage = storages["exports"]
    for path in paths:
        try:
            storage.delete(path)
        except Exception as exc:  # noqa: BLE001 - a missing file or storage hiccup is logged
            logger.warning("could not delete export file %s: %s", path, exc)
