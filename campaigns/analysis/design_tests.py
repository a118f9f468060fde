"""Design checks, corrected tests and significance clusters for the designs that are not one
number per rating: best-worst scaling, error spans (MQM) and pairwise preference.

The tests are those of numeric questions (comparisons.compare_systems) on one value per
system and unit: best-worst, each system's best-minus-worst outcome per item (paired over the
items that showed both systems: Wilcoxon signed-rank); MQM, each item's segment penalty
(mean over its raters), paired over segments when the systems translated the same sources,
unpaired otherwise. For MQM lower is better: the tests run on the negated penalty, so
`better` names the system with fewer errors, and the means are reported as penalties.
Pairwise questions have their own sign tests (preference_tests.py); their clusters come from
the same `significance_clusters` as every other design.

Design warnings per question: `few_items_per_system`, `few_raters_per_item` and the rater
connectivity of comparisons.design_checks, plus `few_items_for_bootstrap` when an item
bootstrap rests on fewer than MIN_BOOTSTRAP_ITEMS items: percentile intervals from few
clusters are too narrow (a Bradley-Terry interval from 5 items covered 83% in simulation).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .comparisons import ALPHA, DesignWarning, blocked_parts, compare_systems, design_checks
from .comparisons import significance_clusters as clusters_of
from .scores import MIN_BOOTSTRAP_ITEMS

FEW_BOOTSTRAP_ITEMS = "few_items_for_bootstrap"


def small_cluster_warning(question: str, items: int) -> list[DesignWarning]:
    """The warning for an item bootstrap over fewer than MIN_BOOTSTRAP_ITEMS items."""
    if items >= MIN_BOOTSTRAP_ITEMS:
        return []
    return [DesignWarning(FEW_BOOTSTRAP_ITEMS, (
        f"{question}: intervals resample {items} item(s), fewer than {MIN_BOOTSTRAP_ITEMS}: "
        "percentile bootstrap intervals from so few clusters are too narrow (they cover "
        "less than 95%); read them as indicative only."), question)]


def unit_tests(units: pd.DataFrame, ratings: pd.DataFrame, *, question: str,
               higher_is_better: bool = True, correction: str = "holm", alpha: float = ALPHA,
               n_boot: int = 0, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Design warnings (from `ratings`: system, item, worker, one row per rating), corrected
    comparisons and a ranking with clusters from one value per (system, item) in `units`
    (columns system, item, value and optionally segment). Raters nested in systems or weakly
    connecting them block winners as for numeric questions: raw differences then mix systems
    with their raters."""
    sign = 1.0 if higher_is_better else -1.0
    frame = units.assign(question=question, part="", worker="", value=sign * units["value"])
    if "segment" not in frame:
        frame = frame.assign(segment=None)
    design = ratings[["system", "item", "worker"]].assign(question=question, part="")
    warnings = design_checks(design) + small_cluster_warning(
        question, int(frame.groupby("system")["item"].nunique().min()) if len(frame) else 0)
    compared = compare_systems(frame, alpha=alpha, correction=correction, n_boot=n_boot,
                               seed=seed, blocked=blocked_parts(warnings))
    if not higher_is_better and len(compared):
        compared = _as_penalties(compared)
    means = units.groupby("system", sort=True)["value"].mean()
    ranking = pd.DataFrame({"question": question, "part": "", "system": means.index,
                            "mean": means.to_numpy()})
    ranking = ranking.sort_values(["mean", "system"], ascending=[not higher_is_better, True])
    ranking["rank"] = np.arange(1, len(ranking) + 1)
    ranking = ranking.reset_index(drop=True)
    ranking["cluster"] = clusters_of(ranking, compared)
    return {"design_warnings": pd.DataFrame([w.as_dict() for w in warnings],
                                            columns=["code", "message", "question", "part"]),
            "comparisons": compared, "ranking": ranking}


def _as_penalties(compared: pd.DataFrame) -> pd.DataFrame:
    """Means and mean differences back on the penalty scale (the tests ran on -penalty)."""
    out = compared.copy()
    for column in ("mean_a", "mean_b", "mean_difference"):
        out[column] = -out[column].astype(float)
    low = out["mean_difference_ci_low"].astype(float)
    high = out["mean_difference_ci_high"].astype(float)
    out["mean_difference_ci_low"] = (-high).astype(object).where(high.notna(), None)
    out["mean_difference_ci_high"] = (-low).astype(object).where(low.notna(), None)
    out["lower_is_better"] = True
    return out


def best_worst_units(frame: pd.DataFrame) -> pd.DataFrame:
    """Each system's mean outcome (1 best, -1 worst, 0 neither) per item of a best-worst
    frame, the item as the segment that pairs the systems shown together."""
    units = frame.groupby(["system", "item"], as_index=False, sort=True)["outcome"].mean()
    return pd.DataFrame({"system": units["system"],
                         "item": units["item"].astype(str) + "|" + units["system"].astype(str),
                         "segment": units["item"], "value": units["outcome"]})


def mqm_units(penalties: pd.DataFrame, segments: pd.Series | None = None) -> pd.DataFrame:
    """Each item's segment penalty (mean over its raters) from spans.segment_penalties, with
    the item's segment (its source) from `segments` (item -> source) when every item has
    one, which pairs the systems that translated the same source."""
    units = penalties.groupby(["system", "item"], as_index=False, sort=True).agg(
        value=("penalty", "mean"))
    segment = units["item"].map(segments) if segments is not None else None
    if segment is not None and segment.notna().all():
        return units.assign(segment=segment)
    return units.assign(segment=None)


def preference_clusters(strengths: pd.DataFrame, compared: pd.DataFrame,
                        question: str) -> pd.Series:
    """Clusters over a Bradley-Terry table (sorted by rank) from the pairwise sign tests."""
    ranking = strengths.assign(question=question, part="")
    return clusters_of(ranking, compared.assign(question=question, part=""))
