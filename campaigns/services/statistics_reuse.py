"""When a statistics recomputation may reuse the resampled parts of the last full computation.

The rule (docs/analysis.md, "Recomputing after a few new answers"): every point estimate,
count and tally is computed from all annotations every time. The resampled parts (every 95%
interval: agreement, scores, the pair tests' bootstrap, the human ceiling's) and the worker
reliability models (an EM fit per part over every item) are taken from the last full
computation while few annotations changed since it: new, edited and deleted annotations
together at most STATISTICS_REFRESH_FRACTION of the annotations it was computed from, with the
same campaign settings (schema, questions: the campaign's `updated_at`) and the same options
(one cached row per set of options). Otherwise, and whenever a full recomputation is asked for,
everything is computed again. A result that reuses says so in `computation` with the number of
annotations and the time of the computation its intervals come from.

The basis of a full computation (`computation.intervals_basis`) is carried over by every reuse,
so the changed share is always counted against the data the intervals were computed from,
never against the last partial computation (small steps do not add up unnoticed).
"""
from __future__ import annotations

from datetime import UTC, datetime

from django.conf import settings
from django.db.models import Count, Max
from django.utils.dateparse import parse_datetime

from ..models import Annotation, Campaign

# Tables reused whole, point estimates included: an iterative model refitted over every item,
# shown with its basis like the intervals.
REUSED_TABLES = ("worker_reliability",)
# A column is an interval's when its name says so; only those are filled from the last full
# computation, and only where the point-estimate computation left them empty.
INTERVAL_SUFFIXES = ("_low", "_high")
INTERVAL_NAMES = {"ci_method"}
# How many resamples a row's intervals used: always the computation's the intervals come from.
RESAMPLE_COUNTS = {"n_boot_used"}
# What identifies a row across computations (the columns of a table that exist in it).
ROW_KEYS = ("question", "part", "subset", "system", "system_a", "system_b", "judge", "worker",
            "model", "level", "item", "label", "category", "severity", "measure", "test")


def refresh_fraction() -> float:
    return float(getattr(settings, "STATISTICS_REFRESH_FRACTION", 0.02))


def data_basis(campaign: Campaign, read_at: datetime) -> dict:
    """What a computation is computed from, read before its data: the annotations (count and
    last id, every annotation of the campaign, judges' included), the campaign's settings."""
    seen = Annotation.objects.filter(campaign=campaign).aggregate(n=Count("id"), last=Max("id"))
    return {"annotations": seen["n"], "last_annotation_id": seen["last"] or 0,
            "read_at": read_at.isoformat(), "settings_at": campaign.updated_at.isoformat()}


def annotations_changed(campaign: Campaign, basis: dict) -> int:
    """New, edited and deleted annotations since `basis` was read (each index lookups)."""
    annotations = Annotation.objects.filter(campaign=campaign)
    last = basis["last_annotation_id"]
    new = annotations.filter(id__gt=last).count()
    edited = annotations.filter(id__lte=last,
                                updated_at__gt=parse_datetime(basis["read_at"])).count()
    # Negative when an answer saved before the basis was read committed after it (its id
    # and time are older than the basis): counted as a change too.
    deleted = basis["annotations"] - (annotations.count() - new)
    return new + edited + abs(deleted)


def reusable_basis(campaign: Campaign, previous: dict | None) -> tuple[dict, int] | None:
    """(the full computation's basis, annotations changed since) when `previous` (the row's
    last result) may lend its resampled parts to a new computation; None when everything must
    be computed again."""
    computation = (previous or {}).get("computation") or {}
    basis = computation.get("intervals_basis")
    if not basis or basis["settings_at"] != campaign.updated_at.isoformat():
        return None
    changed = annotations_changed(campaign, basis)
    if changed > refresh_fraction() * basis["annotations"]:
        return None
    return basis, changed


def full_record(basis: dict) -> dict:
    """The `computation` of a full computation: every figure from the data of `basis`."""
    return {"intervals": "computed", "intervals_basis": basis,
            "refresh_fraction": refresh_fraction()}


def with_reused_parts(fresh: dict, previous: dict, basis: dict, changed: int,
                      now_basis: dict) -> dict:
    """`fresh` (point estimates from all annotations, no resampling, no reused tables) with the
    intervals and REUSED_TABLES of `previous`, and the record that says so."""
    out = _splice(fresh, previous)
    for name in REUSED_TABLES:
        out[name] = previous.get(name, [])
    out["resamples"] = previous.get("resamples", out.get("resamples"))
    out["computation"] = {
        "intervals": "reused", "intervals_basis": basis, "point_estimates_basis": now_basis,
        "annotations_changed": changed, "refresh_fraction": refresh_fraction(),
        "reused_tables": list(REUSED_TABLES),
        "note": (f"Intervals and worker reliability from the computation over "
                 f"{basis['annotations']:,} annotations at {_when(basis['read_at'])}; point "
                 f"estimates "
                 f"from all {now_basis['annotations']:,} ({changed:,} changed since, within "
                 f"{refresh_fraction():.0%}). Recompute in full for every figure from the "
                 f"current data."),
    }
    return out


def _when(iso: str) -> str:
    return parse_datetime(iso).astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def is_interval(name: str) -> bool:
    return name in INTERVAL_NAMES or name.endswith(INTERVAL_SUFFIXES) or "_ci_" in name


def _splice(fresh, previous):
    """Walk both results alike: in each row, an interval column left empty in `fresh` takes
    the value of the row with the same ROW_KEYS in `previous` (a row new since has none)."""
    if isinstance(fresh, dict) and isinstance(previous, dict):
        return {k: _splice(v, previous[k]) if k in previous else v for k, v in fresh.items()}
    if isinstance(fresh, list) and isinstance(previous, list):
        if not all(isinstance(r, dict) for r in fresh + previous):
            return fresh
        before = {_identity(r): r for r in previous}
        if len(before) < len(previous):  # rows not told apart: none is given another's
            return fresh
        return [_row(r, before.get(_identity(r))) for r in fresh]
    return fresh


def _row(fresh: dict, previous: dict | None) -> dict:
    if previous is None:
        return fresh
    out = {}
    for name, value in fresh.items():
        if (value is None and is_interval(name)) or name in RESAMPLE_COUNTS:
            out[name] = previous.get(name)
        elif isinstance(value, (dict, list)) and name in previous:
            out[name] = _splice(value, previous[name])
        else:
            out[name] = value
    return out


def _identity(row: dict) -> str:
    return repr([(k, row[k]) for k in ROW_KEYS if k in row])
