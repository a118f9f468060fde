"""Row locks for the hot path and the writes that must not interleave with it."""
from __future__ import annotations

from django.db.models import QuerySet

__all__ = ["for_update"]


def for_update(qs: QuerySet, *, skip_locked: bool = False) -> QuerySet:
    """`SELECT ... FOR NO KEY UPDATE [SKIP LOCKED]`.

    NO KEY UPDATE (not plain FOR UPDATE) so that inserting rows that reference the locked
    row (annotations of a worker, items of an assignment) does not wait for the lock.
    """
    return qs.select_for_update(skip_locked=skip_locked, no_key=True)
