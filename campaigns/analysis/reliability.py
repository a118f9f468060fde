"""Worker reliability: Dawid-Skene estimates and the leave-one-out consensus correlation.

Input: the long frame of human judgments on regular items with columns item, worker,
question, part, value, level. Pure functions.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

MAX_CLASSES = 12  # Dawid-Skene on categorical parts only: a 0-100 slider is not a label set
MIN_LOO_ITEMS = 5
DS_ITERATIONS = 100
DS_TOLERANCE = 1e-6
SMOOTHING = 0.01  # added to confusion counts: an unseen (class, label) is unlikely, not impossible
ML_FLOOR = 1e-10  # crowd-kit's floor on a probability when there is no smoothing
RELIABILITY_COLUMNS = ["worker", "model", "reliability", "n_labels", "n_parts"]
LOO_COLUMNS = ["worker", "loo_correlation", "loo_n", "negative_loo"]


def dawid_skene(items: np.ndarray, workers: np.ndarray, labels: np.ndarray, *,
                iterations: int = DS_ITERATIONS, tolerance: float = DS_TOLERANCE,
                smoothing: float = SMOOTHING, stop: str = "posterior",
                groups: np.ndarray | None = None, n_classes: int | None = None):
    """Dawid & Skene (1979) EM over (item, worker, label) codes (0-based integers).

    Returns (class priors[K], confusion[W, K, K] with rows the true class and columns the
    label given, posteriors[I, K]). Initialised with each item's label shares (soft majority
    vote) and an M step from them; then `iterations` E and M steps until the posteriors move
    less than `tolerance` (`stop` "posterior"), or the evidence lower bound per rating gains
    less than it ("elbo", crowd-kit's rule). `smoothing` is added to every confusion count
    (a symmetric Dirichlet prior: the estimate is its posterior mode); 0 is plain maximum
    likelihood, with cells floored at 1e-10 as crowd-kit does.

    `groups` (one integer per item) fits independent data sets at once (bootstrap
    resamples, their items and workers coded apart): each group has its own class priors
    (priors then [G, K]), and the fit runs until every group's posteriors have settled.
    `n_classes` when some classes have no label in these ratings.
    """
    n_items, n_workers = items.max() + 1, workers.max() + 1
    k = n_classes or labels.max() + 1
    single = groups is None
    groups = np.zeros(n_items, dtype=int) if single else groups
    group_sizes = np.bincount(groups)
    posterior = np.zeros((n_items, k))
    np.add.at(posterior, (items, labels), 1.0)
    posterior /= posterior.sum(axis=1, keepdims=True)
    # The cells each rating adds to, fixed across iterations: confusion[w, c, l] += posterior
    # [item, c] for the label l that worker w gave; the item's log posterior for class c.
    cells = ((workers * k)[:, None] * k + np.arange(k)[None, :] * k + labels[:, None]).ravel()
    item_cells = (items[:, None] * k + np.arange(k)[None, :]).ravel()
    used = np.zeros((n_workers, k), dtype=bool)
    used[workers, labels] = True

    def m_step(posterior):
        counts = np.bincount(cells, weights=posterior[items].ravel(),
                             minlength=n_workers * k * k).reshape(n_workers, k, k)
        # Without smoothing, crowd-kit's convention: labels the worker gave are floored,
        # labels they never gave stay impossible (a class none of their items had is then
        # spread over the labels they used).
        counts = counts + smoothing if smoothing > 0 else np.where(
            used[:, None, :], np.maximum(counts, ML_FLOOR), 0.0)
        priors = np.stack([np.bincount(groups, posterior[:, c], len(group_sizes))
                           for c in range(k)], axis=1) / group_sizes[:, None]
        return priors, counts / counts.sum(axis=2, keepdims=True)

    priors, confusion = m_step(posterior)
    bound = -np.inf
    for _ in range(iterations):
        updated = _e_step(priors[groups], confusion, item_cells, workers, labels)
        change = np.abs(updated - posterior).max()
        posterior = updated
        priors, confusion = m_step(posterior)
        if stop == "elbo":
            new_bound = _elbo(posterior, priors[0], confusion, items, workers, labels)
            change, bound = new_bound - bound, new_bound
        if change < tolerance:
            break
    return (priors[0] if single else priors), confusion, posterior


def _e_step(item_priors, confusion, item_cells, workers, labels) -> np.ndarray:
    """Each item's posterior over classes: its prior times its ratings' likelihoods."""
    n_items, k = item_priors.shape
    with np.errstate(divide="ignore"):  # a label never given: log 0 = -inf, as it should
        log_likelihood = np.log(confusion)[workers, :, labels]
    log_joint = np.log(np.maximum(item_priors, ML_FLOOR)) + np.bincount(
        item_cells, weights=log_likelihood.ravel(), minlength=n_items * k).reshape(n_items, k)
    updated = np.exp(log_joint - log_joint.max(axis=1, keepdims=True))
    return updated / updated.sum(axis=1, keepdims=True)


def _elbo(posterior, priors, confusion, items, workers, labels) -> float:
    """The evidence lower bound per rating, as crowd-kit computes it: each rating's expected
    log joint (prior and confusion) under the item's posterior, plus the entropy of the
    items' posteriors."""
    with np.errstate(divide="ignore"):
        log_joint = np.log(confusion)[workers, :, labels] + np.log(np.maximum(priors, ML_FLOOR))
    expected = (posterior[items] * log_joint).sum()
    clipped = np.maximum(posterior, ML_FLOOR)
    entropy = -(np.log(clipped) * clipped).sum()
    return float((expected + entropy) / len(items))


def categorical_parts(frame: pd.DataFrame):
    """The (question, part) groups of rated rows a label model fits: nominal, or ordinal with
    at most MAX_CLASSES values, at least two values, and an item with two labels."""
    rated = frame.dropna(subset=["value"])
    for (_question, _part), group in rated.groupby(["question", "part"], sort=True):
        if group["level"].iloc[0] not in ("nominal", "ordinal"):
            continue
        values = group["value"].astype(str)
        if values.nunique() < 2 or values.nunique() > MAX_CLASSES:
            continue
        if group.groupby("item")["worker"].nunique().max() < 2:
            continue  # no item with two labels: nothing to learn a confusion from
        yield group


def dawid_skene_accuracy(items: np.ndarray, workers: np.ndarray, labels: np.ndarray,
                         **options) -> np.ndarray:
    """Each worker's Dawid-Skene probability of giving the true label, sum_k prior_k *
    confusion[k, k], from `dawid_skene(items, workers, labels, **options)`; with `groups`
    (stacked resamples), the priors of the worker's own group."""
    priors, confusion, _ = dawid_skene(items, workers, labels, **options)
    groups = options.get("groups")
    if groups is not None:
        worker_group = np.zeros(workers.max() + 1, dtype=int)
        worker_group[workers] = groups[items]
        priors = priors[worker_group]
    diagonal = np.arange(confusion.shape[-1])
    return (confusion[:, diagonal, diagonal] * priors).sum(axis=1)


def worker_reliability(frame: pd.DataFrame) -> pd.DataFrame:
    """Per worker: the Dawid-Skene probability of giving the true label, sum_k prior_k *
    confusion[k, k], per categorical part (nominal, or ordinal with at most MAX_CLASSES
    values), averaged over parts weighted by the worker's labels (point estimates only:
    worker_models.reliability_table adds MACE, intervals and the minimum)."""
    per_part = []
    for group in categorical_parts(frame):
        item_codes, _ = pd.factorize(group["item"])
        worker_codes, names = pd.factorize(group["worker"])
        label_codes, _ = pd.factorize(group["value"].astype(str), sort=True)
        accuracy = dawid_skene_accuracy(item_codes, worker_codes, label_codes)
        counts = np.bincount(worker_codes, minlength=len(names))
        per_part.append(pd.DataFrame({"worker": names, "accuracy": accuracy, "n": counts}))
    if not per_part:
        return pd.DataFrame(columns=RELIABILITY_COLUMNS)
    parts = pd.concat(per_part, ignore_index=True)
    parts["weighted"] = parts["accuracy"] * parts["n"]
    table = parts.groupby("worker", sort=True).agg(
        weighted=("weighted", "sum"), n_labels=("n", "sum"), n_parts=("n", "size"))
    table["reliability"] = table["weighted"] / table["n_labels"]
    table["model"] = "dawid_skene"
    return table.reset_index()[RELIABILITY_COLUMNS]


def loo_correlations(frame: pd.DataFrame, *, min_items: int = MIN_LOO_ITEMS) -> pd.DataFrame:
    """Per worker: Pearson correlation of their numeric ratings with the mean of the other
    workers' ratings of the same item and part (each part standardised first, so parts on
    different scales pool); `negative_loo` when it is below 0 over at least `min_items`
    ratings: the worker rates against everyone else (e.g. a reversed scale)."""
    numeric = frame[frame["level"].isin(("ordinal", "interval", "ratio"))].dropna(
        subset=["value"])
    if numeric.empty:
        return pd.DataFrame(columns=LOO_COLUMNS)
    value = numeric["value"].astype(float)
    by_part = value.groupby([numeric["question"], numeric["part"]])
    sd = by_part.transform("std")
    z = ((value - by_part.transform("mean")) / sd.where(sd > 0)).fillna(0.0)
    unit = [numeric["item"], numeric["question"], numeric["part"]]
    total, count = z.groupby(unit).transform("sum"), z.groupby(unit).transform("size")
    others = count - 1
    loo = ((total - z) / others.where(others > 0)).rename("loo")
    pairs = pd.DataFrame({"worker": numeric["worker"], "own": z, "loo": loo}).dropna()
    rows = []
    for worker, group in pairs.groupby("worker", sort=True):
        r = None
        if len(group) >= 2 and group["own"].std() > 0 and group["loo"].std() > 0:
            r = float(np.corrcoef(group["own"], group["loo"])[0, 1])
        rows.append({"worker": worker, "loo_correlation": r, "loo_n": len(group),
                     "negative_loo": bool(r is not None and r < 0 and len(group) >= min_items)})
    return pd.DataFrame(rows, columns=LOO_COLUMNS)


def with_loo_flags(quality: pd.DataFrame, loo: pd.DataFrame) -> pd.DataFrame:
    """The quality table with each worker's leave-one-out correlation beside the other checks;
    a negative one flags the worker (with the reason)."""
    if quality.empty:
        return quality.assign(loo_correlation=None, loo_n=None, negative_loo=None)
    table = quality.merge(loo, on="worker", how="left")
    table["negative_loo"] = table["negative_loo"].fillna(False).astype(bool)
    table["reasons"] = [
        [*reasons, f"ratings correlate negatively with the other workers' (r = {r:.2f})"]
        if negative else reasons
        for reasons, negative, r in zip(table["reasons"], table["negative_loo"],
                                        table["loo_correlation"], strict=True)]
    table["flagged"] = table["reasons"].map(bool)
    return table.astype(object).where(table.notna(), None)
