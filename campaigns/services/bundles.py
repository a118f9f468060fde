"""The paper bundle of a campaign's evaluation report (campaigns/exporting/bundle), built from
the cached report and the figures its job drew: nothing is computed or drawn in the request."""
from __future__ import annotations

from dataclasses import dataclass

from ..models import Campaign
from .statistics import Cached, Kind, statistics_request


@dataclass(frozen=True)
class Bundle:
    """`content` is the ZIP, or None while the report (with its figures) is being computed."""

    cached: Cached
    content: bytes | None
    filename: str


def report_bundle(*, campaign: Campaign, options: dict) -> Bundle:
    """The bundle of the cached report for these options; the first request (or one whose
    cached report predates figures) queues the computation and gets no content yet."""
    from ..exporting.bundle import bundle_zip

    cached = statistics_request(campaign=campaign, kind=Kind.REPORT, options=options)
    if cached.result is not None and cached.row.figures is None and not cached.computing:
        cached = statistics_request(campaign=campaign, kind=Kind.REPORT, options=options,
                                    recompute=True)
    filename = f"{campaign.slug}-paper-bundle.zip"
    if cached.result is None or cached.row.figures is None:
        return Bundle(cached=cached, content=None, filename=filename)
    return Bundle(cached=cached, content=bundle_zip(cached.result, cached.row.figures),
                  filename=filename)
