"""Error spans (MQM, ESA): error counts, MQM scores and span agreement between workers.

Input frames hold one row per answer of a spans question, with columns item, system, worker,
spans (the stored answer: a list of {start, end, severity, category} dicts, [] for "no
errors") and source_words (the item's source words, None when the question names no source
field). `answers_frame` builds one from plain rows.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from . import N_BOOT
from .connectivity import rater_connectivity
from .scores import z_scores

ALPHA = 0.05
COLUMNS = ["item", "system", "worker", "spans", "source_words"]
ERROR_COLUMNS = ["item", "system", "worker", "start", "end", "severity", "category", "weight"]
NO_CATEGORY = ""  # the category column's value for spans without one
DRAWS_PER_CHUNK = 2_000_000  # resampled indices held at once by a bootstrap (16 MB)


Weight = Callable[[str, str | None], float]  # (severity, category) -> MQM weight


@dataclass(frozen=True)
class Weights:
    """MQM weights as plain data, for frames read without a schema (the campaign's spans
    question gives its own `weight`): one per severity, which a category may override for
    some severities (minor punctuation 0.1, non-translation 25)."""

    severity: Mapping[str, float]
    category: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def __call__(self, severity: str, category: str | None) -> float:
        override = self.category.get(category or NO_CATEGORY, {})
        return float(override.get(severity, self.severity.get(severity, 0.0)))


# The weighting of Freitag et al. (2021), plus "critical" at 25 as the MQM template has it.
WMT = Weights(severity={"neutral": 0, "minor": 1, "major": 5, "critical": 25},
              category={"fluency/punctuation": {"minor": 0.1},
                        "non-translation": {"minor": 25, "major": 25, "critical": 25}})


def count_words(text: str | None) -> int | None:
    """Words of a source text as MQM counts them: runs of non-space characters."""
    return None if text is None else len(str(text).split())


def answers_frame(rows: Iterable[tuple]) -> pd.DataFrame:
    """Rows (item, system, worker, spans, source text or None) as an answers frame; answers
    that are None (the question left unanswered) are left out."""
    out = [(item, system, worker, list(spans), count_words(source))
           for item, system, worker, spans, source in rows if spans is not None]
    frame = pd.DataFrame(out, columns=COLUMNS)
    frame["source_words"] = frame["source_words"].astype(float)
    return frame


def errors_frame(answers: pd.DataFrame, weight: Weight) -> pd.DataFrame:
    """One row per marked span with its MQM weight; `answer` is the answer's row label."""
    weights: dict[tuple, float] = {}  # the weight of each (severity, category), asked once
    rows = []
    for label, item, system, worker, spans in zip(
            answers.index.tolist(), answers["item"].tolist(), answers["system"].tolist(),
            answers["worker"].tolist(), answers["spans"].tolist(), strict=True):
        for s in spans:
            key = (s["severity"], s.get("category"))
            if key not in weights:
                weights[key] = weight(*key)
            rows.append((label, item, system, worker, s["start"], s["end"], s["severity"],
                         key[1] or NO_CATEGORY, weights[key]))
    return pd.DataFrame(rows, columns=["answer", *ERROR_COLUMNS])


def segment_penalties(answers: pd.DataFrame, weight: Weight) -> pd.DataFrame:
    """The answers with `errors` (spans marked) and `penalty`, the MQM segment score: the
    sum of the spans' weights (0 for an answer without errors)."""
    errors = errors_frame(answers, weight)
    by_answer = errors.groupby("answer")["weight"]
    return answers.assign(
        errors=by_answer.size().reindex(answers.index, fill_value=0).astype(int),
        penalty=by_answer.sum().reindex(answers.index, fill_value=0.0).astype(float))


def error_counts(answers: pd.DataFrame, weight: Weight, *, by: str) -> pd.DataFrame:
    """Per system and value of `by` ("severity" or "category"): errors marked, the system's
    answers, and errors per answer."""
    errors = errors_frame(answers, weight)
    per_system = answers.groupby("system").size().rename("answers")
    table = (errors.groupby(["system", by]).size().rename("errors").reset_index()
             .merge(per_system.reset_index(), on="system"))
    table["per_answer"] = table["errors"] / table["answers"]
    return table[["system", by, "errors", "answers", "per_answer"]].sort_values(
        ["system", by]).reset_index(drop=True)


def mqm_scores(answers: pd.DataFrame, weight: Weight, *, n_boot: int = N_BOOT,
               seed: int = 0, alpha: float = ALPHA) -> pd.DataFrame:
    """Per system, MQM penalties (lower is better; 0 = no errors marked):

    - `mqm`: mean over the system's items of the item's segment penalty, itself the mean
      over the workers who annotated the item (Freitag et al. 2021);
    - `mqm_per_100_words`: 100 x the items' penalties summed / their source words summed
      (None without source words);
    - `mqm_z`: the same mean after z-normalising each worker's segment penalties by that
      worker's own mean and sd over all their answers; None for every system when raters
      connect the systems too weakly for it (connectivity.rater_connectivity);
    - 95% percentile intervals of `mqm` and `mqm_per_100_words` resampling the system's
      items with replacement; `rank` 1 for the lowest `mqm`.
    """
    columns = ["system", "answers", "items", "workers", "errors", "mqm", "ci_low", "ci_high",
               "mqm_per_100_words", "per_100_ci_low", "per_100_ci_high", "mqm_z", "rank"]
    if answers.empty:
        return pd.DataFrame(columns=columns)
    scored = segment_penalties(answers, weight)
    scored = z_scores(scored.assign(value=scored["penalty"], question="", part=""))
    items = scored.groupby(["system", "item"], sort=True).agg(
        penalty=("penalty", "mean"), z=("z", "mean"), words=("source_words", "first"))
    rows = []
    for system, group in items.groupby(level="system", sort=True):
        answered = scored[scored["system"] == system]
        rows.append({"system": system, "answers": len(answered), "items": len(group),
                     "workers": answered["worker"].nunique(),
                     "errors": int(answered["errors"].sum()),
                     "mqm": group["penalty"].mean(), "mqm_z": group["z"].mean(),
                     **_item_intervals(group["penalty"].to_numpy(), group["words"].to_numpy(),
                                       n_boot=n_boot, seed=seed, alpha=alpha)})
    out = pd.DataFrame(rows)
    if not rater_connectivity(scored)["adequate"]:
        # Per-rater z compares systems only through raters who saw several of them.
        out["mqm_z"] = None
    out["rank"] = out["mqm"].rank(method="min").astype(int)
    return out[columns].sort_values(["rank", "system"]).reset_index(drop=True)


def _item_intervals(penalty: np.ndarray, words: np.ndarray, *, n_boot: int, seed: int,
                    alpha: float) -> dict:
    """The per-100-words figure and the item-bootstrap intervals of it and of the mean."""
    known = ~np.isnan(words)
    counted = np.where(known, words, 0.0)
    per_100 = (100 * penalty[known].sum() / counted.sum() if counted.sum() > 0 else None)
    out = {"mqm_per_100_words": per_100, "ci_low": None, "ci_high": None,
           "per_100_ci_low": None, "per_100_ci_high": None}
    k = len(penalty)
    if k < 2 or n_boot <= 0:
        return out
    sums = resampled_sums(np.column_stack([penalty, np.where(known, penalty, 0.0), counted]),
                          n_boot=n_boot, seed=seed)
    q = [100 * alpha / 2, 100 * (1 - alpha / 2)]
    out["ci_low"], out["ci_high"] = np.percentile(sums[:, 0] / k, q)
    if per_100 is not None:
        with np.errstate(invalid="ignore", divide="ignore"):
            ratios = 100 * sums[:, 1] / sums[:, 2]
        out["per_100_ci_low"], out["per_100_ci_high"] = np.nanpercentile(ratios, q)
    return out


def resampled_sums(rows: np.ndarray, *, n_boot: int, seed: int) -> np.ndarray:
    """Column sums of `rows` (k x c) in each of n_boot resamples of its k rows with
    replacement (n_boot x c), drawn in chunks so memory stays bounded for many items."""
    k = len(rows)
    rng = np.random.default_rng(seed)
    step = max(1, DRAWS_PER_CHUNK // k)
    chunks = [rows[rng.integers(0, k, (min(step, n_boot - start), k))].sum(axis=1)
              for start in range(0, n_boot, step)]
    return np.concatenate(chunks)


def _marked(spans: list[dict]) -> dict[str | None, set[int]]:
    """Character positions marked by an answer: all of them (key None) and per severity."""
    out: dict[str | None, set[int]] = {None: set()}
    for s in spans:
        positions = range(s["start"], s["end"])
        out[None].update(positions)
        out.setdefault(s["severity"], set()).update(positions)
    return out


def span_agreement(answers: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0,
                   alpha: float = ALPHA) -> pd.DataFrame:
    """Character-level F1 between workers on the same item, pooled over every pair of
    workers on every item: F1 = 2 sum|A & B| / sum(|A| + |B|), A and B the sets of character
    positions the two workers marked (all spans, then per severity: the positions marked with
    that severity). Pairs where neither marked anything add nothing to F1 and are counted in
    `pairs_both_empty`. 95% intervals resample items with all their pairs."""
    columns = ["severity", "items", "pairs", "pairs_both_empty", "f1", "ci_low", "ci_high"]
    by_item: dict = {}
    for item, spans in zip(answers["item"].tolist(), answers["spans"].tolist(), strict=True):
        by_item.setdefault(item, []).append(_marked(spans))
    per_key: dict[str | None, list[tuple[int, int, int, int]]] = {}
    for marks in by_item.values():
        if len(marks) < 2:
            continue
        for key in set().union(*marks):
            per_key.setdefault(key, []).append(_pairs(marks, key))
    rows = []
    for key in sorted(per_key, key=lambda k: (k is not None, k or "")):
        counts = np.array(per_key[key], dtype=float)  # items x (shared, marked, pairs, empty)
        low = high = None
        if len(counts) >= 2 and n_boot > 0:
            sums = resampled_sums(counts[:, :2], n_boot=n_boot, seed=seed)
            with np.errstate(invalid="ignore", divide="ignore"):
                low, high = np.nanpercentile(2 * sums[:, 0] / sums[:, 1],
                                             [100 * alpha / 2, 100 * (1 - alpha / 2)])
        shared, marked, pairs, empty = counts.sum(axis=0)
        rows.append({"severity": key, "items": len(counts), "pairs": int(pairs),
                     "pairs_both_empty": int(empty),
                     "f1": 2 * shared / marked if marked else None,
                     "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows, columns=columns)


def _pairs(marks: list[dict], key: str | None) -> tuple[int, int, int, int]:
    """Over the pairs of one item's answers: characters both marked, characters each marked
    (summed), pairs, and pairs where neither marked any (positions under `key`)."""
    shared = marked = empty = pairs = 0
    for a, b in combinations(marks, 2):
        left, right = a.get(key, set()), b.get(key, set())
        shared += len(left & right)
        marked += len(left) + len(right)
        empty += not left and not right
        pairs += 1
    return shared, marked, pairs, empty


def span_tables(answers: pd.DataFrame, weight: Weight, *, n_boot: int = N_BOOT,
                seed: int = 0) -> dict[str, pd.DataFrame]:
    """Every table of one spans question: MQM scores, error counts, span agreement (no
    counts by category when no span names one)."""
    by_category = error_counts(answers, weight, by="category")
    if by_category["category"].eq(NO_CATEGORY).all():
        by_category = by_category.iloc[:0]
    return {"mqm": mqm_scores(answers, weight, n_boot=n_boot, seed=seed),
            "connectivity": rater_connectivity(answers) if not answers.empty else None,
            "errors_by_severity": error_counts(answers, weight, by="severity"),
            "errors_by_category": by_category,
            "agreement": span_agreement(answers, n_boot=n_boot, seed=seed)}
