"""Worker models beside each other: Dawid-Skene and MACE reliabilities with item-bootstrap
intervals, shown only from a minimum number of labels.

Input: the long frame of human judgments on regular items with columns item, worker,
question, part, value, level (reliability.categorical_parts picks the parts a label model
fits). Pure functions.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import digamma

from .reliability import categorical_parts, dawid_skene_accuracy

# A reliability is a proportion: from 20 labels its standard error is at most
# sqrt(0.25 / 20) = 0.11, a 95% interval about +-0.22; below that the figure mostly says what
# the model's start and prior were, so the row keeps its count and shows no figure.
MIN_LABELS = 20
RELIABILITY_BOOT = 100  # refits per model: 95% ends from 100 draws are rough (about +-0.02)
BOOT_RATINGS_BUDGET = 300_000  # ratings refitted per model (a few seconds); fewer draws above it
# Resamples (all fitted at once) stop when no posterior moves by 1e-4: reliabilities then
# sit within about 1e-3 of their limit, far inside the interval's width.
DRAW_TOLERANCE = 1e-4
MIN_BOOT = 20  # below this many draws no interval is given (said in `note`)
MACE_ITERATIONS = 200
MACE_TOLERANCE = 1e-6
MACE_ALPHA = MACE_BETA = 0.5  # Beta prior on competence (Hovy et al. 2013; crowd-kit's)
MACE_STARTS = 5
MACE_STARTS_UP_TO = 50_000  # ratings in a part; above, the symmetric start alone (time)
# A part above it gets no MACE fit: 200,000 ratings cost ~29 ms per iteration on the shared
# 2-core machine, up to 6 s a start at MACE_ITERATIONS.
MACE_MAX_RATINGS = 200_000
MACE_STRATEGY_PRIOR = 10.0  # symmetric Dirichlet on the spamming strategy (crowd-kit's)
MODELS = ("dawid_skene", "mace")
COLUMNS = ["worker", "model", "reliability", "ci_low", "ci_high", "n_labels", "n_parts",
           "note"]


def mace(items: np.ndarray, workers: np.ndarray, labels: np.ndarray, *,
         iterations: int = MACE_ITERATIONS, tolerance: float = MACE_TOLERANCE,
         init: tuple[np.ndarray, np.ndarray] | None = None, n_classes: int | None = None):
    """MACE (Hovy, Berg-Kirkpatrick, Vaswani & Hovy 2013) with variational Bayes, as crowd-kit
    runs it: a worker knows the true label with probability theta_j and gives it, else spams
    from a strategy xi_j; the true label is uniform a priori.

    Returns (spamming[W, 2]: the variational weights exp E[log (1 - theta)], exp E[log theta];
    strategy[W, K]: exp E[log xi]; competence[W]: the posterior mean of theta; posteriors
    [I, K]). `init` is (spamming, strategy); by default every worker starts at theta 0.5 with
    a uniform strategy. E and M steps until the posteriors move less than `tolerance`.
    `n_classes` when some classes have no label in these ratings (a resample).
    """
    n_items, n_workers = items.max() + 1, workers.max() + 1
    k = n_classes or labels.max() + 1
    if init is None:
        spamming, strategy = np.full((n_workers, 2), 0.5), np.full((n_workers, k), 1.0 / k)
    else:
        spamming, strategy = (np.asarray(a, dtype=float) for a in init)
    item_cells = (items[:, None] * k + np.arange(k)[None, :]).ravel()
    same = labels[:, None] == np.arange(k)[None, :]
    posterior = np.full((n_items, k), 1.0 / k)
    counts = None
    for _ in range(iterations):
        spam = spamming[workers, 0] * strategy[workers, labels]
        know = spamming[workers, 1]
        log_gold = np.bincount(item_cells, weights=np.log(spam[:, None] + know[:, None] * same)
                               .ravel(), minlength=n_items * k).reshape(n_items, k)
        updated = np.exp(log_gold - log_gold.max(axis=1, keepdims=True))
        updated /= updated.sum(axis=1, keepdims=True)
        change = np.abs(updated - posterior).max()
        posterior = updated
        knew = posterior[items, labels] * know / (spam + know)
        counts = np.stack([np.bincount(workers, 1 - knew, n_workers),
                           np.bincount(workers, knew, n_workers)], axis=1)
        strategy_counts = np.bincount(workers * k + labels, 1 - knew,
                                      n_workers * k).reshape(n_workers, k)
        spamming = _variational(counts, np.array([MACE_ALPHA, MACE_BETA]))
        strategy = _variational(strategy_counts, np.full(k, MACE_STRATEGY_PRIOR))
        if change < tolerance:
            break
    competence = (counts[:, 1] + MACE_BETA) / (counts.sum(axis=1) + MACE_ALPHA + MACE_BETA)
    return spamming, strategy, competence, posterior


def _variational(counts: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """exp E[log p] under the Dirichlet posterior counts + prior (the VB M step)."""
    total = counts + prior[None, :]
    return np.exp(digamma(total) - digamma(total.sum(axis=1, keepdims=True)))


def _fit(model: str, items, workers, labels, n_classes: int):
    """Each worker's reliability under `model` and the parameters MACE's resamples restart
    from: Dawid-Skene's probability of giving the true label, sum_k prior_k confusion_kk;
    MACE's competence, the probability of knowing it, from the best (highest marginal
    likelihood) of the symmetric start and MACE_STARTS - 1 random ones (one start above
    MACE_STARTS_UP_TO ratings)."""
    if model == "dawid_skene":
        return dawid_skene_accuracy(items, workers, labels), None
    best = None
    for init in _mace_starts(workers.max() + 1, n_classes,
                             MACE_STARTS if len(items) <= MACE_STARTS_UP_TO else 1):
        spamming, strategy, competence, _ = mace(items, workers, labels, init=init,
                                                 n_classes=n_classes)
        fit = (mace_log_likelihood(items, workers, labels, spamming, strategy), competence,
               (spamming, strategy))
        best = fit if best is None or fit[0] > best[0] else best
    return best[1], best[2]


def _mace_starts(n_workers: int, k: int, n_starts: int) -> list:
    """The symmetric start (None) and MACE_STARTS - 1 seeded random ones drawn as crowd-kit
    draws its start (uniform on [1, 2.5], rows normalised): MACE has several optima."""
    rng = np.random.default_rng(0)
    starts = [None]
    for _ in range(n_starts - 1):
        spamming = rng.uniform(1, 2.5, (n_workers, 2))
        strategy = rng.uniform(1, 2.5, (n_workers, k))
        starts.append((spamming / spamming.sum(axis=1, keepdims=True),
                       strategy / strategy.sum(axis=1, keepdims=True)))
    return starts


def mace_log_likelihood(items, workers, labels, spamming, strategy) -> float:
    """log P(labels) under MACE's weights: per item, the mean over true classes of the product
    of its ratings' probabilities (crowd-kit's restart criterion, without its 1e-8)."""
    k = strategy.shape[1]
    spam = spamming[workers, 0] * strategy[workers, labels]
    same = labels[:, None] == np.arange(k)[None, :]
    log_gold = np.bincount((items[:, None] * k + np.arange(k)[None, :]).ravel(),
                           weights=np.log(spam[:, None] + spamming[workers, 1][:, None] * same)
                           .ravel(), minlength=(items.max() + 1) * k).reshape(-1, k)
    top = log_gold.max(axis=1)
    return float((top + np.log(np.exp(log_gold - top[:, None]).mean(axis=1))).sum())


def _draws(items: np.ndarray, n_items: int, n_boot: int, seed: int):
    """Per resample, the rating rows of the drawn items and the drawn items' new codes: items
    are drawn with replacement, each draw a new item (a repeated item counts twice)."""
    rng = np.random.default_rng(seed)
    order = np.argsort(items, kind="stable")
    starts = np.searchsorted(items[order], np.arange(n_items + 1))
    for _ in range(n_boot):
        drawn = rng.integers(0, n_items, n_items)
        sizes = starts[drawn + 1] - starts[drawn]
        position = np.repeat(np.arange(n_items), sizes)
        offset = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        yield order[starts[drawn][position] + offset], position


def _part_fits(model: str, group: pd.DataFrame, names: pd.Index, n_boot: int,
               seed: int) -> tuple[np.ndarray, np.ndarray]:
    """One part: every worker's point estimate [W] (NaN if absent) and resampled ones [B, W]."""
    item_codes, _ = pd.factorize(group["item"], sort=True)
    worker_codes = names.get_indexer(group["worker"])
    label_codes, _ = pd.factorize(group["value"].astype(str), sort=True)
    k = label_codes.max() + 1
    point = np.full(len(names), np.nan)
    boot = np.full((n_boot, len(names)), np.nan)
    if model == "mace" and len(group) > MACE_MAX_RATINGS:
        return point, boot  # not fitted (time): the row's note says so
    present = np.unique(worker_codes)
    local = np.searchsorted(present, worker_codes)
    point[present], params = _fit(model, item_codes, local, label_codes, k)
    stacked = _stacked_draws(item_codes, local, label_codes, n_boot, seed)
    if stacked is not None:
        items, workers, labels, groups, draw, worker = stacked
        boot[draw, present[worker]] = _fit_resamples(model, items, workers, labels, groups, k,
                                                     None if params is None else
                                                     (params[0][worker], params[1][worker]))
    return point, boot


def _stacked_draws(items, workers, labels, n_boot: int, seed: int):
    """Every resample as one data set with its items and workers coded apart (a worker of
    draw b is a worker of its own), to be fitted at once: (items, workers, labels, the group
    of each stacked item, and per stacked worker its draw and its original code); None when
    no resample has two label values (nothing to tell workers apart by)."""
    parts, item_base, worker_base = [], 0, 0
    for b, (rows, new_items) in enumerate(_draws(items, items.max() + 1, n_boot, seed)):
        if np.unique(labels[rows]).size < 2:
            continue
        seen, codes = np.unique(workers[rows], return_inverse=True)
        n_new = new_items.max() + 1
        parts.append((new_items + item_base, codes + worker_base, labels[rows],
                      np.full(n_new, len(parts)), np.full(len(seen), b), seen))
        item_base, worker_base = item_base + n_new, worker_base + len(seen)
    if not parts:
        return None
    return tuple(np.concatenate(column) for column in zip(*parts, strict=True))


def _fit_resamples(model: str, items, workers, labels, groups, k: int, start) -> np.ndarray:
    """Each stacked worker's reliability, all resamples in one fit (each its own class priors
    for Dawid-Skene; MACE restarted from the point estimate, so that the interval is around
    that optimum), until the posteriors move less than DRAW_TOLERANCE."""
    if model == "dawid_skene":
        return dawid_skene_accuracy(items, workers, labels, tolerance=DRAW_TOLERANCE,
                                    groups=groups, n_classes=k)
    return mace(items, workers, labels, init=start, n_classes=k, tolerance=DRAW_TOLERANCE)[2]


def reliability_table(frame: pd.DataFrame, *, n_boot: int = RELIABILITY_BOOT, seed: int = 0,
                      min_labels: int = MIN_LABELS) -> pd.DataFrame:
    """Per worker and model (Dawid-Skene, MACE): the reliability averaged over categorical
    parts weighted by the worker's labels, a 95% percentile interval from resampling items
    (every part refitted per draw), and None below `min_labels` labels (the `note` says why)."""
    parts = list(categorical_parts(frame))
    if not parts:
        return pd.DataFrame(columns=COLUMNS)
    names = pd.Index(sorted(pd.concat([g["worker"] for g in parts]).unique()))
    counts = np.stack([np.bincount(names.get_indexer(g["worker"]), minlength=len(names))
                       for g in parts])
    wanted = n_boot > 0
    n_boot = min(n_boot, BOOT_RATINGS_BUDGET // max(int(counts.sum()), 1))
    n_boot = n_boot if n_boot >= MIN_BOOT else 0
    rows = []
    for model in MODELS:
        # One seed for every part: parts over the same items (the questions of one page)
        # draw the same items in each resample, so a worker's parts are resampled together.
        fits = [_part_fits(model, g, names, n_boot, seed) for g in parts]
        point = _weighted([f[0] for f in fits], counts)
        boot = _weighted([f[1] for f in fits], counts) if n_boot else None
        for w, worker in enumerate(names):
            rows.append(_row(worker, model, point[w], None if boot is None else boot[:, w],
                             int(counts[:, w].sum()), int((counts[:, w] > 0).sum()), min_labels,
                             wanted))
    return pd.DataFrame(rows, columns=COLUMNS)


def _weighted(values: list[np.ndarray], counts: np.ndarray) -> np.ndarray:
    """The label-weighted mean over parts of values[part][..., W] (NaN where a worker has no
    estimate in any part of that resample)."""
    stacked = np.stack(values)  # [P, (B,) W]
    weights = counts.reshape(counts.shape[0], *([1] * (stacked.ndim - 2)), counts.shape[1])
    weights = np.where(np.isfinite(stacked), weights, 0)
    with np.errstate(invalid="ignore"):
        return np.nansum(stacked * weights, axis=0) / weights.sum(axis=0)


def _row(worker, model: str, point: float, boot: np.ndarray | None, n_labels: int,
         n_parts: int, min_labels: int, wanted: bool) -> dict:
    row = {"worker": worker, "model": model, "reliability": None, "ci_low": None,
           "ci_high": None, "n_labels": n_labels, "n_parts": n_parts, "note": ""}
    if n_labels < min_labels:
        row["note"] = f"fewer than {min_labels} labels"
        return row
    if not np.isfinite(point):
        row["note"] = f"not fitted: parts of more than {MACE_MAX_RATINGS:,} ratings"
        return row
    row["reliability"] = float(point)
    finite = boot[np.isfinite(boot)] if boot is not None else np.array([])
    if len(finite) >= MIN_BOOT:
        row["ci_low"], row["ci_high"] = (float(v) for v in np.percentile(finite, [2.5, 97.5]))
    elif wanted:
        row["note"] = "no interval: too many ratings to refit" if boot is None else \
            "no interval: too few resamples with the worker"
    return row
