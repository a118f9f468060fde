"""A campaign big enough that its statistics take seconds: items, raters, one submitted
assignment per rater and their likert annotations, written in SQL by bench/synthetic.py."""
from __future__ import annotations

from bench.synthetic import rating_campaign
from campaigns.models import Campaign


def heavy_campaign(owner, *, items: int, raters: int = 5, slug: str = "heavy") -> Campaign:
    """Every one of `raters` workers rates every item."""
    return rating_campaign(owner, slug=slug, items=items, raters_per_item=raters)
