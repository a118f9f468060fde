"""LLM judge runs: start, cancel and resume them, and run them (the Celery task's work).

A run renders each item's prompt, skips every (item, prompt hash, sample) whose valid output
is stored or whose attempts are used up, and asks the endpoint for the rest (judge_runner.py).
The run's lifecycle (claim, heartbeat, attempts, stale sweep, cancel, retry) is
campaigns/jobs/lifecycle.py's, kind JUDGE_RUN; a resume is the lifecycle's retry.
"""
from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from ..errors import Conflict, ServiceError
from ..jobs.kinds import JUDGE_RUN
from ..jobs.lifecycle import (
    ACTIVE,
    JobFailed,
    Stopped,
    job_cancel,
    job_enqueue,
    job_enqueue_on_commit,
    job_retry,
    job_run,
    jobs_sweep_stale,
)
from ..judging.client import EndpointDown
from ..judging.prompts import NotJudgeable, PromptTemplateInvalid
from ..models import Judge, JudgeRun
from ..schema import SchemaInvalid
from ..selectors.judges import (
    JudgeUnusable,
    judge_budget_problem,
    judge_endpoint_problem,
    judge_run_estimate,
)
from .judge_runner import Runner

logger = logging.getLogger(__name__)


def _clean_scope(scope: Any) -> dict:
    if not isinstance(scope, dict):
        raise ServiceError('The scope must be {"scope": "all"}, {"system": ...} or '
                           '{"sample": n}.', code="bad_scope")
    keys = set(scope) & {"scope", "system", "sample"}
    if set(scope) - {"scope", "system", "sample"} or len(keys) != 1:
        raise ServiceError('Give exactly one of "scope": "all", "system" or "sample".',
                           code="bad_scope")
    if "scope" in scope and scope["scope"] != "all":
        raise ServiceError('"scope" takes only "all".', code="bad_scope")
    if "system" in scope and (not isinstance(scope["system"], str) or not scope["system"]):
        raise ServiceError('"system" must be a system name.', code="bad_scope")
    sample = scope.get("sample", 1)
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 1:
        raise ServiceError('"sample" must be a whole number of items, at least 1.',
                           code="bad_scope")
    return dict(scope)


def judge_run_start(*, judge: Judge, requested_by=None, scope: Any, enqueue: bool = True
                    ) -> JudgeRun:
    """Record a run (with its estimate) and queue it once the transaction commits.

    409 when the judge has no endpoint or a run of it is queued or running; 400 for a bad
    scope or a campaign whose schema or template does not work."""
    scope = _clean_scope(scope)
    problem = judge_endpoint_problem(judge)
    if problem:
        raise Conflict(problem, extra={"field": "provider" if judge.provider else "base_url"})
    try:
        estimate = judge_run_estimate(judge, scope)
    except SchemaInvalid as exc:
        raise ServiceError(f"The campaign's schema is invalid: {exc}") from None
    except PromptTemplateInvalid as exc:
        raise ServiceError(str(exc), code="judge_invalid",
                           extra={"errors": {"prompt_template": str(exc)}}) from None
    except NotJudgeable as exc:
        raise ServiceError(str(exc), code="not_judgeable") from None
    over_budget = judge_budget_problem(judge, estimate)
    if over_budget:
        raise Conflict(over_budget, code="over_budget")
    with transaction.atomic():
        Judge.objects.select_for_update().filter(pk=judge.pk).first()  # one start at a time
        active = judge.runs.filter(status__in=ACTIVE).first()
        if active is not None:
            raise Conflict(f"Run {active.pk} of this judge is {active.status}; cancel it or "
                           "wait for it to end.", extra={"run": active.pk})
        run = JudgeRun.objects.create(judge=judge, requested_by=requested_by, scope=scope,
                                      total=estimate["units"], estimate=estimate,
                                      queued_at=timezone.now())
        if enqueue:
            job_enqueue_on_commit(JUDGE_RUN, run)
    return run


def judge_run_enqueue(*, run: JudgeRun) -> None:
    """Send the run to the task queue; a broker that is down fails the run and raises 503."""
    job_enqueue(JUDGE_RUN, run)


def judge_run_cancel(*, run: JudgeRun) -> JudgeRun:
    """Stop a queued or running run: requests in flight finish and are stored, no new ones
    are sent. 409 if the run already ended."""
    return job_cancel(JUDGE_RUN, run)


def judge_run_resume(*, run: JudgeRun, enqueue: bool = True) -> JudgeRun:
    """Queue a cancelled or failed run again; what it stored is never asked for again."""
    with transaction.atomic():
        Judge.objects.select_for_update().filter(pk=run.judge_id).first()
        if run.judge.runs.filter(status__in=ACTIVE).exclude(pk=run.pk).exists():
            raise Conflict("Another run of this judge is queued or running.")
        return job_retry(JUDGE_RUN, run, enqueue=enqueue)


def judge_runs_sweep_stale(*, older_than: timedelta | None = None) -> int:
    """Queue again the running runs whose heartbeat stopped (their worker died); a run whose
    worker stopped as many times as its attempts allow fails. Returns how many it touched."""
    return jobs_sweep_stale((JUDGE_RUN,), older_than=older_than)


def judge_run_execute(*, run_id: int) -> None:
    """Run to done, failed or cancelled; return quietly if the run is gone or has ended."""
    job_run(JUDGE_RUN, run_id, _execute)


def _exact_estimate(run: JudgeRun) -> None:
    """A run started from a sampled estimate gets the exact one before its first request, and
    is failed (nothing sent) if the exact one is over the researcher's token budget."""
    if not (run.estimate or {}).get("sampled"):
        return
    estimate = judge_run_estimate(run.judge, run.scope, exact=True)
    JudgeRun.objects.filter(pk=run.pk).update(estimate=estimate, total=estimate["units"])
    over_budget = judge_budget_problem(run.judge, estimate)
    if over_budget:
        raise JobFailed(over_budget)


def _execute(run: JudgeRun) -> dict[str, Any]:
    try:
        _exact_estimate(run)
        outcome = Runner(run).execute()
    except EndpointDown as exc:
        raise JobFailed(f"the endpoint is down: {exc}") from None
    except (SchemaInvalid, PromptTemplateInvalid, NotJudgeable, JudgeUnusable) as exc:
        raise JobFailed(str(exc)) from None
    if outcome != "finished":
        raise Stopped  # cancelled, or a newer attempt took over
    return {}
