"""Celery tasks: thin wrappers that load a row by id and call a service; names are stable."""
from __future__ import annotations

import os

from celery.signals import worker_ready
from django.conf import settings

from annotate.celery import app

from .services.exports import (
    MAX_ATTEMPTS,
    TRANSIENT_ERRORS,
    export_job_run,
    export_jobs_sweep_stale,
)
from .services.imports import import_job_run
from .services.judges import judge_run_execute, judge_runs_sweep_stale
from .services.spools import spools_clean
from .services.statistics import statistics_compute
from .work import assignments_expire


@app.task(name="campaigns.expire_assignments", ignore_result=True)
def task_expire_assignments() -> int:
    """Periodic (celery beat): expire overdue assignments and free their unanswered items."""
    return assignments_expire()


@app.task(
    name="campaigns.export_run",
    acks_late=True,
    ignore_result=True,
    autoretry_for=TRANSIENT_ERRORS,
    retry_backoff=5,
    max_retries=MAX_ATTEMPTS - 1,
)
def task_export_run(*, job_id: int) -> None:
    """Run an export job; the service loads the row (quietly returning if it is gone or
    finished) and keeps the state on it. acks_late + reject_on_worker_lost (settings) mean a
    worker killed mid-run gets the job re-delivered; each delivery is a new attempt."""
    export_job_run(job_id=job_id)


@app.task(name="campaigns.export_sweep_stale", ignore_result=True)
def task_export_sweep_stale() -> int:
    """Periodic (celery beat): re-queue or fail export jobs whose heartbeat stopped."""
    return export_jobs_sweep_stale()


@app.task(name="campaigns.judge_run", acks_late=True, ignore_result=True,
          autoretry_for=TRANSIENT_ERRORS, retry_backoff=5, max_retries=MAX_ATTEMPTS - 1)
def task_judge_run(*, run_id: int) -> None:
    """Run an LLM judge over its scope; the state lives on the JudgeRun row. A re-delivered
    run (a worker killed mid-run) asks only for what no attempt stored."""
    judge_run_execute(run_id=run_id)


@app.task(name="campaigns.judge_sweep_stale", ignore_result=True)
def task_judge_sweep_stale() -> int:
    """Periodic (celery beat): queue again the judge runs whose heartbeat stopped."""
    return judge_runs_sweep_stale()


@app.task(name="campaigns.import_items", acks_late=True, ignore_result=True)
def task_import_items(*, job_id: int) -> None:
    """Import a stored item or judgments upload (ImportJob); all or nothing, the outcome on
    the row. (The name predates judgments uploads and stays: queued messages carry it.)"""
    import_job_run(job_id=job_id)


@app.task(name="campaigns.statistics_compute", acks_late=True, ignore_result=True)
def task_statistics_compute(*, result_id: int) -> None:
    """Compute a campaign's cached statistics, report or side-by-side table (StatisticsResult);
    the result, or the failure's reason, is stored on the row. The pool process first lowers
    its CPU priority (STATISTICS_NICE): seconds of number crunching on a machine that also
    serves worker pages must not slow those down."""
    _lower_priority(settings.STATISTICS_NICE)
    statistics_compute(result_id=result_id)


def _lower_priority(niceness: int) -> None:
    # os.nice adds to the current value and cannot be undone without privileges, so the pool
    # process keeps it for its later (background) tasks; only ever raise it to `niceness`.
    current = os.nice(0)
    if niceness > current:
        os.nice(niceness - current)


@worker_ready.connect
def clean_spools_at_start(**_kwargs) -> None:
    """A worker starting after a crash deletes what its killed exports left on this host."""
    spools_clean()
