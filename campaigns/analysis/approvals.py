"""Suggested approve / reject / review actions and bonuses for submissions (pure, no Django).

Prolific lets a researcher reject a submission only for a documented reason: failed attention
checks (several of them in a study of five minutes or more; we always ask for
`QualityRules.attention_failures_to_flag`, two by default), completing the study exceptionally
fast (a statistical outlier: more than three standard deviations below the mean completion time)
or clear low effort. Everything else quality control notices (low gold accuracy, fast items,
the same answer everywhere) is a reason to look, not to reject: "review".
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pandas as pd

from .quality import QualityRules, annotation_outcomes, worker_quality

APPROVE, REJECT, REVIEW = "approve", "reject", "review"
# Prolific's rejection categories (the `rejection_category` of a submission transition).
FAILED_CHECK, TOO_QUICKLY = "FAILED_CHECK", "TOO_QUICKLY"
FAST_OUTLIER_SD = 3.0  # Prolific: "3 standard deviations below the mean"
CENT = Decimal("0.01")


@dataclass(frozen=True)
class BonusRule:
    """Amounts in the study's currency: per regular item answered, per gold item passed."""
    per_item: Decimal = Decimal(0)
    per_gold_correct: Decimal = Decimal(0)

    def amount(self, *, items: int, gold_correct: int) -> Decimal:
        total = self.per_item * items + self.per_gold_correct * gold_correct
        return total.quantize(CENT, rounding=ROUND_HALF_UP)


def exceptionally_fast(durations: pd.Series) -> pd.Series:
    """True where a duration lies more than FAST_OUTLIER_SD sample standard deviations below the
    mean of all durations (NaN durations are never fast; fewer than three known: none are)."""
    known = durations.dropna().astype(float)
    if len(known) < 3:
        return pd.Series(False, index=durations.index)
    sd = float(np.std(known.to_numpy(), ddof=1))
    if sd == 0:
        return pd.Series(False, index=durations.index)
    threshold = float(known.mean()) - FAST_OUTLIER_SD * sd
    return durations.astype(float).lt(threshold).fillna(False)


def submission_quality(frame: pd.DataFrame, rules: QualityRules | None = None) -> pd.DataFrame:
    """worker_quality's checks per submission: `frame` carries a `submission` column, and each
    submission is judged like a worker of its own (speed relative to the typical submission)."""
    keyed = frame.assign(worker=frame["submission"])
    table = worker_quality(keyed, rules).rename(columns={"worker": "submission"})
    if frame.empty:
        return table.assign(gold_correct=pd.Series(dtype=int))
    per = annotation_outcomes(keyed)  # a control's outcome: stored, else computed from gold
    correct = per[per["control"].eq("gold") & per["control_passed"].eq(True)].groupby(
        "worker").size()
    table["gold_correct"] = table["submission"].map(correct).fillna(0).astype(int)
    return table


def suggest(row, *, fast: bool, rules: QualityRules) -> tuple[str, str, str]:
    """(action, Prolific rejection category or "", reason) for one submission's quality row."""
    failures = int(row.get("attention_failures") or 0)
    if failures >= rules.attention_failures_to_flag:
        return REJECT, FAILED_CHECK, f"failed {failures} attention checks"
    if fast:
        return REJECT, TOO_QUICKLY, "exceptionally fast (over 3 SD below the mean time)"
    reasons = list(row.get("reasons") or [])
    if failures:
        reasons.insert(0, "failed 1 attention check")
    if reasons:
        return REVIEW, "", "; ".join(reasons)
    return APPROVE, "", ""


def submission_actions(quality: pd.DataFrame, durations: pd.Series, bonus: BonusRule,
                       rules: QualityRules | None = None) -> pd.DataFrame:
    """Per submission (index of `durations`): action, rejection_category, reason, bonus.

    `quality` is submission_quality's table (submissions without annotations may be missing);
    `durations` the seconds each submission took from start to hand-in.
    """
    rules = rules or QualityRules()
    fast = exceptionally_fast(durations)
    by_id = quality.set_index("submission") if len(quality) else quality
    rows = []
    for submission in durations.index:
        row = by_id.loc[submission].to_dict() if submission in by_id.index else {}
        action, category, reason = suggest(row, fast=bool(fast[submission]), rules=rules)
        amount = bonus.amount(items=int(row.get("n_items") or 0),
                              gold_correct=int(row.get("gold_correct") or 0))
        rows.append({"submission": submission, "action": action,
                     "rejection_category": category, "reason": reason, "bonus": amount})
    return pd.DataFrame(rows, columns=["submission", "action", "rejection_category", "reason",
                                       "bonus"]).set_index("submission")
