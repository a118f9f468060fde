"""Cached statistics: a campaign's statistics, report and side-by-side table are computed by a
Celery job and kept per set of options (a StatisticsResult row) with the time of the data.

A researcher's request reads the row (`statistics_cached`): the last result at once, marked
stale when an annotation changed after its data was read; with none yet it starts the job
(`statistics_request`) and the caller answers "being computed". `statistics_request(...,
recompute=True)` queues a new computation while the old result stays on show. With no broker
(the embedded mode) the job runs in the request, as every Celery task does there. The job's
lifecycle (claim, attempts, stale sweep) is campaigns/jobs/lifecycle.py's (kind STATISTICS).
A statistics recomputation after few changes reuses the last full computation's intervals and
says so (statistics_reuse.py); `full=True` recomputes everything, and reports always do.
"""
from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import F, Max, Q
from django.utils import timezone

from ..jobs import dispatch
from ..jobs.kinds import STATISTICS
from ..jobs.lifecycle import JobFailed, job_enqueue, job_run
from ..models import Annotation, Campaign, StatisticsResult
from ..selectors.provenance import statistics_resamples
from . import statistics_reuse as reuse

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = STATISTICS.max_attempts
Kind = StatisticsResult.Kind
Status = StatisticsResult.Status
# Every option of each kind with its default, so that the admin page (which sets few) and the
# API (which sets them all) share one cached result for the same figures.
DEFAULTS: dict[str, dict] = {
    Kind.STATISTICS: {"exclude_flagged": False, "correction": "holm", "alpha": 0.05,
                      "pair_by": None, "subset_by": [], "levels": {},
                      "include_failed_judge_outputs": False, "ties": None,
                      "style": False},
    Kind.SIDE_BY_SIDE: {"external_id": ""},
}
DEFAULTS[Kind.REPORT] = {**DEFAULTS[Kind.STATISTICS], "effect": None, "power": 0.8}


@dataclass(frozen=True)
class Cached:
    """What a request shows: the last result (None before the first), whether annotations
    changed since its data was read, and the state of the latest computation."""

    row: StatisticsResult
    stale: bool

    @property
    def result(self) -> dict | None:
        return self.row.result

    @property
    def computing(self) -> bool:
        return self.row.status in (Status.QUEUED, Status.RUNNING)


def statistics_options(*, kind: str, **options) -> dict:
    """The full, canonical options of a kind (unknown names are a programming error)."""
    unknown = set(options) - set(DEFAULTS[kind])
    if unknown:
        raise TypeError(f"unknown {kind} options: {sorted(unknown)}")
    full = {**DEFAULTS[kind], **options}
    if "subset_by" in full:
        full["subset_by"] = list(full["subset_by"])
    return json.loads(json.dumps(full, sort_keys=True))  # JSON types, as the row stores them


def _key(options: dict) -> str:
    return hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()


def stale_after() -> timedelta:
    """A queued or running computation older than this is taken as lost and queued again."""
    return STATISTICS.stale_after()


def statistics_cached(*, campaign: Campaign, kind: str, options: dict) -> Cached | None:
    """The cached row for these options, or None if nothing was ever asked for."""
    options = statistics_options(kind=kind, **options)
    row = StatisticsResult.objects.filter(campaign=campaign, kind=kind,
                                          options_key=_key(options)).first()
    if row is None:
        return None
    return Cached(row=row, stale=_changed_since(campaign, row.computed_at))


def _changed_since(campaign: Campaign, when: datetime | None) -> bool:
    """Whether an annotation, or the campaign's schema or settings (a renamed question), changed
    after `when`. Annotations rewritten in bulk by a schema change keep their updated_at, but
    the campaign's is set."""
    if when is None:
        return False
    if campaign.updated_at > when:
        return True
    # One index lookup (annotation_campaign_updated), however big the campaign.
    latest = Annotation.objects.filter(campaign=campaign).aggregate(at=Max("updated_at"))["at"]
    return latest is not None and latest > when


def statistics_request(*, campaign: Campaign, kind: str, options: dict,
                       recompute: bool = False, full: bool = False) -> Cached:
    """The cached row, first queuing a computation when there is none yet, when `recompute`
    asks for one, or when the last one was lost; never two at once. `full` (with `recompute`)
    computes every figure again, reusing nothing (statistics_reuse.py)."""
    options = statistics_options(kind=kind, **options)
    key = _key(options)
    row = StatisticsResult.objects.filter(campaign=campaign, kind=kind, options_key=key).first()
    if row is None:
        try:
            with transaction.atomic():
                row = StatisticsResult.objects.create(
                    campaign=campaign, kind=kind, options=options, options_key=key,
                    status=Status.QUEUED, queued_at=timezone.now())
            _dispatch(row)
        except IntegrityError:  # another request created it first: that one queued the job
            pass
        row = StatisticsResult.objects.get(campaign=campaign, kind=kind, options_key=key)
    elif recompute or _lost(row):  # a failure is tried again only when asked (a POST)
        _queue_again(row, full=recompute and full)
        row.refresh_from_db()
    return Cached(row=row, stale=_changed_since(campaign, row.computed_at))


def _lost(row: StatisticsResult) -> bool:
    since = row.started_at if row.status == Status.RUNNING else row.queued_at
    return (row.status in (Status.QUEUED, Status.RUNNING) and since is not None
            and since < timezone.now() - stale_after())


def _queue_again(row: StatisticsResult, *, full: bool = False) -> None:
    # Conditional: of two requests at once only one queues; a live computation is not doubled
    # (unless it is lost).
    now = timezone.now()
    idle = Q(status__in=(Status.DONE, Status.FAILED, Status.CANCELLED))
    lost = (Q(status=Status.QUEUED, queued_at__lt=now - stale_after())
            | Q(status=Status.RUNNING, started_at__lt=now - stale_after()))
    also = {"full_requested": True} if full else {}
    if StatisticsResult.objects.filter(Q(pk=row.pk) & (idle | lost)).update(
            status=Status.QUEUED, queued_at=now, error="", queued_attempts=F("attempts"),
            **also):
        _dispatch(row)


def _dispatch(row: StatisticsResult) -> None:
    """Start the job: in the request without a broker, else on Celery after the commit. A
    broker that is down fails the row with the reason and answers 503."""
    if dispatch.runs_in_process():
        statistics_compute(result_id=row.pk)
        return
    transaction.on_commit(lambda: job_enqueue(STATISTICS, row))


# --- the job ------------------------------------------------------------------------------------


def statistics_compute(*, result_id: int) -> None:
    """Compute a row's figures and store them with the time their data was read.

    The lifecycle's claim numbers the attempt; the result is stored only if no later attempt
    took over, so a re-delivered job and a slow first run do not overwrite each other with
    older figures. A failure keeps the last result and records the reason.
    """
    job_run(STATISTICS, result_id, _compute)


def _compute(row: StatisticsResult) -> dict:
    from ..selectors.analysis.budget import StatisticsTooLarge

    read_at = timezone.now()
    try:
        if row.kind == Kind.STATISTICS:
            result = _statistics_job(row, read_at)
            source = result
        else:
            result, source = COMPUTE[row.kind](row.campaign, dict(row.options))
        figures = _figures(row.kind, source)
    except StatisticsTooLarge as exc:  # refused before reading: the message says why
        raise JobFailed(str(exc)) from None
    except MemoryError:
        raise  # over the job's memory limit: the lifecycle states it
    except Exception as exc:  # noqa: BLE001 - any failure is recorded for the researcher
        logger.exception("statistics %s of campaign %s failed", row.kind, row.campaign_id)
        raise JobFailed(f"{type(exc).__name__}: {exc}"[:2000]) from None
    return {"error": "", "result": result, "computed_at": read_at, "figures": figures,
            "full_requested": False}


def _statistics_job(row: StatisticsResult, read_at: datetime) -> dict:
    """The statistics, in full or reusing the last full computation's resampled parts
    (statistics_reuse.py says when); the result's `computation` says which."""
    campaign = row.campaign
    now_basis = reuse.data_basis(campaign, read_at)
    reusable = None if row.full_requested else reuse.reusable_basis(campaign, row.result)
    if reusable is None:
        result, _ = COMPUTE[Kind.STATISTICS](campaign, dict(row.options))
        return {**result, "computation": reuse.full_record(now_basis)}
    basis, changed = reusable
    fresh, _ = _statistics(campaign, dict(row.options), n_boot=0, worker_reliability=False)
    return reuse.with_reused_parts(fresh, row.result, basis, changed, now_basis)


def _figures(kind: str, statistics: dict | None) -> list[dict] | None:
    """The figures of a statistics or report result, drawn here in the job from the
    statistics (the report's with PDFs too, for the paper bundle)."""
    if statistics is None:
        return None
    from ..analysis.figures import draw_figures

    return draw_figures(statistics, pdf=kind == Kind.REPORT)


def _statistics(campaign: Campaign, options: dict, **computation) -> tuple[dict, dict]:
    """The statistics; in full (STATISTICS_RESAMPLES resamples) unless `computation` says."""
    from ..selectors.analysis import campaign_statistics

    computation.setdefault("n_boot", statistics_resamples())
    options["subset_by"] = tuple(options["subset_by"])
    statistics = campaign_statistics(campaign=campaign, **options, **computation)
    return statistics, statistics


def _report(campaign: Campaign, options: dict) -> tuple[dict, dict]:
    """The report with its provenance (for the paper bundle); its figures are drawn from the
    statistics it was built from."""
    from ..analysis.figures.headline import headline
    from ..selectors.analysis import evaluation_report
    from ..selectors.provenance import report_provenance

    canonical = dict(options)
    statistics, _ = _statistics(campaign, {k: options[k] for k in DEFAULTS[Kind.STATISTICS]})
    built = evaluation_report(campaign=campaign, statistics=statistics,
                              effect=options["effect"], power=options["power"])
    # The bundle's methods text and datasheet read these beyond the report's own sections.
    built["bundle_facts"] = {"counts": statistics["counts"],
                             "worker_reliability": bool(statistics.get("worker_reliability")),
                             "levels": statistics.get("levels", [])}
    built["provenance"] = report_provenance(campaign=campaign, options=canonical)
    built["headline"] = headline(statistics)
    return built, statistics


def _side_by_side(campaign: Campaign, options: dict) -> tuple[dict, None]:
    from ..selectors.analysis import item_side_by_side

    return {"rows": item_side_by_side(campaign=campaign,
                                      external_id=options["external_id"])}, None


COMPUTE = {Kind.STATISTICS: _statistics, Kind.REPORT: _report, Kind.SIDE_BY_SIDE: _side_by_side}


def statistics_purge(*, campaign: Campaign) -> int:
    """Delete every cached figure of a campaign (they may hold a worker's answers or name)."""
    deleted, _ = StatisticsResult.objects.filter(campaign=campaign).delete()
    return deleted
