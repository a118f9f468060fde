"""Per-worker and per-item tables as the statistics page shows them: at most PAGE_ROWS rows
each, so that a campaign of thousands of workers (or of judged items) still gives a page of a
bounded size served in well under a second. The rows kept are the first ones plus every row
that must be seen (a flagged worker); the page says how many it leaves out and where they all
are (the statistics API's JSON, and the report's bundle, whose CSV tables are whole)."""
from __future__ import annotations

from collections.abc import Callable

PAGE_ROWS = 200


def bounded(rows: list, *, keep: Callable | None = None, limit: int | None = None) -> dict:
    """`rows` (its order kept): the first `limit` (PAGE_ROWS), then only those `keep` picks."""
    limit = PAGE_ROWS if limit is None else limit
    shown = [r for i, r in enumerate(rows) if i < limit or (keep is not None and keep(r))]
    return {"rows": shown, "hidden": len(rows) - len(shown), "total": len(rows)}
