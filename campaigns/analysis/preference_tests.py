"""Corrected tests between systems compared in pairs (the preference frame of preference.py).

Per unordered pair of systems, the items are the independent units (judgments of one item
share its input): each item's judgments of the pair give a's mean score (ties as half) and the
item goes to a (mean above 0.5), to b (below) or to neither (exactly 0.5). A two-sided exact
sign test (binomial, p = 1/2; Dixon & Mood 1946) over the items that went to one side gives
the pair's p, corrected over the pairs of the question by Holm or Benjamini-Hochberg
(comparisons.adjust_pvalues). `better` names a system only when the corrected p is below
alpha. Significance clusters follow from these rows as for numeric questions.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .comparisons import ALPHA, adjust_pvalues

COLUMNS = ["system_a", "system_b", "items", "items_a", "items_b", "items_even", "win_rate_a",
           "p", "p_adjusted", "correction", "better"]


def _per_item(frame: pd.DataFrame) -> pd.DataFrame:
    """a's mean score per (pair, item), a the alphabetically first system of the pair."""
    swap = frame["first"].astype(str) > frame["second"].astype(str)
    oriented = pd.DataFrame({
        "system_a": np.where(swap, frame["second"], frame["first"]),
        "system_b": np.where(swap, frame["first"], frame["second"]),
        "item": frame["item"].to_numpy(),
        "score_a": np.where(swap, 1 - frame["score"].astype(float), frame["score"].astype(float)),
    })
    return oriented.groupby(["system_a", "system_b", "item"], as_index=False, sort=True)[
        "score_a"].mean()


def preference_comparisons(frame: pd.DataFrame, *, correction: str = "holm",
                           alpha: float = ALPHA) -> pd.DataFrame:
    """Every pair of systems judged together: item counts and the corrected sign test."""
    if frame.empty:
        return pd.DataFrame(columns=COLUMNS)
    items = _per_item(frame)
    rows = []
    for (a, b), group in items.groupby(["system_a", "system_b"], sort=True):
        score = group["score_a"].to_numpy()
        won_a, won_b = int((score > 0.5).sum()), int((score < 0.5).sum())
        p = (float(stats.binomtest(won_a, won_a + won_b, 0.5).pvalue)
             if won_a + won_b else 1.0)
        rows.append({"system_a": a, "system_b": b, "items": len(score), "items_a": won_a,
                     "items_b": won_b, "items_even": len(score) - won_a - won_b,
                     "win_rate_a": float(score.mean()), "p": p})
    out = pd.DataFrame(rows)
    out["p_adjusted"] = adjust_pvalues(out["p"].to_numpy(), correction)
    out["correction"] = correction
    significant = out["p_adjusted"] < alpha
    out["better"] = np.where(significant, np.where(out["items_a"] > out["items_b"],
                                                   out["system_a"], out["system_b"]), None)
    out["better"] = out["better"].where(significant, None)
    return out[COLUMNS]
