"""Power by simulation through the analysis itself: the plan matches the tests that will be run.

A study of k systems is compared over all k(k-1)/2 pairs with a correction (Holm or
Benjamini-Hochberg), so a plan for one uncorrected test promises power the analysis does not
deliver (5 systems, Holm over 10 pairs: a plan for 80% gave 34% per true difference). Here
the planned study is simulated many times and each simulated study is analysed by the very
functions the statistics page uses: `comparisons.compare_systems` for numeric questions
(paired or unpaired), `preference_tests.preference_comparisons` for pairwise questions.

The simulated truth is the case of "is the best system really best": one system `effect`
better than k - 1 equal others. Power is the share of those k - 1 true differences that the
analysis declares, with the right winner, after the correction (the "per-difference" power).

- numeric: item means drawn from the variance components (planning.VarianceComponents):
  unpaired, each system's items are its own, item mean ~ N(mu_s, item + rating / r); paired
  (the systems answer the same segments), the segment's effect N(0, item) is shared by the
  systems and each output adds N(0, rating / r). Sharing the whole item effect is the
  optimistic end: a system-by-segment interaction would count as rating variance here.
- pairwise: `judgments` per pair of systems, each on its own item, won by i with the
  Bradley-Terry probability 1 / (1 + exp(-(theta_i - theta_j))) (no ties), shown in a random
  order; `effect` is the gap in log-strength.

The search starts from the closed form at alpha / pairs (Bonferroni, normal approximation)
and corrects it with one or two simulations on the probit scale (power ~ Phi(a sqrt(n) - b)),
so a plan costs two or three simulation batches. The same seed gives the same plan.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy import stats

from .comparisons import compare_systems
from .planning import RANK_TEST_EFFICIENCY, VarianceComponents
from .preference_tests import preference_comparisons

N_SIM = 200
PLANS_KEPT = 128  # plans kept per process (each a small dict)
MAX_UNITS = 100_000
DESIGNS = ("numeric", "pairwise")


def _systems(k: int) -> list[str]:
    return [f"s{n:02d}" for n in range(k)]  # s00 is the better one


def _found(table: pd.DataFrame, best: str) -> int:
    """True differences declared with the right winner (pairs of `best` won by it)."""
    involved = (table["system_a"] == best) | (table["system_b"] == best)
    return int((involved & (table["better"] == best)).sum())


def numeric_power(components: VarianceComponents, *, effect: float, items_per_system: int,
                  ratings_per_item: float, systems: int = 2, correction: str = "holm",
                  paired: bool = False, alpha: float = 0.05, n_sim: int = N_SIM,
                  seed: int = 0) -> float:
    """Simulated per-difference power of a numeric question's comparisons (see module)."""
    rng = np.random.default_rng(seed)
    names = _systems(systems)
    n = int(items_per_system)
    noise = components.rating_variance / max(1.0, ratings_per_item)
    shift = np.where(np.arange(systems) == 0, effect, 0.0)[None, :, None]
    if paired:
        values = (rng.normal(0, math.sqrt(components.item_variance), (n_sim, 1, n))
                  + rng.normal(0, math.sqrt(noise), (n_sim, systems, n)))
    else:
        values = rng.normal(0, math.sqrt(components.item_variance + noise), (n_sim, systems, n))
    # Each simulated study is its own question: compare_systems corrects within a question.
    cells = n_sim * systems * n
    frame = pd.DataFrame({
        "question": np.repeat(np.arange(n_sim), systems * n).astype(str),
        "system": np.tile(np.repeat(names, n), n_sim),
        "item": np.tile(np.arange(systems * n), n_sim),
        "segment": np.tile(np.arange(n), n_sim * systems) if paired else [None] * cells,
        "value": (values + shift).ravel(), "worker": "w", "part": ""})
    table = compare_systems(frame, alpha=alpha, correction=correction, n_boot=0)
    return _found(table, names[0]) / (n_sim * (systems - 1))


def pairwise_power(*, effect: float, judgments_per_pair: int, systems: int = 2,
                   correction: str = "holm", alpha: float = 0.05, n_sim: int = N_SIM,
                   seed: int = 0) -> float:
    """Simulated per-difference power of a pairwise question's corrected tests (see module)."""
    rng = np.random.default_rng(seed)
    names = np.array(_systems(systems))
    theta = np.where(np.arange(systems) == 0, effect, 0.0)
    a, b = np.triu_indices(systems, 1)
    a, b = np.repeat(a, judgments_per_pair), np.repeat(b, judgments_per_pair)
    found = 0
    for _ in range(n_sim):
        a_wins = rng.random(len(a)) < 1 / (1 + np.exp(-(theta[a] - theta[b])))
        flip = rng.random(len(a)) < 0.5
        frame = pd.DataFrame({"item": np.arange(len(a)), "worker": "w",
                              "first": names[np.where(flip, b, a)],
                              "second": names[np.where(flip, a, b)],
                              "score": np.where(flip, ~a_wins, a_wins).astype(float)})
        found += _found(preference_comparisons(frame, correction=correction, alpha=alpha),
                        names[0])
    return found / (n_sim * (systems - 1))


def _search(power_at: Callable[[int], float], start: int, slope: float, target: float,
            rounds: int = 3) -> tuple[int, float]:
    """The smallest n (on the probit model through the simulated points) with `target` power,
    and the simulated power at it. `slope` is d probit(power) / d sqrt(n)."""
    n, tried = max(2, start), {}
    for _ in range(rounds):
        tried[n] = power_at(n)
        if abs(tried[n] - target) <= 0.03 and tried[n] >= target - 0.01:
            break
        p = min(max(tried[n], 0.5 / N_SIM), 1 - 0.5 / N_SIM)
        offset = slope * math.sqrt(n) - stats.norm.ppf(p)
        nxt = min(MAX_UNITS, max(2, math.ceil(((stats.norm.ppf(target) + offset) / slope) ** 2)))
        if nxt in tried:
            break
        n = nxt
    enough = [m for m, p in tried.items() if p >= target - 0.01]
    best = min(enough) if enough else max(tried)
    return best, tried[best]


def plan_numeric(components: VarianceComponents, *, effect: float, ratings_per_item: float,
                 systems: int = 2, correction: str = "holm", paired: bool = False,
                 power: float = 0.8, alpha: float = 0.05, n_sim: int = N_SIM,
                 seed: int = 0) -> dict:
    """Items per system for `power` per true difference, found by simulation (see module)."""
    _check(effect, power, alpha, systems)
    return dict(_plan_numeric(components, effect, ratings_per_item, systems, correction,
                              paired, power, alpha, n_sim, seed))


# A plan is a pure function of its arguments (the same seed gives the same plan) and costs
# hundreds of simulated analyses; the report page, its exports and its paper bundle ask for the
# same plans of the same data, so each process keeps the latest ones.
@functools.lru_cache(maxsize=PLANS_KEPT)
def _plan_numeric(components: VarianceComponents, effect: float, ratings_per_item: float,
                  systems: int, correction: str, paired: bool, power: float, alpha: float,
                  n_sim: int, seed: int) -> dict:
    pairs = systems * (systems - 1) // 2
    variance = (components.rating_variance / ratings_per_item
                + (0.0 if paired else components.item_variance))
    slope = effect / math.sqrt(2 * max(variance, 1e-12)) * math.sqrt(RANK_TEST_EFFICIENCY)
    start = ((stats.norm.ppf(1 - alpha / (2 * pairs)) + stats.norm.ppf(power)) / slope) ** 2
    n, achieved = _search(lambda m: numeric_power(
        components, effect=effect, items_per_system=m, ratings_per_item=ratings_per_item,
        systems=systems, correction=correction, paired=paired, alpha=alpha, n_sim=n_sim,
        seed=seed), math.ceil(start), slope, power)
    return {"design": "numeric", "systems": systems, "pairs": pairs, "correction": correction,
            "paired": paired, "effect": effect, "power": power, "alpha": alpha,
            "items_per_system_needed": n, "simulated_power": achieved, "simulations": n_sim}


def plan_pairwise(*, effect: float, systems: int = 2, correction: str = "holm",
                  power: float = 0.8, alpha: float = 0.05, n_sim: int = N_SIM,
                  seed: int = 0) -> dict:
    """Judgments per pair of systems (one per item) for `power` per true strength difference
    `effect` (log-strength) among `systems`, by simulation (see module)."""
    _check(effect, power, alpha, systems)
    return dict(_plan_pairwise(effect, systems, correction, power, alpha, n_sim, seed))


@functools.lru_cache(maxsize=PLANS_KEPT)
def _plan_pairwise(effect: float, systems: int, correction: str, power: float, alpha: float,
                   n_sim: int, seed: int) -> dict:
    pairs = systems * (systems - 1) // 2
    p_win = 1 / (1 + math.exp(-effect))
    slope = 2 * abs(p_win - 0.5)  # sign test: (2p - 1) sqrt(n) / sqrt(1) at p0 = 1/2
    start = ((stats.norm.ppf(1 - alpha / (2 * pairs)) + stats.norm.ppf(power)) / slope) ** 2
    n, achieved = _search(lambda m: pairwise_power(
        effect=effect, judgments_per_pair=m, systems=systems, correction=correction,
        alpha=alpha, n_sim=n_sim, seed=seed), math.ceil(start), slope, power)
    return {"design": "pairwise", "systems": systems, "pairs": pairs, "correction": correction,
            "paired": True, "effect": effect, "power": power, "alpha": alpha,
            "judgments_per_pair_needed": n, "simulated_power": achieved, "simulations": n_sim}


def _check(effect: float, power: float, alpha: float, systems: int) -> None:
    if effect <= 0 or not 0 < power < 1 or not 0 < alpha < 1 or systems < 2:
        raise ValueError("effect > 0, 0 < power < 1, 0 < alpha < 1 and at least 2 systems")
