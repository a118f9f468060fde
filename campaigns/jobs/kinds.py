"""Every kind of background job and its attempts policy.

The policy: a job whose worker stopped (killed, restarted, out of memory) MAX_ATTEMPTS times
since it was queued is failed with the reason. Three tries tell a passing restart (a deploy,
a lost node) from a job that kills its worker every time, usually for memory on this data,
where a fourth try would only take the worker down again.
"""
from __future__ import annotations

from django.db import InterfaceError, OperationalError

from ..models import ExportJob, ImportJob, JudgeRun, StatisticsResult
from .lifecycle import JobKind

MAX_ATTEMPTS = 3
# Worth another delivery: the database connection dropped or the server restarted.
TRANSIENT_ERRORS = (OperationalError, InterfaceError)

EXPORT = JobKind(
    noun="export", model=ExportJob, task="campaigns.export_run", id_kwarg="job_id",
    stale_setting="EXPORT_STALE_SECONDS", max_attempts=MAX_ATTEMPTS,
    transient=TRANSIENT_ERRORS, reset={"rows_written": 0, "rows_total": None},
    related=("campaign", "requested_by"))

# An import runs in one transaction with its outcome: it is cancelled only while queued.
IMPORT = JobKind(
    noun="import", model=ImportJob, task="campaigns.import_items", id_kwarg="job_id",
    stale_setting="IMPORT_STALE_SECONDS", max_attempts=MAX_ATTEMPTS, cancel_running=False,
    atomic=True, related=("campaign",))

# Judge runs get more attempts: a run resumes from the outputs it stored (a restart costs
# only the answers received since the last store, never the whole run), and a long run over
# a slow endpoint lives through more restarts of its worker than a minute-long export does.
JUDGE_RUN = JobKind(
    noun="run", model=JudgeRun, task="campaigns.judge_run", id_kwarg="run_id",
    stale_setting="LLM_JUDGE_STALE_SECONDS", max_attempts=5, reset={"done": 0, "failed": 0},
    related=("judge__campaign",), owner="judge__campaign__owner")

STATISTICS = JobKind(
    noun="computation", model=StatisticsResult, task="campaigns.statistics_compute",
    id_kwarg="result_id", stale_setting="STATISTICS_STALE_SECONDS",
    max_attempts=MAX_ATTEMPTS, related=("campaign",))

KINDS = (EXPORT, IMPORT, JUDGE_RUN, STATISTICS)
