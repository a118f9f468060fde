"""The figures of a cached statistics result as the admin pages show them: each an image of
its SVG (drawn by the statistics job; an <img> runs no script and keeps the page's CSP), its
text alternative and its data table; and the headline sentences."""
from __future__ import annotations

import base64

from ..analysis.figures.headline import headline
from ..services.statistics import Cached
from .bounded import bounded


def figures_context(cached: Cached | None, statistics: dict | None,
                    sentences: list[str] | None = None) -> dict:
    """`sentences`: a headline already written (the report's), else one from `statistics`."""
    figures = (cached.row.figures if cached is not None else None) or []
    return {
        "figures": [{**f, "src": "data:image/svg+xml;base64,"
                     + base64.b64encode(f["svg"].encode()).decode("ascii"),
                     "anchor": "figure-" + "".join(c if c.isalnum() else "-" for c in f["key"]),
                     "table": bounded(f["rows"], keep=_flagged if f["key"] == "workers" else None)}
                    for f in figures],
        "headline": sentences or (headline(statistics) if statistics else []),
    }



def _flagged(row: list) -> bool:
    return row[-1] == "yes"  # the workers figure's last column: flagged by quality control
