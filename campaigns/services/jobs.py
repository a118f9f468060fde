"""Background jobs of every kind at once: the periodic stale sweep, and cancel and retry on
request for whichever kind a job is (the admin's job lists and the API's job routes)."""
from __future__ import annotations

from datetime import timedelta

from ..jobs.kinds import EXPORT, KINDS, STATISTICS
from ..jobs.lifecycle import job_cancel, job_retry, jobs_sweep_stale
from ..models import BackgroundJob, ExportJob, ImportJob, JudgeRun, StatisticsResult
from .imports import import_job_cancel, import_job_retry
from .judge_runs import judge_run_cancel, judge_run_resume
from .spools import spools_clean


def jobs_sweep(*, older_than: timedelta | None = None) -> int:
    """Re-queue (or fail, with their attempts used up) every kind's running jobs whose
    heartbeat stopped, after deleting what killed exports left in this host's spool."""
    spools_clean()
    return jobs_sweep_stale(KINDS, older_than=older_than)


def job_cancel_request(*, job: BackgroundJob) -> BackgroundJob:
    """Cancel a queued or running job (409 once it ended, or where its kind cannot stop)."""
    if isinstance(job, ImportJob):
        return import_job_cancel(job=job)
    if isinstance(job, JudgeRun):
        return judge_run_cancel(run=job)
    return job_cancel(EXPORT if isinstance(job, ExportJob) else STATISTICS, job)


def job_retry_request(*, job: BackgroundJob) -> BackgroundJob:
    """Queue a failed or cancelled job again (409 for one that is queued, running or done)."""
    if isinstance(job, ImportJob):
        return import_job_retry(job=job)
    if isinstance(job, JudgeRun):
        return judge_run_resume(run=job)
    if isinstance(job, StatisticsResult):
        return job_retry(STATISTICS, job)
    return job_retry(EXPORT, job)
