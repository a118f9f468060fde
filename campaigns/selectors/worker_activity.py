"""One worker's assignments with timings, and their attention-check and gold outcomes."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Count, Q, Sum

from ..models import Annotation, Assignment, Worker


@dataclass
class AssignmentRow:
    assignment: Assignment
    items: int
    answered: int
    seconds: float | None
    checks_passed: int
    checks_failed: int

    @property
    def duration(self) -> timedelta | None:
        a = self.assignment
        return a.submitted_at - a.started_at if a.submitted_at else None

    @property
    def duration_text(self) -> str:
        if self.duration is None:
            return "–"
        minutes, seconds = divmod(round(self.duration.total_seconds()), 60)
        hours, minutes = divmod(minutes, 60)
        return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {seconds:02d}s"

    @property
    def seconds_per_item(self) -> float | None:
        return round(self.seconds / self.answered, 1) if self.seconds and self.answered else None


def worker_assignments(*, worker: Worker) -> list[AssignmentRow]:
    """Every assignment of the worker, oldest first, in two queries."""
    assignments = list(Assignment.objects.filter(worker=worker)
                       .annotate(n_items=Count("slots")).order_by("started_at", "id"))
    stats = {
        r["assignment"]: r
        for r in Annotation.objects.filter(worker=worker).values("assignment").annotate(
            answered=Count("id"), seconds=Sum("seconds_spent"),
            passed=Count("id", filter=Q(control_passed=True)),
            failed=Count("id", filter=Q(control_passed=False)),
        ).order_by()
    }
    rows = []
    for a in assignments:
        s = stats.get(a.pk, {})
        rows.append(AssignmentRow(assignment=a, items=a.n_items, answered=s.get("answered", 0),
                                  seconds=s.get("seconds"), checks_passed=s.get("passed", 0),
                                  checks_failed=s.get("failed", 0)))
    return rows


def worker_control_outcomes(*, worker: Worker) -> list[Annotation]:
    """The worker's answers to attention-check and gold items, with the item and the outcome."""
    return list(Annotation.objects.filter(worker=worker).exclude(item__control="")
                .select_related("item").order_by("created_at", "id"))
