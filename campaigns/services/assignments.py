"""Handing out work: workers, claiming, submitting, returning and expiring assignments.

The rules (DESIGN §7) hold under many concurrent workers on PostgreSQL:

- an item is handed out until `slots_wanted` (the campaign's k) slots are taken; an active
  or submitted assignment holds one slot per regular item (`Item.slots_taken`), and the
  database checks 0 <= annotations_done <= slots_taken <= slots_wanted;
- the least-filled open items go first, found through the partial index `item_open_by_fill`
  so handing out work never scans or locks all open items;
- a worker never gets an item twice and never more than `max_assignments_per_worker`;
- attention checks and gold items are mixed in at random positions and hold no slot.

On PostgreSQL a claim is one call of the database function `campaigns_claim` (migration
0008): its statements run in the order described there, each with a fresh snapshot, in one
round trip instead of seven. On SQLite (the embedded demo) there are no row locks: the same
steps run through the ORM in a transaction that takes the database write lock first, and
SQLite serialises writers.
"""
from __future__ import annotations

import json
import random
import time
from collections import Counter
from contextlib import nullcontext
from datetime import datetime, timedelta

from django.db import (
    DatabaseError,
    IntegrityError,
    OperationalError,
    connection,
    transaction,
)
from django.db.models import Exists, F, JSONField, Model, OuterRef, Q, QuerySet
from django.utils import timezone

from .. import prepared
from ..errors import Conflict, NotLive, NoWorkAvailable, ServiceError, WorkerLimitReached
from ..models import Annotation, Assignment, AssignmentItem, Campaign, Item, Worker
from ..schema import SchemaInvalid, parse_questions, validate_answers
from ..selectors.assignments import worker_by_platform_id, worker_open_assignment
from .completion import completion_code_for

__all__ = [
    "PLATFORM_ID_FIELDS",
    "assignment_claim",
    "assignment_hand_in_locked",
    "assignment_is_open",
    "assignment_return",
    "assignment_submit",
    "assignments_expire",
    "hand_in_values",
    "new_row_json",
    "unanswered_positions",
    "worker_get_or_create",
    "worker_record_consent",
    "worker_record_intake",
]

# Keys of `platform_ids` accepted by assignment_claim (Assignment fields of the same name).
PLATFORM_ID_FIELDS = ("study_id", "session_id", "mturk_assignment_id", "mturk_hit_id",
                      "turk_submit_to")
EXPIRE_BATCH = 500
LAZY_EXPIRY_SECONDS = 5.0
_LAST_LAZY_EXPIRY: dict[int, float] = {}  # campaign id -> when this process last expired
CONTROL_SAMPLE = 30  # control items of each kind checked against a worker's history per claim
CONTROL_POOL_SECONDS = 60.0
_CONTROL_POOLS: dict[int, tuple[float, dict[str, list[int]]]] = {}  # campaign id -> ids
NOT_LIVE_MESSAGES = {
    "draft": "This study has not started yet; please come back later.",
    "paused": "This study is paused right now; please come back later.",
    "closed": "This study is closed and hands out no more work. Thank you!",
}
NO_WORK_MESSAGE = "There is no more work for you in this campaign. Thank you!"
OPEN = Assignment.Status.ACTIVE


# --- locking helpers -------------------------------------------------------------------------

def for_update(qs: QuerySet, *, skip_locked: bool = False) -> QuerySet:
    """`SELECT ... FOR NO KEY UPDATE [SKIP LOCKED]` where supported (PostgreSQL), else `qs`.

    NO KEY UPDATE (not plain FOR UPDATE) so that inserting rows that reference the locked
    row (annotations of a worker, items of an assignment) does not wait for the lock.
    """
    features = connection.features
    if not features.has_select_for_update:
        return qs
    return qs.select_for_update(
        skip_locked=skip_locked and features.has_select_for_update_skip_locked,
        no_key=connection.vendor == "postgresql",
    )


def lock_row(model, pk: int) -> dict | None:
    """Lock one row for the rest of the transaction; return its current values (or None).

    On SQLite, which has no row locks, a no-op UPDATE takes the database write lock now, so
    a concurrent writer waits for us (busy timeout) instead of failing on a lock upgrade.
    """
    if not connection.features.has_select_for_update:
        model.objects.filter(pk=pk).update(id=F("id"))
    return for_update(model.objects.filter(pk=pk)).values().first()


# --- workers ---------------------------------------------------------------------------------

def worker_get_or_create(*, campaign: Campaign, platform: str, platform_id: str) -> Worker:
    """The campaign's worker with this platform id, created on first sight.

    `platform` is one of Worker.Platform (prolific, mturk, link, account, llm). A concurrent
    first visit is safe: the unique constraint decides and get_or_create re-reads the winner.
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


# --- claiming --------------------------------------------------------------------------------

def assignment_claim(*, campaign: Campaign, worker: Worker,
                     platform_ids: dict | None = None) -> Assignment:
    """The worker's open assignment if there is one, else a newly handed-out assignment.

    Raises NotLive (campaign not live), WorkerLimitReached (max_assignments_per_worker
    reached) or NoWorkAvailable (no item left that this worker has not seen). An assignment
    has at least one and at most `items_per_assignment` regular items, plus the campaign's
    attention checks and gold items at random positions. `platform_ids` (keys in
    PLATFORM_ID_FIELDS) are stored on a new assignment.
    """
    if worker.campaign_id != campaign.pk:
        raise ServiceError("This worker belongs to another campaign.", code="wrong_campaign")
    if not campaign.is_live:
        raise NotLive(NOT_LIVE_MESSAGES.get(str(campaign.status), NOT_LIVE_MESSAGES["closed"]))
    ids = _clean_platform_ids(platform_ids or {})
    now = timezone.now()
    expired_now = _expire_lazily(campaign, now)
    try:
        return _claim_retrying_deadlocks(campaign, worker, now, ids)
    except NoWorkAvailable:
        # Overdue assignments may hold the only items left: free them, then try once more.
        if expired_now or not assignments_expire(now=now, campaign=campaign):
            raise
        return _claim_retrying_deadlocks(campaign, worker, now, ids)


def _claim_retrying_deadlocks(campaign: Campaign, worker: Worker, now: datetime,
                              platform_ids: dict) -> Assignment:
    """_claim, run again once if PostgreSQL broke a deadlock by aborting it.

    The claim's transaction was rolled back whole, so running it again is safe; inside a
    caller's transaction it is not (that transaction is aborted), so the error goes up.
    """
    try:
        return _claim(campaign, worker, now, platform_ids)
    except OperationalError as exc:
        deadlock = getattr(exc.__cause__, "pgcode", None) == "40P01"
        if not deadlock or connection.in_atomic_block:
            raise
        return _claim(campaign, worker, now, platform_ids)


def _expire_lazily(campaign: Campaign, now: datetime) -> bool:
    """Expire the campaign's overdue assignments, at most every few seconds per process.

    Every claim checking would cost a query each; the periodic task and the retry in
    assignment_claim (when no work is found) keep reclaimed items flowing in between.
    """
    clock = time.monotonic()
    last = _LAST_LAZY_EXPIRY.get(campaign.pk)
    if last is not None and clock - last < LAZY_EXPIRY_SECONDS:
        return False
    _LAST_LAZY_EXPIRY[campaign.pk] = clock
    assignments_expire(now=now, campaign=campaign)
    return True


def _claim(campaign: Campaign, worker: Worker, now: datetime,
           platform_ids: dict) -> Assignment:
    if connection.vendor == "postgresql":
        return _claim_pg(campaign, worker, now, platform_ids)
    # SQLite (the embedded demo): the same steps as the PostgreSQL function, through the
    # ORM, in a transaction that takes the database write lock first.
    with transaction.atomic():
        status = _lock_worker_and_read_status(worker)
        if status != Campaign.Status.LIVE:  # paused or closed since the caller loaded it
            raise NotLive(NOT_LIVE_MESSAGES.get(str(status), NOT_LIVE_MESSAGES["closed"]))
        current = worker_open_assignment(worker=worker)
        if current is not None:  # a returning worker resumes where they were
            return _update_platform_ids(current, platform_ids)
        _check_worker_limit(campaign, worker, now)
        regular = _take_regular_items(campaign, worker)
        controls = _pick_control_items(campaign, worker)
        return _create_assignment(campaign, worker, regular, controls, now, platform_ids)


_CLAIM_SQL = ("SELECT outcome, detail, assignment_id FROM campaigns_claim("
              "%s, %s, %s, %s, %s::bigint[], %s::double precision[], %s::jsonb, %s)")


def _claim_pg(campaign: Campaign, worker: Worker, now: datetime,
              platform_ids: dict) -> Assignment:
    """The claim as one call of the database function campaigns_claim (migration 0008):
    lock the worker, resume an open assignment, check the limit, pick and lock the items,
    take their slots and insert the assignment, each step seeing what committed before it.

    Outside a transaction the call is a transaction of its own; inside one, a savepoint, so
    that a Conflict leaves the caller's transaction usable.
    """
    controls = _pick_control_items(campaign, worker)  # read-only: needs no lock
    assignment = _new_assignment(campaign, worker, now, platform_ids)
    params = [worker.pk, now, campaign.items_per_assignment,
              campaign.max_assignments_per_worker, controls,
              [random.random() for _ in controls],  # noqa: S311 (positions, not secrets)
              new_row_json(assignment),
              AssignmentItem._meta.get_field("holds_slot").get_default()]
    try:
        with transaction.atomic() if connection.in_atomic_block else nullcontext():
            with connection.cursor() as cursor:
                prepared.execute(cursor, _CLAIM_SQL, params)
                outcome, detail, assignment_id = cursor.fetchone()
    except DatabaseError as exc:
        if getattr(exc.__cause__, "pgcode", None) == "CL409":
            raise Conflict("The work changed while it was handed out; please try again.") from None
        raise
    if outcome == "created":
        assignment.pk = assignment_id
        assignment._state.adding = False
        assignment._state.db = connection.alias
        assignment.just_created = True  # its first item is the place to start (no query needed)
        return assignment
    if outcome == "open":
        current = Assignment.objects.select_related("campaign", "worker").get(pk=assignment_id)
        return _update_platform_ids(current, platform_ids)
    if outcome == "not_live":  # paused or closed since the caller loaded it
        raise NotLive(NOT_LIVE_MESSAGES.get(str(detail), NOT_LIVE_MESSAGES["closed"]))
    if outcome == "limit":
        raise _limit_reached(campaign)
    raise NoWorkAvailable(NO_WORK_MESSAGE)


def _new_assignment(campaign: Campaign, worker: Worker, now: datetime,
                    platform_ids: dict) -> Assignment:
    """The unsaved assignment a claim hands out (its token and defaults set by the model)."""
    return Assignment(campaign=campaign, worker=worker, **platform_ids,
                      deadline=now + timedelta(minutes=campaign.assignment_timeout_minutes))


def new_row_json(instance: Model) -> str:
    """An unsaved instance's columns except its id, with the values the ORM would insert
    (defaults, auto_now), as the JSON object PostgreSQL's jsonb_populate_record reads (the
    database functions insert rows with it, whatever the table's column order)."""
    row = {}
    for field in type(instance)._meta.concrete_fields:
        if field.primary_key:
            continue
        value = field.pre_save(instance, True)
        # JSON columns go in as JSON; the rest as the ORM would send them.
        row[field.column] = (value if isinstance(field, JSONField)
                             else field.get_db_prep_save(value, connection))
    return json.dumps(row, default=_json_value)


def _json_value(value):
    """Datetimes as ISO text (microseconds kept)."""
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _lock_worker_and_read_status(worker: Worker) -> str | None:
    """Take the database write lock and return the worker's campaign status (SQLite).

    SQLite serialises writers: after this no-op update, no other claim runs until this one
    commits (the PostgreSQL function locks the worker row instead).
    """
    Worker.objects.filter(pk=worker.pk).update(id=F("id"))
    return Campaign.objects.filter(pk=worker.campaign_id).values_list(
        "status", flat=True).first()


def _check_worker_limit(campaign: Campaign, worker: Worker, now: datetime) -> None:
    """Submitted and open assignments count; expired (even if not yet marked) and returned
    ones do not."""
    limit = campaign.max_assignments_per_worker
    if limit is None:
        return
    used = Assignment.objects.filter(
        Q(status=Assignment.Status.SUBMITTED) | Q(status=OPEN, deadline__gt=now), worker=worker
    ).count()
    if used >= limit:
        raise _limit_reached(campaign)


def _limit_reached(campaign: Campaign) -> WorkerLimitReached:
    return WorkerLimitReached(f"You have done the most assignments this campaign allows "
                              f"({campaign.max_assignments_per_worker}). Thank you!")


def _unseen_by(worker: Worker) -> Exists:
    """True for items in none of this worker's assignments (any status).

    Correlated on AssignmentItem.item (indexed), joined to the worker's assignments: a few
    index probes per candidate item, never a scan of the worker's history per row.
    """
    return ~Exists(AssignmentItem.objects.filter(item=OuterRef("pk"),
                                                 assignment__worker=worker))


def _take_regular_items(campaign: Campaign, worker: Worker) -> list[int]:
    """Take a slot on up to `items_per_assignment` least-filled items the worker has not seen
    (the ORM version of campaigns_claim's pick, used on SQLite; written for any database).

    The WHERE clause matches the partial index item_open_by_fill (control='' AND
    slots_taken < slots_wanted), ordered by its columns, so PostgreSQL walks the index from
    the least-filled end and stops after n rows: cost independent of the campaign's size.
    """
    n = campaign.items_per_assignment
    candidates = (
        Item.objects.filter(campaign=campaign, control="", slots_taken__lt=F("slots_wanted"))
        .filter(_unseen_by(worker))
        .order_by("slots_taken", "id")
    )
    # FOR UPDATE SKIP LOCKED: concurrent claims each lock different rows instead of queueing
    # behind one another on the same least-filled items (Turkle's bottleneck). A locked row
    # is re-checked against the WHERE clause after the lock, so exactly n rows suffice.
    ids = list(for_update(candidates, skip_locked=True).values_list("id", flat=True)[:n])
    if not ids and connection.features.has_select_for_update_skip_locked:
        # Near the end of a campaign the last open items may all be locked by claims in
        # flight (some of which may roll back): wait for them rather than wrongly answer
        # "no more work", taking them in id order as expiry does (no lock-order cycle).
        ids = list(for_update(candidates.order_by("id")).values_list("id", flat=True)[:n])
    if not ids:
        raise NoWorkAvailable(NO_WORK_MESSAGE)
    # Conditional increment: the database refuses to go past k even if a lock was missed
    # (SQLite, or a future code path); the row count tells us whether every slot was taken.
    taken = Item.objects.filter(pk__in=ids, slots_taken__lt=F("slots_wanted")).update(
        slots_taken=F("slots_taken") + 1
    )
    if taken != len(ids):
        raise Conflict("The work changed while it was handed out; please try again.")
    return ids


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
    for pk, control in Item.objects.filter(
            campaign=campaign, control__in=list(pool)).values_list("id", "control"):
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


def _create_assignment(campaign: Campaign, worker: Worker, regular: list[int],
                       controls: list[int], now: datetime, platform_ids: dict) -> Assignment:
    assignment = _new_assignment(campaign, worker, now, platform_ids)
    order = list(regular)
    for pk in controls:  # each control item at a random position among the regular ones
        order.insert(random.randint(0, len(order)), pk)  # noqa: S311 (positions, not secrets)
    assignment.save(force_insert=True)
    AssignmentItem.objects.bulk_create(
        AssignmentItem(assignment=assignment, item_id=pk, position=i)
        for i, pk in enumerate(order, start=1)
    )
    assignment.just_created = True  # its first item is the place to start (no query needed)
    return assignment


# --- submitting, returning, expiring ---------------------------------------------------------

def assignment_submit(*, assignment: Assignment) -> Assignment:
    """Mark the assignment submitted and give it its completion code; idempotent.

    Every item must have an annotation (Conflict naming the unanswered positions otherwise).
    A fully answered assignment that passed its deadline can still be submitted: all its
    items kept their slots, and the worker did the work.
    """
    with transaction.atomic():
        # Lock the assignment: a concurrent expiry, return or answer must not interleave
        # between the "all answered" check and the status change.
        row = _lock_assignment(assignment.pk)
        if row is None:
            raise ServiceError("This assignment no longer exists.", code="not_found", status=404)
        if row["status"] == Assignment.Status.SUBMITTED:
            _refresh(assignment, row)
            return assignment
        if row["status"] == Assignment.Status.RETURNED:
            raise Conflict("This assignment was returned; it can no longer be submitted.")
        missing = unanswered_positions(assignment.pk)
        if missing:
            if row["status"] == Assignment.Status.EXPIRED:
                raise Conflict("This assignment expired before every item was answered.")
            raise Conflict(
                "Please answer every item before submitting; still open: "
                + ", ".join(str(p) for p in missing) + ".",
                extra={"positions": missing},
            )
        assignment_hand_in_locked(assignment)
    return assignment


def assignment_hand_in_locked(assignment: Assignment) -> None:
    """Mark the assignment submitted with its completion code (one UPDATE).

    For callers inside a transaction that holds the assignment's lock and has checked that
    every item is answered (assignment_submit; annotation_submit on SQLite).
    """
    values = hand_in_values(assignment)
    if connection.vendor != "postgresql":
        for name, value in values.items():
            setattr(assignment, name, value)
        assignment.save(update_fields=list(values))
        return
    with connection.cursor() as cursor:  # plain SQL: no ORM compilation
        prepared.execute(
            cursor,
            f"UPDATE {Assignment._meta.db_table} SET status = %s, submitted_at = %s, "  # noqa: S608 (names only)
            "completion_code = %s WHERE id = %s",
            [str(values["status"]), values["submitted_at"], values["completion_code"],
             assignment.pk])
    for name, value in values.items():
        setattr(assignment, name, value)


def hand_in_values(assignment: Assignment) -> dict:
    """What handing the assignment in sets (not applied): status, time, completion code."""
    return {"status": Assignment.Status.SUBMITTED, "submitted_at": timezone.now(),
            "completion_code": completion_code_for(assignment)}


_REFRESHED = ("status", "deadline", "submitted_at", "completion_code")


def _lock_assignment(pk: int) -> dict | None:
    """lock_row(Assignment, pk) for the fields _refresh needs, in plain SQL on PostgreSQL."""
    if connection.vendor != "postgresql":
        return lock_row(Assignment, pk)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {', '.join(_REFRESHED)} FROM "  # noqa: S608 (names only)
                       f"{Assignment._meta.db_table} WHERE id = %s FOR NO KEY UPDATE", [pk])
        row = cursor.fetchone()
    return dict(zip(_REFRESHED, row, strict=True)) if row else None


def _refresh(assignment: Assignment, row: dict) -> None:
    for field in _REFRESHED:
        setattr(assignment, field, row[field])


def unanswered_positions(assignment_id: int) -> list[int]:
    """The positions of the assignment without an annotation, in order (one query)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT ai.position FROM {AssignmentItem._meta.db_table} ai "  # noqa: S608 (names only)
            f"WHERE ai.assignment_id = %s AND NOT EXISTS (SELECT 1 FROM "
            f"{Annotation._meta.db_table} an WHERE an.assignment_id = ai.assignment_id "
            "AND an.item_id = ai.item_id) ORDER BY ai.position", [assignment_id])
        return [position for (position,) in cursor.fetchall()]


def assignment_return(*, assignment: Assignment) -> Assignment:
    """The worker gives the work back: unanswered items free their slots (status returned).

    Answers already given are kept. Returning twice is harmless; a submitted assignment
    cannot be returned (Conflict).
    """
    with transaction.atomic():
        row = lock_row(Assignment, assignment.pk)  # against a concurrent submit or expiry
        if row is None:
            raise ServiceError("This assignment no longer exists.", code="not_found", status=404)
        if row["status"] == Assignment.Status.SUBMITTED:
            raise Conflict("This assignment was already submitted; it cannot be returned.")
        if row["status"] == OPEN:
            _release([assignment.pk], Assignment.Status.RETURNED)
            row["status"] = Assignment.Status.RETURNED
        _refresh(assignment, row)
    return assignment


def assignments_expire(*, now: datetime | None = None, campaign: Campaign | None = None) -> int:
    """Expire active assignments past their deadline; return how many were expired.

    Their unanswered items give their slot back (holds_slot=False, slots_taken - 1) and can
    be handed out again; answered items keep their slot and their annotation.
    """
    now = now or timezone.now()
    overdue = Assignment.objects.filter(status=OPEN, deadline__lte=now)
    if campaign is not None:
        overdue = overdue.filter(campaign=campaign)
    if not overdue.exists():  # the usual case at claim time: one indexed read, no transaction
        return 0
    total = 0
    while True:
        with transaction.atomic():
            if not connection.features.has_select_for_update:
                # SQLite: take the write lock before reading, so that two expiries run one
                # after the other and the second sees the first's work (no double release).
                Assignment.objects.filter(pk=-1).update(id=F("id"))
            # SKIP LOCKED: a concurrent expiry (task and lazy claim-time call) takes other
            # rows; an assignment locked by an answer being saved is expired on a later run.
            ids = list(for_update(overdue.order_by("id"), skip_locked=True)
                       .values_list("id", flat=True)[:EXPIRE_BATCH])
            if ids:
                _release(ids, Assignment.Status.EXPIRED)
        total += len(ids)
        if len(ids) < EXPIRE_BATCH:
            return total


def _release(assignment_ids: list[int], status: str) -> None:
    """Close locked active assignments and give back the slots of their unanswered items."""
    Assignment.objects.filter(pk__in=assignment_ids, status=OPEN).update(status=status)
    answered = Annotation.objects.filter(assignment=OuterRef("assignment"), item=OuterRef("item"))
    freed = list(
        AssignmentItem.objects.filter(assignment__in=assignment_ids, holds_slot=True)
        .exclude(Exists(answered))
        .values_list("id", "item_id", "item__control")
    )
    if not freed:
        return
    AssignmentItem.objects.filter(pk__in=[pk for pk, _, _ in freed]).update(holds_slot=False)
    per_item = Counter(item_id for _, item_id, control in freed if not control)
    by_count: dict[int, list[int]] = {}
    for item_id, count in per_item.items():
        by_count.setdefault(count, []).append(item_id)
    # Lock the items in id order first: two releases (the periodic task and a claim-time
    # call) sharing items then wait for each other instead of deadlocking.
    list(for_update(Item.objects.filter(pk__in=per_item).order_by("pk")).values_list("pk"))
    for count, item_ids in sorted(by_count.items()):
        Item.objects.filter(pk__in=item_ids).update(slots_taken=F("slots_taken") - count)


def assignment_is_open(assignment: Assignment, now: datetime | None = None) -> bool:
    """Whether answers can still be given or changed (active and before the deadline)."""
    return assignment.status == OPEN and assignment.deadline > (now or timezone.now())
