"""Per-worker and per-item tables as the statistics page shows them: at most PAGE_ROWS rows
each, so that a campaign of thousands of workers (or of judged items) still gives a page of a
bounded size served in about a second. The rows that must be seen (flagged workers, the item
asked for) are kept before the others; the page says how many it leaves out and where they all
are (the statistics API's JSON, and the report's bundle, whose CSV tables are whole)."""
from __future__ import annotations

from collections.abc import Callable

PAGE_ROWS = 200


def bounded(rows: list, *, keep: Callable | None = None, limit: int | None = None) -> dict:
    """At most `limit` (PAGE_ROWS) of `rows`, in their order: those `keep` picks first, then
    the first of the others."""
    limit = PAGE_ROWS if limit is None else limit
    picked = [keep is not None and bool(keep(r)) for r in rows]
    first = [i for i, p in enumerate(picked) if p][:limit]
    others = [i for i, p in enumerate(picked) if not p][:limit - len(first)]
    shown = [rows[i] for i in sorted(first + others)]
    return {"rows": shown, "hidden": len(rows) - len(shown), "total": len(rows),
            "hidden_picked": sum(picked) - len(first)}
