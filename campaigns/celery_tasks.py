"""Celery tasks: thin wrappers that call services (see CONVENTIONS §7)."""
from __future__ import annotations

from annotate.celery import app

from .services.assignments import assignments_expire


@app.task(name="campaigns.expire_assignments", ignore_result=True)
def task_expire_assignments() -> int:
    """Periodic (celery beat): expire overdue assignments and free their unanswered items."""
    return assignments_expire()
