"""The worker pages' reads: an assignment by token, its items in order, answers, progress."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from datetime import datetime

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model, Q, Sum
from django.utils import timezone

from ..models import Annotation, Assignment, AssignmentItem, Campaign, Item, Worker
from . import prepared
from .campaign_rows import VERSION_WIDTH, campaign_row, version_columns

__all__ = [
    "AssignmentEntry",
    "AssignmentPage",
    "Progress",
    "assignment_by_token",
    "assignment_columns",
    "assignment_entries",
    "assignment_from_row",
    "assignment_progress",
    "study_size",
    "assignment_with_page",
    "campaign_and_worker",
    "campaign_next_release",
    "first_page",
    "model_columns",
    "model_from_row",
    "worker_by_platform_id",
    "worker_assignment_count",
    "worker_open_assignment",
    "worker_submitted_assignment",
]


@dataclass(frozen=True)
class AssignmentEntry:
    """One item of an assignment as the worker sees it, with their saved answers if any."""

    position: int
    item: Item
    annotation: Annotation | None

    @property
    def answered(self) -> bool:
        return self.annotation is not None


@dataclass(frozen=True)
class Progress:
    """How far the worker is: `answered` of `total` items; `next_position` is unanswered."""

    answered: int
    total: int
    next_position: int | None  # the first unanswered position; None when all are answered
    answered_positions: frozenset[int]

    @property
    def complete(self) -> bool:
        return self.total > 0 and self.answered == self.total

    @property
    def percent(self) -> int:
        return round(100 * self.answered / self.total) if self.total else 0

    def __str__(self) -> str:
        return f"{self.answered} of {self.total}"


@dataclass(frozen=True)
class AssignmentPage:
    """Everything an item page needs: the entry at a position and the progress."""

    entry: AssignmentEntry
    progress: Progress

    @property
    def previous_position(self) -> int | None:
        return self.entry.position - 1 if self.entry.position > 1 else None

    @property
    def following_position(self) -> int | None:
        return self.entry.position + 1 if self.entry.position < self.progress.total else None


# --- hand-written SQL for the hottest reads ---------------------------------------------------
# Every worker request starts with one of these lookups: plain SQL built once from the models'
# metadata, hydrated with the converters the ORM applies. Not Manager.raw() or the ORM: raw()
# cannot attach the campaign and worker from the same row, and compiling the ORM query costs
# several times the whole read in CPU on every request.

def model_columns(model: type[Model], alias: str) -> str:
    """The model's concrete columns, qualified by `alias`, in field order (for model_from_row)."""
    quote = connections[DEFAULT_DB_ALIAS].ops.quote_name
    return ", ".join(f"{alias}.{quote(f.column)}" for f in model._meta.concrete_fields)


def _converters(conn, model: type[Model]) -> list:
    """(index, converter functions, column) for the fields whose values need converting."""
    cache = conn.__dict__.setdefault("_annotate_row_converters", {})
    if model not in cache:
        found = []
        for i, field in enumerate(model._meta.concrete_fields):
            col = field.get_col(model._meta.db_table)
            funcs = conn.ops.get_db_converters(col) + field.get_db_converters(conn)
            if funcs:
                found.append((i, funcs, col))
        cache[model] = found
    return cache[model]


def model_from_row(conn, model: type[Model], values: list) -> Model:
    """A model instance from one row of its concrete columns, as the ORM would build it."""
    for i, funcs, col in _converters(conn, model):
        value = values[i]
        for func in funcs:
            value = func(value, col, conn)
        values[i] = value
    return model.from_db(conn.alias, None, values)


def _campaign(conn, version: list) -> Campaign | None:
    """The campaign of a row version read by version_columns (campaign_rows.py)."""
    values = campaign_row(version)
    return None if values is None else model_from_row(conn, Campaign, values)


def _fetch_one(sql: str, params: list) -> tuple | None:
    conn = connections[DEFAULT_DB_ALIAS]
    with conn.cursor() as cursor:
        prepared.execute(cursor, sql, params)
        return cursor.fetchone()


_SQL: dict[str, str] = {}


def assignment_columns() -> tuple[str, str]:
    """(columns, joins) for reading an assignment `a` with its campaign and worker in one
    statement: the columns assignment_from_row reads, and the joins that bring `c` and `w`."""
    return (f"{model_columns(Assignment, 'a')}, {version_columns('c')}, "
            f"{model_columns(Worker, 'w')}",
            f"JOIN {Campaign._meta.db_table} c ON c.id = a.campaign_id "
            f"JOIN {Worker._meta.db_table} w ON w.id = a.worker_id")


def _assignment_sql() -> str:
    if "assignment" not in _SQL:
        columns, joins = assignment_columns()
        _SQL["assignment"] = (
            f"SELECT {columns}, (SELECT COUNT(*) FROM {AssignmentItem._meta.db_table} ai "  # noqa: S608 (names from the models)
            f"WHERE ai.assignment_id = a.id) FROM {Assignment._meta.db_table} a {joins} "
            "WHERE a.token = %s")
    return _SQL["assignment"]


def assignment_by_token(*, token: str) -> Assignment | None:
    """The assignment this token opens (with its campaign and worker), or None (one query).

    The assignment's `item_count` (its number of items, fixed at creation) comes with it.
    """
    if not token or len(token) > 64:
        return None
    assignment, rest = assignment_from_row(_fetch_one(_assignment_sql(), [token]))
    if assignment is None:
        return None
    assignment.item_count = int(rest[0])
    return assignment


def assignment_from_row(row: tuple | None) -> tuple[Assignment | None, list]:
    """The assignment (its campaign and worker attached) from the start of a fetched row of
    assignment_columns (the campaign by its row version, campaign_rows.py), and the rest of
    the row; (None, []) when no row came, or when the campaign was deleted (its assignments
    with it) since the row was read."""
    if row is None:
        return None, []
    values = list(row)
    conn = connections[DEFAULT_DB_ALIAS]
    n_a = len(Assignment._meta.concrete_fields)
    n_c = VERSION_WIDTH
    n_w = len(Worker._meta.concrete_fields)
    campaign = _campaign(conn, values[n_a:n_a + n_c])
    if campaign is None:
        return None, []
    assignment = model_from_row(conn, Assignment, values[:n_a])
    worker = model_from_row(conn, Worker, values[n_a + n_c:n_a + n_c + n_w])
    Assignment.campaign.field.set_cached_value(assignment, campaign)
    Assignment.worker.field.set_cached_value(assignment, worker)
    return assignment, values[n_a + n_c + n_w:]


def assignment_with_page(*, token: str,
                         position: int) -> tuple[Assignment | None, AssignmentPage | None]:
    """The assignment this token opens (as assignment_by_token) and the page at `position`
    (the item, its saved answers, the progress): (None, None) for an unknown token,
    (assignment, None) for a position it does not have.

    One query (the item page's read), and one more for the saved answers only when there
    are some.
    """
    conn = connections[DEFAULT_DB_ALIAS]
    if not token or len(token) > 64:
        return None, None
    if "assignment_page" not in _SQL:
        columns, joins = assignment_columns()
        _SQL["assignment_page"] = (
            f"SELECT {columns}, p.positions, p.answered, {model_columns(Item, 'i')} "  # noqa: S608 (names from the models)
            f"FROM {Assignment._meta.db_table} a {joins} "
            "CROSS JOIN LATERAL (SELECT array_agg(ai.position ORDER BY ai.position) AS positions, "
            f"array_agg({_answered_sql()} ORDER BY ai.position) AS answered "
            f"FROM {AssignmentItem._meta.db_table} ai WHERE ai.assignment_id = a.id) p "
            f"LEFT JOIN {AssignmentItem._meta.db_table} s "
            "ON s.assignment_id = a.id AND s.position = %s "
            f"LEFT JOIN {Item._meta.db_table} i ON i.id = s.item_id WHERE a.token = %s")
    assignment, rest = assignment_from_row(_fetch_one(_SQL["assignment_page"],
                                                      [position, token]))
    if assignment is None:
        return None, None
    positions, answered, *item_values = rest
    assignment.item_count = len(positions or [])
    if not positions or item_values[0] is None:
        return assignment, None
    progress = _progress(list(zip(positions, answered, strict=True)))
    item = model_from_row(conn, Item, item_values)
    return assignment, _page(assignment, position, item, progress)


def first_page(item: Item, total: int) -> AssignmentPage:
    """The page of a new assignment's first item (nothing answered yet), from the claim's
    own read: no query."""
    progress = Progress(answered=0, total=total, next_position=1,
                        answered_positions=frozenset())
    return AssignmentPage(entry=AssignmentEntry(1, item, None), progress=progress)


def _page(assignment: Assignment, position: int, item: Item,
          progress: Progress) -> AssignmentPage:
    annotation = None
    if position in progress.answered_positions:
        annotation = Annotation.objects.filter(assignment=assignment, item_id=item.pk).first()
    return AssignmentPage(entry=AssignmentEntry(position, item, annotation), progress=progress)


def campaign_and_worker(*, slug: str, platform: str,
                        platform_id: str) -> tuple[Campaign | None, Worker | None]:
    """The campaign at /c/<slug>/ and the worker with this platform id, in one query (the
    study link's read): (None, None) for an unknown slug, (campaign, None) for a worker not
    seen yet."""
    if not slug or len(slug) > Campaign._meta.get_field("slug").max_length:
        return None, None
    if "campaign_worker" not in _SQL:
        _SQL["campaign_worker"] = (
            f"SELECT {version_columns('c')}, {model_columns(Worker, 'w')} "  # noqa: S608 (names from the models)
            f"FROM {Campaign._meta.db_table} c LEFT JOIN {Worker._meta.db_table} w "
            "ON w.campaign_id = c.id AND w.platform = %s AND w.platform_id = %s "
            "WHERE c.slug = %s")
    row = _fetch_one(_SQL["campaign_worker"], [platform, platform_id, slug])
    if row is None:
        return None, None
    conn = connections[DEFAULT_DB_ALIAS]
    n_c = VERSION_WIDTH
    values = list(row)
    campaign = _campaign(conn, values[:n_c])
    if campaign is None:  # deleted since the row was read
        return None, None
    if values[n_c] is None:
        return campaign, None
    worker = model_from_row(conn, Worker, values[n_c:])
    Worker.campaign.field.set_cached_value(worker, campaign)
    return campaign, worker


def worker_open_assignment(*, worker: Worker) -> Assignment | None:
    """The worker's active assignment that is still before its deadline, if any."""
    return (Assignment.objects.filter(worker=worker, status=Assignment.Status.ACTIVE,
                                      deadline__gt=timezone.now())
            .select_related("campaign").order_by("-id").first())


def worker_submitted_assignment(*, worker: Worker) -> Assignment | None:
    """The worker's most recently submitted assignment, if any (their code to show again)."""
    return (Assignment.objects.filter(worker=worker, status=Assignment.Status.SUBMITTED)
            .select_related("campaign", "worker").order_by("-id").first())


def worker_assignment_count(*, worker: Worker) -> int:
    """Submitted and open assignments: those that count toward the per-worker cap."""
    return Assignment.objects.filter(worker=worker).filter(
        Q(status=Assignment.Status.SUBMITTED)
        | Q(status=Assignment.Status.ACTIVE, deadline__gt=timezone.now())).count()


def campaign_next_release(*, campaign: Campaign) -> datetime | None:
    """The nearest deadline of the campaign's open assignments: when work may come back."""
    return (Assignment.objects.filter(campaign=campaign, status=Assignment.Status.ACTIVE,
                                      deadline__gt=timezone.now())
            .order_by("deadline").values_list("deadline", flat=True).first())


def _progress(rows: list[tuple[int, bool]]) -> Progress:
    done = frozenset(position for position, is_answered in rows if is_answered)
    following = next((position for position, is_answered in rows if not is_answered), None)
    return Progress(answered=len(done), total=len(rows), next_position=following,
                    answered_positions=done)


def _answered_sql() -> str:
    return (f"EXISTS(SELECT 1 FROM {Annotation._meta.db_table} an "  # noqa: S608 (names from the models)
            "WHERE an.assignment_id = ai.assignment_id AND an.item_id = ai.item_id)")


def assignment_progress(*, assignment: Assignment) -> Progress:
    """Answered / total items and the first unanswered position (one query)."""
    if "progress" not in _SQL:
        _SQL["progress"] = (f"SELECT ai.position, {_answered_sql()} "  # noqa: S608 (names from the models)
                            f"FROM {AssignmentItem._meta.db_table} ai "
                            "WHERE ai.assignment_id = %s ORDER BY ai.position")
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        prepared.execute(cursor, _SQL["progress"], [assignment.pk])
        rows = [(position, bool(answered)) for position, answered in cursor.fetchall()]
    return _progress(rows)


def assignment_entries(*, assignment: Assignment) -> list[AssignmentEntry]:
    """Every item of the assignment in order, each with its annotation or None (two queries)."""
    slots = list(AssignmentItem.objects.filter(assignment=assignment).select_related("item")
                 .order_by("position"))
    annotations = {a.item_id: a for a in Annotation.objects.filter(assignment=assignment)}
    return [AssignmentEntry(s.position, s.item, annotations.get(s.item_id)) for s in slots]


def worker_by_platform_id(*, campaign: Campaign, platform: str,
                          platform_id: str) -> Worker | None:
    """The campaign's worker with this platform id, or None (one query)."""
    if "worker" not in _SQL:
        columns = model_columns(Worker, "w")
        _SQL["worker"] = (f"SELECT {columns} FROM {Worker._meta.db_table} w "  # noqa: S608 (names from the models)
                          "WHERE w.campaign_id = %s AND w.platform = %s AND w.platform_id = %s")
    row = _fetch_one(_SQL["worker"], [campaign.pk, platform, platform_id])
    if row is None:
        return None
    return model_from_row(connections[DEFAULT_DB_ALIAS], Worker, list(row))


STUDY_SIZE_SECONDS = 60.0
_STUDY_SIZES: dict[int, tuple[float, int]] = {}  # campaign id -> (when read, size)


def study_size(campaign: Campaign) -> int:
    """How many assignments the study hands out in all (its regular items' slots, divided by
    the items per assignment), read once a minute per process: the newcomer start limits
    scale with it."""
    clock = time.monotonic()
    cached = _STUDY_SIZES.get(campaign.pk)
    if cached is not None and clock - cached[0] < STUDY_SIZE_SECONDS:
        return cached[1]
    slots = Item.objects.filter(campaign=campaign, control="").aggregate(
        total=Sum("slots_wanted"))["total"] or 0
    size = math.ceil(slots / max(1, campaign.items_per_assignment))
    _STUDY_SIZES[campaign.pk] = (clock, size)
    return size
