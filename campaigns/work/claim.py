"""Claiming work: the worker's open assignment, or a new one from campaigns_claim.

The pick itself (k, by priority then least-filled first, no repeats, the per-worker cap,
locking) is one database function, campaigns/work/sql/claim_v4.sql; this module checks the
request, picks the control items (they hold no slot, so they need no lock), calls the
function and turns its outcome into an Assignment or an error. A new assignment comes with
its first item's page (`first_page`), read by the same call.
"""
from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from contextlib import nullcontext
from datetime import datetime

from django.db import (
    DEFAULT_DB_ALIAS,
    DatabaseError,
    OperationalError,
    connection,
    connections,
    transaction,
)
from django.db.models import Exists, JSONField, Model, OuterRef
from django.utils import timezone
from django.utils.translation import gettext_noop

from ..errors import (
    Conflict,
    NotLive,
    NoWorkAvailable,
    ResumeRefused,
    ServiceError,
    WorkerLimitReached,
)
from ..models import Assignment, AssignmentItem, Campaign, Item, Worker
from . import prepared
from .expiry import assignments_expire, expire_lazily, first_deadline
from .qualification import qualification_gate, qualification_item_ids
from .reads import first_page, model_columns, model_from_row
from .screening import claim_screened

__all__ = ["NOT_LIVE_MESSAGES", "NO_WORK_MESSAGE", "PLATFORM_ID_FIELDS", "assignment_claim",
           "new_row_json", "worker_assignment_cap"]

# Keys of `platform_ids` accepted by assignment_claim (Assignment fields of the same name).
PLATFORM_ID_FIELDS = ("study_id", "session_id", "mturk_assignment_id", "mturk_hit_id",
                      "turk_submit_to")
CONTROL_SAMPLE = 30  # control items of each kind checked against a worker's history per claim
CONTROL_POOL_SECONDS = 60.0
_CONTROL_POOLS: dict[int, tuple[float, dict[str, list[int]]]] = {}  # campaign id -> ids
# Marked for translation: the worker pages show them in the campaign's language.
NOT_LIVE_MESSAGES = {
    "draft": gettext_noop("This study has not started yet; please come back later."),
    "paused": gettext_noop("This study is paused right now; please come back later."),
    "closed": gettext_noop("This study is closed and hands out no more work. Thank you!"),
}
NO_WORK_MESSAGE = gettext_noop("There is no more work for you in this campaign. Thank you!")
_CLAIM_SQL: list[str] = []


def _claim_sql() -> str:
    """The call of campaigns_claim, with the first item's columns in model field order."""
    if not _CLAIM_SQL:
        _CLAIM_SQL.append(
            "SELECT c.outcome, c.detail, c.assignment_id, c.item_count, "  # noqa: S608 (names from the models)
            f"{model_columns(Item, '(c.first_item)')} FROM campaigns_claim("
            "%s, %s, %s, %s, %s::bigint[], %s::double precision[], %s::jsonb, %s) c")
    return _CLAIM_SQL[0]


def assignment_claim(*, campaign: Campaign, worker: Worker, platform_ids: dict | None = None,
                     may_resume: Callable[[Assignment], bool] | None = None,
                     max_items: int | None = None) -> Assignment:
    """The worker's open assignment if there is one, else a newly handed-out assignment.

    Raises NotLive (campaign not live), WorkerLimitReached (max_assignments_per_worker
    reached) or NoWorkAvailable (no item left that this worker has not seen). An assignment
    has at least one and at most `items_per_assignment` regular items, plus the campaign's
    attention checks and gold items at random positions. `platform_ids` (keys in
    PLATFORM_ID_FIELDS) are stored on a new assignment. When `may_resume` says no to the
    worker's open assignment, ResumeRefused is raised and that assignment is left as it was.
    `max_items` holds a new assignment to fewer regular items (a start the platform has not
    vouched for gets only a first item). A worker the intake's rules screen out gets
    ScreenedOut and nothing (work/screening.py); one who has yet to pass the campaign's
    qualification test gets QualificationRequired and nothing (work/qualification.py).
    """
    if worker.campaign_id != campaign.pk:
        raise ServiceError("This worker belongs to another campaign.", code="wrong_campaign")
    if not campaign.is_live:
        raise NotLive(NOT_LIVE_MESSAGES.get(str(campaign.status), NOT_LIVE_MESSAGES["closed"]))
    ids = _clean_platform_ids(platform_ids or {})
    return claim_screened(campaign, worker,
                          lambda: _claim_expiring(campaign, worker, ids, may_resume, max_items),
                          qualify=lambda: qualification_gate(campaign, worker, ids, max_items))


def _claim_expiring(campaign: Campaign, worker: Worker, ids: dict, may_resume,
                    max_items: int | None) -> Assignment:
    now = timezone.now()
    expired_now = expire_lazily(campaign, now)
    size = campaign.items_per_assignment if max_items is None else max(
        1, min(campaign.items_per_assignment, max_items))
    try:
        return _claim_retrying_deadlocks(campaign, worker, now, ids, may_resume, size)
    except NoWorkAvailable:
        # Overdue assignments may hold the only items left: free them, then try once more.
        if expired_now or not assignments_expire(now=now, campaign=campaign):
            raise
        return _claim_retrying_deadlocks(campaign, worker, now, ids, may_resume, size)


def _claim_retrying_deadlocks(campaign: Campaign, worker: Worker, now: datetime,
                              platform_ids: dict, may_resume=None,
                              size: int | None = None) -> Assignment:
    """_claim_in_database, run again once if PostgreSQL broke a deadlock by aborting it.

    The claim's transaction was rolled back whole, so running it again is safe; inside a
    caller's transaction it is not (that transaction is aborted), so the error goes up.
    """
    try:
        return _claim_in_database(campaign, worker, now, platform_ids, may_resume, size)
    except OperationalError as exc:
        deadlock = getattr(exc.__cause__, "pgcode", None) == "40P01"
        if not deadlock or connection.in_atomic_block:
            raise
        return _claim_in_database(campaign, worker, now, platform_ids, may_resume, size)


def _claim_in_database(campaign: Campaign, worker: Worker, now: datetime,
                       platform_ids: dict, may_resume=None,
                       size: int | None = None) -> Assignment:
    """The claim as one call of campaigns_claim (sql/claim_v4.sql): lock the worker, resume
    an open assignment, check the cap, pick and lock the items, take their slots, insert
    the assignment and read its first item, each step seeing what committed before it.

    Outside a transaction the call is a transaction of its own; inside one, a savepoint, so
    that a Conflict leaves the caller's transaction usable.
    """
    controls = _pick_control_items(campaign, worker)  # read-only: needs no lock
    # The design it is handed out under, as the caller's copy of the campaign knows it (the
    # allocation job's epoch moves on at most once a minute).
    assignment = Assignment(campaign=campaign, worker=worker, **platform_ids,
                            deadline=first_deadline(campaign, now),
                            allocation=campaign.allocation,
                            allocation_epoch=campaign.allocation_epoch)
    params = [worker.pk, now, size or campaign.items_per_assignment,
              worker_assignment_cap(campaign, worker), controls,
              [random.random() for _ in controls],  # noqa: S311 (positions, not secrets)
              new_row_json(assignment),
              AssignmentItem._meta.get_field("holds_slot").get_default()]
    try:
        with transaction.atomic() if connection.in_atomic_block else nullcontext():
            with connection.cursor() as cursor:
                prepared.execute(cursor, _claim_sql(), params)
                outcome, detail, assignment_id, item_count, *first_item = cursor.fetchone()
    except DatabaseError as exc:
        if getattr(exc.__cause__, "pgcode", None) == "CL409":
            raise Conflict("The work changed while it was handed out; please try again.") from None
        raise
    if outcome == "created":
        assignment.item_count = item_count
        assignment.first_page = first_page(
            model_from_row(connections[DEFAULT_DB_ALIAS], Item, first_item), item_count)
    return _claim_outcome(campaign, assignment, platform_ids, outcome, detail, assignment_id,
                          may_resume)


def worker_assignment_cap(campaign: Campaign, worker: Worker) -> int | None:
    """How many assignments this worker may hold or have submitted (None: no limit).

    The campaign's max_assignments_per_worker; a Prolific participant gets one when the
    campaign sets no limit, as Prolific takes one submission per participant per study.
    """
    cap = campaign.max_assignments_per_worker
    if cap is None and worker.platform == Worker.Platform.PROLIFIC:
        return 1
    return cap


def _claim_outcome(campaign: Campaign, assignment: Assignment, platform_ids: dict,
                   outcome: str, detail: str | None, assignment_id: int | None,
                   may_resume=None) -> Assignment:
    """The assignment campaigns_claim handed out or resumed, or the error it stands for."""
    if outcome == "created":
        assignment.pk = assignment_id
        assignment._state.adding = False
        assignment._state.db = connection.alias
        assignment.just_created = True  # its first item is the place to start (no query needed)
        return assignment
    if outcome == "open":
        current = Assignment.objects.select_related("campaign", "worker").get(pk=assignment_id)
        if may_resume is not None and not may_resume(current):
            raise ResumeRefused("This work was started in another browser or session.")
        return _update_platform_ids(current, platform_ids)
    if outcome == "not_live":  # paused or closed since the caller loaded it
        raise NotLive(NOT_LIVE_MESSAGES.get(str(detail), NOT_LIVE_MESSAGES["closed"]))
    if outcome == "limit":
        raise WorkerLimitReached(f"You have done the most assignments this campaign allows "
                                 f"({worker_assignment_cap(campaign, assignment.worker)}). "
                                 "Thank you!")
    raise NoWorkAvailable(NO_WORK_MESSAGE)


def new_row_json(instance: Model) -> str:
    """An unsaved instance's columns except its id, with the values the ORM would insert
    (defaults, auto_now), as the JSON object PostgreSQL's jsonb_populate_record reads (the
    database functions insert rows with it, whatever the table's column order)."""
    row = {}
    # The connection itself, not the `connection` proxy, which looks it up again on every
    # attribute the fields read from it.
    database = connections[DEFAULT_DB_ALIAS]
    for field in type(instance)._meta.concrete_fields:
        if field.primary_key:
            continue
        value = field.pre_save(instance, True)
        # JSON columns go in as JSON; the rest as the ORM would send them.
        row[field.column] = (value if isinstance(field, JSONField)
                             else field.get_db_prep_save(value, database))
    return json.dumps(row, default=_json_value)


def _json_value(value):
    """Datetimes as ISO text (microseconds kept)."""
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _unseen_by(worker: Worker) -> Exists:
    """True for items in none of this worker's assignments (any status).

    Correlated on AssignmentItem.item (indexed), joined to the worker's assignments: a few
    index probes per candidate item, never a scan of the worker's history per row.
    """
    return ~Exists(AssignmentItem.objects.filter(item=OuterRef("pk"),
                                                 assignment__worker=worker))


def _pick_control_items(campaign: Campaign, worker: Worker) -> list[int]:
    """Attention checks and gold items for a new assignment, unseen ones first.

    Control items hold no slots (slots_wanted=0), so they are read, never locked or updated.
    A random sample of each kind is checked against the worker's history (one query however
    many control items the campaign has), so a worker sees a control item again only when
    the campaign has too few of them (or has seen nearly all of a large pool).
    """
    wanted = {kind: count for kind, count in (
        (Item.Control.ATTENTION, campaign.attention_checks_per_assignment),
        (Item.Control.GOLD, campaign.gold_items_per_assignment)) if count}
    if not wanted:
        return []
    for fresh in (False, True):
        pool = _control_pool(campaign, fresh=fresh)
        sample = {kind: random.sample(pool[kind], min(len(pool[kind]), CONTROL_SAMPLE + count))
                  for kind, count in wanted.items()}
        ids = [pk for kind_ids in sample.values() for pk in kind_ids]
        found = {pk: (control, unseen) for pk, control, unseen in (
            Item.objects.filter(pk__in=ids, campaign=campaign).annotate(unseen=_unseen_by(worker))
            .values_list("id", "control", "unseen"))}
        if all(kind_ids and all(found.get(pk, ("",))[0] == kind for pk in kind_ids)
               for kind, kind_ids in sample.items()):
            break  # the cached pool looks current (else reload it once and sample again)
    chosen: list[int] = []
    for kind, kind_ids in sample.items():
        usable = [pk for pk in kind_ids if found.get(pk, ("",))[0] == kind]
        usable.sort(key=lambda pk: not found[pk][1])  # stable: unseen first, still random
        chosen += usable[:wanted[kind]]
    return chosen


def _control_pool(campaign: Campaign, *, fresh: bool = False) -> dict[str, list[int]]:
    """The ids of the campaign's control items by kind, cached in this process for a while."""
    clock = time.monotonic()
    cached = _CONTROL_POOLS.get(campaign.pk)
    if cached is not None and not fresh and clock - cached[0] < CONTROL_POOL_SECONDS:
        return cached[1]
    pool: dict[str, list[int]] = {Item.Control.ATTENTION: [], Item.Control.GOLD: []}
    reserved = set(qualification_item_ids(campaign))  # the test's items are not mixed in
    for pk, control in Item.objects.filter(
            campaign=campaign, control__in=list(pool)).values_list("id", "control"):
        if pk not in reserved:
            pool[control].append(pk)
    _CONTROL_POOLS[campaign.pk] = (clock, pool)
    return pool


def _clean_platform_ids(platform_ids: dict) -> dict[str, str]:
    unknown = set(platform_ids) - set(PLATFORM_ID_FIELDS)
    if unknown:
        raise ServiceError(f"Unknown platform ids: {', '.join(sorted(unknown))}.",
                           code="unknown_platform_ids")
    return {key: str(value or "")[:Assignment._meta.get_field(key).max_length]
            for key, value in platform_ids.items()}


def _update_platform_ids(assignment: Assignment, platform_ids: dict) -> Assignment:
    """A resumed assignment takes the platform's current ids (e.g. the worker accepted the
    HIT again on MTurk: the completion form must post the new assignmentId)."""
    changed = {key: value for key, value in platform_ids.items()
               if value and getattr(assignment, key) != value}
    if changed:
        for key, value in changed.items():
            setattr(assignment, key, value)
        assignment.save(update_fields=list(changed))
    return assignment
