"""Celery tasks: thin wrappers that load a row by id and call a service; names are stable.

The services never import this module: they queue a task by its name (campaigns/jobs/
dispatch.py), and each task imports its service inside its body, so services and tasks do not
import each other. Every job's lifecycle is campaigns/jobs/lifecycle.py's.
"""
from __future__ import annotations

import os

from celery.signals import worker_init, worker_ready
from django.conf import settings

from annotate.celery import app

from .jobs.kinds import EXPORT, IMPORT, JUDGE_RUN, STATISTICS, TRANSIENT_ERRORS


@app.task(name="campaigns.expire_assignments", ignore_result=True)
def task_expire_assignments() -> int:
    """Periodic (celery beat): expire overdue assignments and free their unanswered items."""
    from .work import assignments_expire

    return assignments_expire()


@app.task(name=EXPORT.task, acks_late=True, ignore_result=True, autoretry_for=TRANSIENT_ERRORS,
          retry_backoff=5, max_retries=EXPORT.max_attempts - 1)
def task_export_run(*, job_id: int) -> None:
    """Run an export job; the service loads the row (quietly returning if it is gone or
    finished) and keeps the state on it. acks_late + reject_on_worker_lost (settings) mean a
    worker killed mid-run gets the job re-delivered; each delivery is a new attempt."""
    from .services.exports import export_job_run

    export_job_run(job_id=job_id)


@app.task(name=JUDGE_RUN.task, acks_late=True, ignore_result=True,
          autoretry_for=TRANSIENT_ERRORS, retry_backoff=5, max_retries=JUDGE_RUN.max_attempts - 1)
def task_judge_run(*, run_id: int) -> None:
    """Run an LLM judge over its scope; the state lives on the JudgeRun row. A re-delivered
    run (a worker killed mid-run) asks only for what no attempt stored."""
    from .services.judge_runs import judge_run_execute

    judge_run_execute(run_id=run_id)


@app.task(name=IMPORT.task, acks_late=True, ignore_result=True)
def task_import_items(*, job_id: int) -> None:
    """Import a stored item or judgments upload (ImportJob); all or nothing, the outcome on
    the row. (The name predates judgments uploads and stays: queued messages carry it.)"""
    from .services.imports import import_job_run

    import_job_run(job_id=job_id)


@app.task(name=STATISTICS.task, acks_late=True, ignore_result=True)
def task_statistics_compute(*, result_id: int) -> None:
    """Compute a campaign's cached statistics, report or side-by-side table (StatisticsResult);
    the result, or the failure's reason, is stored on the row. The pool process first lowers
    its CPU priority (STATISTICS_NICE): seconds of number crunching on a machine that also
    serves worker pages must not slow those down."""
    from .services.statistics import statistics_compute

    _lower_priority(settings.STATISTICS_NICE)
    statistics_compute(result_id=result_id)


def _lower_priority(niceness: int) -> None:
    # os.nice adds to the current value and cannot be undone without privileges, so the pool
    # process keeps it for its later (background) tasks; only ever raise it to `niceness`.
    current = os.nice(0)
    if niceness > current:
        os.nice(niceness - current)


def _sweep_stale_jobs() -> int:
    from .services.jobs import jobs_sweep

    return jobs_sweep()


# Periodic (celery beat): one sweep for every kind of job. The two older names stay registered
# so that messages queued before the one sweep still run (each sweeps every kind).
task_sweep_stale_jobs = app.task(name="campaigns.sweep_stale_jobs", ignore_result=True)(
    _sweep_stale_jobs)
task_export_sweep_stale = app.task(name="campaigns.export_sweep_stale", ignore_result=True)(
    _sweep_stale_jobs)
task_judge_sweep_stale = app.task(name="campaigns.judge_sweep_stale", ignore_result=True)(
    _sweep_stale_jobs)


@worker_init.connect
def limit_job_memory(**_kwargs) -> None:
    """Jobs in this worker (its pool processes inherit it) get JOB_MEMORY_LIMIT_MB each."""
    from .jobs import memory

    memory.enable()


@worker_ready.connect
def clean_spools_at_start(**_kwargs) -> None:
    """A worker starting after a crash deletes what its killed exports left on this host."""
    from .services.spools import spools_clean

    spools_clean()
