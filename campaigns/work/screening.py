"""Screening at the claim: eligibility and quotas from the intake's rules, before any work.

A worker whose intake answers break a rule (campaigns/schema/screening.py) is screened out
for good on this campaign: marked on their row, no item claimed, no slot held. Quotas count
the participants who hold a place (an active or submitted assignment) with the same answer;
the count and the claim run in one transaction under a per-campaign advisory lock, so two
concurrent starts cannot both take the last place of a quota.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache

from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from ..errors import ScreenedOut
from ..models import Assignment, Campaign, Worker
from ..schema import SchemaInvalid, parse_intake
from ..schema.screening import ScreeningRule, answer_key, has_quotas, screening_failure

__all__ = ["SCREENED_OUT_MESSAGE", "claim_screened", "intake_rules", "quota_screen_out_early",
           "worker_screen_out"]

SCREENED_OUT_MESSAGE = ("Thank you for your answers. This study is looking for other "
                        "participants, so there is no work for you in it.")
# The first key of the two-key advisory lock: the quota lock's namespace (the second key is
# the campaign's id), so it never meets another advisory lock of the same campaign id.
QUOTA_LOCK_NAMESPACE = 30_001
PLACE_HOLDING = (Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED)


@lru_cache(maxsize=256)
def _rules_of(text: str) -> tuple[ScreeningRule, ...]:
    try:
        return tuple(parse_intake(json.loads(text))[1])
    except SchemaInvalid:
        return ()  # stored before the rules were checked: screens nobody out


def intake_rules(campaign: Campaign) -> tuple[ScreeningRule, ...]:
    """The campaign's screening rules (parsed once per content)."""
    if not campaign.intake_questions:
        return ()
    return _rules_of(json.dumps(campaign.intake_questions, sort_keys=True))


def worker_screen_out(*, worker: Worker, reason: str) -> Worker:
    """Mark the worker screened out (the first reason stays) and raise nothing."""
    if worker.screened_out_at is None:
        now = timezone.now()
        updated = Worker.objects.filter(pk=worker.pk, screened_out_at__isnull=True).update(
            screened_out_at=now, screened_out_reason=reason)
        if updated:
            worker.screened_out_at, worker.screened_out_reason = now, reason
        else:
            worker.refresh_from_db(fields=["screened_out_at", "screened_out_reason"])
    return worker


def _holds_place(worker_ref) -> Exists:
    return Exists(Assignment.objects.filter(worker=worker_ref, status__in=PLACE_HOLDING))


def _full_quota(campaign: Campaign, rules, worker: Worker) -> str | None:
    """The id of a question whose quota for this worker's answer is full, or None."""
    intake = worker.intake or {}
    for rule in rules:
        answer = intake.get(rule.question_id)
        most = rule.quota.get(answer_key(answer)) if answer is not None else None
        if most is None:
            continue
        if isinstance(answer, dict):
            same = Q(**{f"intake__{rule.question_id}__value": answer.get("value")})
        else:
            same = Q(**{f"intake__{rule.question_id}": answer})
        taken = (Worker.objects.filter(same, campaign=campaign, screened_out_at__isnull=True)
                 .exclude(pk=worker.pk).filter(_holds_place(OuterRef("pk"))).count())
        if taken >= most:
            return rule.question_id
    return None


def claim_screened(campaign: Campaign, worker: Worker, claim: Callable[[], Assignment],
                   qualify: Callable[[], None] | None = None) -> Assignment:
    """Run `claim` for a worker the intake's rules admit; else raise ScreenedOut.

    A worker screened out before stays out; an ineligible answer screens out at once; then
    `qualify` (the qualification step) may stop the claim; with quotas, the count and the
    claim share one transaction under the campaign's quota lock (a worker who already holds
    a place is not counted again).
    """
    if worker.screened_out_at is not None:
        raise ScreenedOut(SCREENED_OUT_MESSAGE, extra={"reason": worker.screened_out_reason})
    rules = intake_rules(campaign)
    failed = screening_failure(list(rules), worker.intake or {})
    if failed is not None:
        _screen_out(worker, f"ineligible:{failed}")
    if qualify is not None:
        qualify()
    if not has_quotas(list(rules)):
        return claim()
    if Assignment.objects.filter(worker=worker, status__in=PLACE_HOLDING).exists():
        return claim()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)",
                           [QUOTA_LOCK_NAMESPACE, campaign.pk])
        full = _full_quota(campaign, rules, worker)
        if full is None:
            return claim()
        worker_screen_out(worker=worker, reason=f"quota:{full}")
    raise ScreenedOut(SCREENED_OUT_MESSAGE, extra={"reason": worker.screened_out_reason})


def quota_screen_out_early(campaign: Campaign, worker: Worker) -> None:
    """Screen out now a worker whose quota is already full, before a step that precedes the
    claim (the qualification test), so that nobody takes a test for a place that is gone.
    Read without the lock: the claim counts again under it."""
    rules = intake_rules(campaign)
    if not has_quotas(list(rules)):
        return
    full = _full_quota(campaign, rules, worker)
    if full is not None:
        _screen_out(worker, f"quota:{full}")


def _screen_out(worker: Worker, reason: str):
    worker_screen_out(worker=worker, reason=reason)
    raise ScreenedOut(SCREENED_OUT_MESSAGE, extra={"reason": worker.screened_out_reason})
