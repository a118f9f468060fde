"""The submissions list: every handed-in assignment with its platform ids, quality-control
outcome, suggested action and bonus, and the files Prolific's bulk approve and bonus take."""
from __future__ import annotations

import csv
import io
from decimal import Decimal

import pandas as pd

from ..analysis.answer_provenance import MOSTLY_PASTED, TYPED_TOO_FAST, add_to_quality
from ..analysis.approvals import APPROVE, REJECT, BonusRule, submission_actions, submission_quality
from ..models import Annotation, Assignment, Campaign, Worker
from .analysis import annotations_frame, split_frame
from .analysis.flags import speed_rules
from .answer_provenance import provenance_flag_counts

COLUMNS = [
    "assignment", "platform", "participant_id", "study_id", "submission_id",
    "mturk_assignment_id", "mturk_hit_id", "completion_code", "started_at", "submitted_at",
    "seconds_taken", "items", "attention_n", "attention_failures", "gold_n", "gold_correct",
    "gold_accuracy", "median_seconds_per_item", "too_fast", "straight_lining",
    "mostly_pasted_answers", "typed_too_fast_answers", "action",
    "rejection_category", "reason", "bonus",
]


def _submitted(campaign: Campaign) -> list[Assignment]:
    return list(Assignment.objects.filter(campaign=campaign, status=Assignment.Status.SUBMITTED)
                .exclude(worker__platform=Worker.Platform.LLM).select_related("worker")
                .order_by("submitted_at", "id"))


def _quality(campaign: Campaign) -> pd.DataFrame:
    humans, _ = split_frame(annotations_frame(campaign=campaign))
    of = dict(Annotation.objects.filter(campaign=campaign).values_list("id", "assignment_id"))
    humans = humans.assign(submission=humans["annotation"].map(of))
    rules, humans = speed_rules(humans, campaign)  # the campaign's floors, as the flags use
    return add_to_quality(submission_quality(humans, rules), "submission",
                          provenance_flag_counts(campaign=campaign, by="assignment"))


def _seconds(assignment: Assignment) -> float | None:
    if assignment.submitted_at is None:
        return None
    return round((assignment.submitted_at - assignment.started_at).total_seconds(), 1)


def campaign_submissions(*, campaign: Campaign) -> list[dict]:
    """One row (COLUMNS) per submitted assignment of a human worker, oldest hand-in first."""
    assignments = _submitted(campaign)
    quality = _quality(campaign)
    durations = pd.Series({a.pk: _seconds(a) for a in assignments}, dtype=float)
    rule = BonusRule(per_item=Decimal(campaign.bonus_per_item),
                     per_gold_correct=Decimal(campaign.bonus_per_gold_correct))
    actions = submission_actions(quality, durations, rule)
    checks = quality.set_index("submission").to_dict("index") if len(quality) else {}
    return [_row(a, checks.get(a.pk, {}), actions.loc[a.pk]) for a in assignments]


def _row(assignment: Assignment, check: dict, action) -> dict:
    worker = assignment.worker
    accuracy = check.get("gold_accuracy")
    median = check.get("median_seconds")
    return {
        "assignment": assignment.pk, "platform": worker.platform,
        "participant_id": worker.platform_id, "study_id": assignment.study_id,
        "submission_id": assignment.session_id,
        "mturk_assignment_id": assignment.mturk_assignment_id,
        "mturk_hit_id": assignment.mturk_hit_id, "completion_code": assignment.completion_code,
        "started_at": assignment.started_at.isoformat(),
        "submitted_at": assignment.submitted_at.isoformat() if assignment.submitted_at else None,
        "seconds_taken": _seconds(assignment), "items": int(check.get("n_items") or 0),
        "attention_n": int(check.get("attention_n") or 0),
        "attention_failures": int(check.get("attention_failures") or 0),
        "gold_n": int(check.get("gold_n") or 0),
        "gold_correct": int(check.get("gold_correct") or 0),
        "gold_accuracy": None if accuracy is None else round(float(accuracy), 4),
        "median_seconds_per_item": None if median is None else round(float(median), 2),
        "too_fast": bool(check.get("too_fast")),
        "straight_lining": bool(check.get("straight_lining")),
        "mostly_pasted_answers": int(check.get(MOSTLY_PASTED) or 0),
        "typed_too_fast_answers": int(check.get(TYPED_TOO_FAST) or 0),
        "action": action["action"], "rejection_category": action["rejection_category"],
        "reason": action["reason"], "bonus": str(action["bonus"]),
    }


def screened_out_participants(*, campaign: Campaign) -> list[dict]:
    """The participants the intake's rules screened out, first screened first: who, when, the
    rule, and their intake answers (all the study asked them; they answered no item)."""
    workers = (Worker.objects.filter(campaign=campaign, screened_out_at__isnull=False)
               .order_by("screened_out_at", "id"))
    return [{"platform": w.platform, "participant_id": w.platform_id,
             "screened_out_at": w.screened_out_at.isoformat(), "reason": w.screened_out_reason,
             "intake": w.intake or {}} for w in workers]


def _csv(header: list[str] | None, rows) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if header:
        writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def submissions_csv(rows: list[dict]) -> str:
    """The whole list as CSV, one header line."""
    return _csv(COLUMNS, ([row[c] if row[c] is not None else "" for c in COLUMNS] for row in rows))


def prolific_bonus_csv(rows: list[dict]) -> str:
    """Prolific's bulk bonus format, `<participant_id>,<amount>` per line, no header: Prolific
    submissions not suggested for rejection whose bonus is above zero."""
    return _csv(None, ([r["participant_id"], r["bonus"]] for r in rows
                       if r["platform"] == Worker.Platform.PROLIFIC and r["action"] != REJECT
                       and Decimal(r["bonus"]) > 0))


def prolific_approve_list(rows: list[dict]) -> str:
    """Prolific submissions suggested for approval, `<participant_id>,<submission_id>` per line
    under a header (bulk approve takes either column)."""
    return _csv(["participant_id", "submission_id"],
                ([r["participant_id"], r["submission_id"]] for r in rows
                 if r["platform"] == Worker.Platform.PROLIFIC and r["action"] == APPROVE))
