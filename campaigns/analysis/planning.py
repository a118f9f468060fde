"""Planning: how many items per system or ratings per item tell two systems apart.

From the observed variance of one question's ratings, split by a one-way random-effects
analysis of variance into between-item and within-item (rater) parts. Pure functions.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy import stats

# Asymptotic relative efficiency of the rank tests against the t-test under normality
# (Lehmann 1975): the rank test needs about 1/0.955 times the items.
RANK_TEST_EFFICIENCY = 3 / math.pi


@dataclass(frozen=True)
class VarianceComponents:
    item_variance: float  # between items' true means (the item effect)
    rating_variance: float  # between ratings of one item (raters and noise)
    n_items: int
    ratings_per_item: float

    def as_dict(self) -> dict:
        return asdict(self)


def variance_components(items: np.ndarray, values: np.ndarray) -> VarianceComponents:
    """Method-of-moments estimates (ANOVA; Searle, Casella & McCulloch 1992, ch. 3) with
    the unbalanced design's n0; a negative between-item estimate is set to 0."""
    frame = pd.DataFrame({"item": items, "value": np.asarray(values, dtype=float)})
    groups = frame.groupby("item")["value"]
    sizes, means = groups.size().to_numpy(), groups.mean().to_numpy()
    k, total = len(sizes), int(sizes.sum())
    if k < 2 or total <= k:
        raise ValueError("need at least two items and an item with two ratings")
    grand = frame["value"].mean()
    ms_between = (sizes * (means - grand) ** 2).sum() / (k - 1)
    ms_within = ((frame["value"] - groups.transform("mean")) ** 2).sum() / (total - k)
    n0 = (total - (sizes ** 2).sum() / total) / (k - 1)
    return VarianceComponents(max(0.0, (ms_between - ms_within) / n0), float(ms_within), k,
                              total / k)


def _z(alpha: float, power: float) -> float:
    return stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)


def items_needed(components: VarianceComponents, *, effect: float, ratings_per_item: float,
                 power: float = 0.8, alpha: float = 0.05) -> int:
    """Items per system for a two-sided comparison of two systems' means to detect a
    difference `effect` (in the rating scale's units) with `power` at level `alpha`: the normal
    approximation n = 2 (z_{1-alpha/2} + z_power)^2 (s_item^2 + s_rating^2 / r) / effect^2
    (Cohen 1988, ch. 2), divided by the rank test's efficiency 3/pi."""
    if effect <= 0 or not 0 < power < 1 or not 0 < alpha < 1 or ratings_per_item < 1:
        raise ValueError("effect > 0, 0 < power < 1, 0 < alpha < 1, ratings per item >= 1")
    variance = components.item_variance + components.rating_variance / ratings_per_item
    n = 2 * _z(alpha, power) ** 2 * variance / effect ** 2 / RANK_TEST_EFFICIENCY
    return max(2, math.ceil(n))


def ratings_needed(components: VarianceComponents, *, effect: float, items_per_system: int,
                   power: float = 0.8, alpha: float = 0.05) -> int | None:
    """Ratings per item that reach the same power with `items_per_system` items; None when no
    number of ratings does (the items' own spread already needs more items)."""
    budget = effect ** 2 * items_per_system * RANK_TEST_EFFICIENCY / (2 * _z(alpha, power) ** 2)
    room = budget - components.item_variance
    if room <= 0:
        return None
    if components.rating_variance == 0:
        return 1
    return max(1, math.ceil(components.rating_variance / room))


def plan(components: VarianceComponents, *, effect: float, items_per_system: int,
         power: float = 0.8, alpha: float = 0.05) -> dict:
    """Both answers for the current design: items per system at the current ratings per item,
    and ratings per item at the current items per system."""
    r = max(1.0, components.ratings_per_item)
    items = items_needed(components, effect=effect, ratings_per_item=r, power=power,
                         alpha=alpha)
    ratings = ratings_needed(components, effect=effect, items_per_system=items_per_system,
                             power=power, alpha=alpha)
    return {**components.as_dict(), "effect": effect, "power": power, "alpha": alpha,
            "items_per_system": items_per_system, "items_per_system_needed": items,
            "more_items_per_system": max(0, items - items_per_system),
            "ratings_per_item_needed": ratings,
            "more_ratings_per_item": None if ratings is None else max(0, math.ceil(ratings - r))}
