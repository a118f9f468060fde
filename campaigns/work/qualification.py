"""The qualification step: a short test of the campaign's gold items before the main items.

The claim asks for it (`qualification_gate`, called by work/claim.py after the intake's
eligibility rules and before quotas and the pick): a worker who has not passed the test on
this campaign, nor on another campaign of the same owner with the same group, gets
QualificationRequired and their test instead of work. Nothing is claimed and no slot is held
while they take it. Each answer is scored against the item's expected answers when saved
(schema/scoring.py, control_passed: a choice must be the expected option, a number within
the item's gold_tolerance, text equal ignoring case and surrounding spaces); the answer that
completes the test decides it: at least pass_mark x items correct passes, below it the worker
is screened out for good on the campaign (reason "qualification"). Answers are stored in
QualificationAnswer, apart from the main annotations, and are given once: with feedback the
expected answer is shown after each, so a second try would measure nothing.

A worker whose quota is already full is screened out before the test rather than after it
(the claim counts the quota again, under its lock). Workers who already hold or held an
assignment on the campaign are not stopped by a test added later. Outcomes are shared within
a group (same owner, same group name, same platform and participant id): a pass admits, a
failure screens out, and a row carried over from the other campaign (`carried_from`)
records it here.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from django.db import IntegrityError, transaction
from django.utils import timezone

from ..errors import QualificationRequired, ScreenedOut, ServiceError
from ..models import Assignment, Campaign, Item, Qualification, QualificationAnswer, Worker
from ..schema import SchemaInvalid, campaign_schema
from ..schema.qualification import QualificationSettings, parse_qualification
from ..schema.scoring import answer_values
from .screening import SCREENED_OUT_MESSAGE, quota_screen_out_early, worker_screen_out

__all__ = ["QUALIFICATION_FAILED", "QualificationSaved", "qualification_answer",
           "qualification_by_token", "qualification_gate", "qualification_item_ids",
           "qualification_next_position", "qualification_of", "qualification_position_answer"]

QUALIFICATION_FAILED = "qualification"  # the worker's screened_out_reason
FINISHED = (Qualification.Status.PASSED, Qualification.Status.FAILED)


@lru_cache(maxsize=256)
def _settings_of(text: str) -> QualificationSettings | None:
    try:
        return parse_qualification(json.loads(text))
    except SchemaInvalid:
        return None  # stored before it was checked: no test


def qualification_of(campaign: Campaign) -> QualificationSettings | None:
    """The campaign's test settings (parsed once per content), or None: no test."""
    if not campaign.qualification:
        return None
    return _settings_of(json.dumps(campaign.qualification, sort_keys=True))


def qualification_item_ids(campaign: Campaign) -> list[int]:
    """The ids of the test's gold items, in the listed order (missing ones left out)."""
    settings = qualification_of(campaign)
    if settings is None:
        return []
    found = dict(Item.objects.filter(campaign=campaign, control=Item.Control.GOLD,
                                     gold__isnull=False, external_id__in=settings.items)
                 .values_list("external_id", "id"))
    return [found[e] for e in settings.items if e in found]


def qualification_gate(campaign: Campaign, worker: Worker, platform_ids: dict,
                       max_items: int | None = None) -> None:
    """Return when the worker may be handed work; raise QualificationRequired (their test,
    created now if new) or ScreenedOut (they failed it, here or in the group)."""
    settings = qualification_of(campaign)
    if settings is None:
        return
    current = Qualification.objects.filter(worker=worker).first()
    if current is None:
        if Assignment.objects.filter(worker=worker).exists():
            return  # started before the test was asked for
        quota_screen_out_early(campaign, worker)  # no test for a place that is gone
        current = _carried_over(campaign, worker, settings) or _new_test(
            campaign, worker, settings, platform_ids, max_items)
        if current is None:
            return  # none of the test's items is left: nothing to test with
    if current.status == Qualification.Status.PASSED:
        return
    if current.status == Qualification.Status.FAILED:
        worker_screen_out(worker=worker, reason=QUALIFICATION_FAILED)
        raise ScreenedOut(SCREENED_OUT_MESSAGE, extra={"reason": QUALIFICATION_FAILED})
    raise QualificationRequired(current)


def _carried_over(campaign: Campaign, worker: Worker,
                  settings: QualificationSettings) -> Qualification | None:
    """This worker's finished test in another campaign of the owner's group, recorded here."""
    if not settings.group:
        return None
    # "passed" sorts after "failed": a pass anywhere in the group counts first.
    earlier = (Qualification.objects.filter(
        group=settings.group, status__in=FINISHED, campaign__owner_id=campaign.owner_id,
        worker__platform=worker.platform, worker__platform_id=worker.platform_id)
        .exclude(campaign=campaign).order_by("-status", "-finished_at").first())
    if earlier is None:
        return None
    return _created(Qualification(
        campaign=campaign, worker=worker, group=settings.group, status=earlier.status,
        items=[], pass_mark=earlier.pass_mark, correct=earlier.correct, total=earlier.total,
        score=earlier.score, carried_from=earlier, finished_at=timezone.now()))


def _new_test(campaign: Campaign, worker: Worker, settings: QualificationSettings,
              platform_ids: dict, max_items: int | None) -> Qualification | None:
    items = qualification_item_ids(campaign)
    if not items:
        return None
    return _created(Qualification(campaign=campaign, worker=worker, group=settings.group,
                                  items=items, pass_mark=settings.pass_mark, total=len(items),
                                  platform_ids={k: v for k, v in platform_ids.items() if v},
                                  max_items=max_items))


def _created(row: Qualification) -> Qualification:
    """Insert the row; a concurrent start of the same worker inserted first: that one."""
    try:
        with transaction.atomic():
            row.save()
    except IntegrityError:
        return Qualification.objects.get(worker_id=row.worker_id)
    return row


def qualification_by_token(token: str) -> Qualification | None:
    return (Qualification.objects.select_related("campaign", "worker")
            .filter(token=token).first())


def qualification_position_answer(qualification: Qualification,
                                  position: int) -> tuple[Item | None, QualificationAnswer | None]:
    """The test's item at a 1-based position (None: no such position) and its answer."""
    if not 1 <= position <= len(qualification.items):
        return None, None
    item = Item.objects.filter(pk=qualification.items[position - 1]).first()
    answer = QualificationAnswer.objects.filter(qualification=qualification,
                                                position=position).first()
    return item, answer


def qualification_next_position(qualification: Qualification) -> int | None:
    """The first unanswered position of the test (None: every item is answered)."""
    answered = set(QualificationAnswer.objects.filter(qualification=qualification)
                   .values_list("position", flat=True))
    return next((p for p in range(1, len(qualification.items) + 1) if p not in answered), None)


@dataclass(frozen=True)
class QualificationSaved:
    qualification: Qualification
    answer: QualificationAnswer
    finished: bool  # this answer completed the test (its status says how it went)


def qualification_answer(*, token: str, position: int,
                         answers: dict | Callable[[object], dict],
                         seconds_spent: float | None,
                         provenance: dict | Callable[[object], dict] | None = None,
                         ) -> QualificationSaved:
    """Save and score one answer of an active test; the answer that completes it decides it.

    An answer already given stays as it was (returned unchanged). Raises ServiceError
    (404: no such test or position; 409: the test is over) or AnswerInvalid (nothing saved).
    `answers` may be a function of the campaign's parsed schema (the form is read with it);
    so may `provenance`, the free-text answers' record (pages/answer_provenance.py), stored
    with the answer as an annotation's is.
    """
    with transaction.atomic():
        test = (Qualification.objects.select_for_update(of=("self",))
                .select_related("campaign", "worker").filter(token=token).first())
        if test is None or not 1 <= position <= len(test.items):
            raise ServiceError("This test has no such item.", code="not_found", status=404)
        given = QualificationAnswer.objects.filter(qualification=test, position=position).first()
        if given is not None:
            return QualificationSaved(test, given, finished=False)
        if test.status != Qualification.Status.ACTIVE:
            raise ServiceError("This test is over.", code="qualification_over", status=409)
        schema = campaign_schema(test.campaign)
        item = Item.objects.get(pk=test.items[position - 1])
        values = answer_values(schema, item, answers(schema) if callable(answers) else answers,
                               seconds_spent)
        record = provenance(schema) if callable(provenance) else provenance
        saved = QualificationAnswer.objects.create(
            qualification=test, item=item, position=position, answers=values["answers"],
            correct=values["control_passed"] is True, seconds_spent=seconds_spent,
            provenance=record or {})
        finished = _finish_if_complete(test)
    return QualificationSaved(test, saved, finished=finished)


def _finish_if_complete(test: Qualification) -> bool:
    """Score a test whose every item is answered (under its row's lock)."""
    scored = list(QualificationAnswer.objects.filter(qualification=test)
                  .values_list("correct", flat=True))
    if len(scored) < len(test.items):
        return False
    correct = sum(scored)
    settings = QualificationSettings(items=(), pass_mark=test.pass_mark)
    passed = settings.passes(correct, len(test.items))
    test.correct, test.total = correct, len(test.items)
    test.score = correct / test.total
    test.status = Qualification.Status.PASSED if passed else Qualification.Status.FAILED
    test.finished_at = timezone.now()
    test.save(update_fields=["correct", "total", "score", "status", "finished_at"])
    if not passed:
        worker_screen_out(worker=test.worker, reason=QUALIFICATION_FAILED)
    return True
