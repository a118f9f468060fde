"""Reads for the worker's pages: an assignment's items in order, answers, progress."""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Exists, OuterRef
from django.utils import timezone

from ..models import Annotation, Assignment, AssignmentItem, Item, Worker

__all__ = [
    "AssignmentEntry",
    "AssignmentPage",
    "Progress",
    "assignment_by_token",
    "assignment_entries",
    "assignment_page",
    "assignment_progress",
    "worker_open_assignment",
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


def assignment_by_token(*, token: str) -> Assignment | None:
    """The assignment this token opens (with its campaign and worker), or None."""
    if not token or len(token) > 64:
        return None
    return (Assignment.objects.select_related("campaign", "worker")
            .filter(token=token).first())


def worker_open_assignment(*, worker: Worker) -> Assignment | None:
    """The worker's active assignment that is still before its deadline, if any."""
    return (Assignment.objects.filter(worker=worker, status=Assignment.Status.ACTIVE,
                                      deadline__gt=timezone.now())
            .select_related("campaign").order_by("-id").first())


def assignment_progress(*, assignment: Assignment) -> Progress:
    """Answered / total items and the first unanswered position (one query)."""
    answered = Annotation.objects.filter(assignment=assignment, item=OuterRef("item"))
    rows = list(AssignmentItem.objects.filter(assignment=assignment)
                .annotate(answered=Exists(answered)).order_by("position")
                .values_list("position", "answered"))
    done = frozenset(position for position, is_answered in rows if is_answered)
    following = next((position for position, is_answered in rows if not is_answered), None)
    return Progress(answered=len(done), total=len(rows), next_position=following,
                    answered_positions=done)


def assignment_entries(*, assignment: Assignment) -> list[AssignmentEntry]:
    """Every item of the assignment in order, each with its annotation or None (two queries)."""
    slots = list(AssignmentItem.objects.filter(assignment=assignment).select_related("item")
                 .order_by("position"))
    annotations = {a.item_id: a for a in Annotation.objects.filter(assignment=assignment)}
    return [AssignmentEntry(s.position, s.item, annotations.get(s.item_id)) for s in slots]


def assignment_page(*, assignment: Assignment, position: int) -> AssignmentPage | None:
    """The item at `position` with its saved answers and the progress, or None.

    Two queries (progress, then the item); a third loads the answers only when there are some.
    """
    progress = assignment_progress(assignment=assignment)
    if not 1 <= position <= progress.total:
        return None
    slot = (AssignmentItem.objects.filter(assignment=assignment, position=position)
            .select_related("item").first())
    if slot is None:
        return None
    annotation = None
    if position in progress.answered_positions:
        annotation = Annotation.objects.filter(assignment=assignment,
                                               item_id=slot.item_id).first()
    entry = AssignmentEntry(slot.position, slot.item, annotation)
    return AssignmentPage(entry=entry, progress=progress)
