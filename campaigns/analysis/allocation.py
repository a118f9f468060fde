"""Adaptive allocation's statistics: where the next judgments are worth most, and whether a
campaign's stopping target is met.

Pure functions over plain data; the allocation job (services/allocation.py) reads the answers
and writes what these return as per-item priorities and wanted counts. Methods, assumptions and
references: docs/analysis.md, "Adaptive designs".

- Dynamic redundancy: an item stops at the minimum when its raters agree (every categorical
  part the same, every numeric part within a spread) and gets more, up to the maximum,
  while they do not. An audit sample of the items goes on to the maximum to check that
  agreement settles items; when it clearly does not, every item wants the maximum.
- Adaptive ranking: a Bradley-Terry fit with a weak prior (half a virtual win each way between
  every two systems that meet, so that the fit exists from the first judgment); an item's
  priority is the probability that its pair's estimated order is wrong, Phi(-|d| / se(d)).
- Adaptive precision: an item's priority is its system's 95% interval half-width of the mean
  rating (t interval), relative to the target.
- Every strategy first brings each item to the minimum (the exploration floor): items below
  it outrank all others, so every item and pair keeps being sampled.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from .preference import fit_strengths

# Items below the minimum outrank every adaptive priority (which lie in [0, 1], or in [0, a
# few] for precision relative to its target).
BELOW_MINIMUM = 1000.0
# Dynamic redundancy audits its premise (that raters who agree at the minimum have settled
# the item) on a fixed share of the items, carried to the maximum whatever their first raters
# say; once enough of them are in and even the upper bound of the share that kept the agreed
# answer is under the floor, the strategy hands out as uniform allocation does.
AUDIT_SHARE = 0.2
AUDIT_ITEMS = 10
AUDIT_FLOOR = 0.9
PRIOR_WINS = 0.5  # virtual wins each way between two systems that meet (Bradley-Terry prior)
Z_95 = float(stats.norm.ppf(0.975))


def answers_agree(answers: Sequence[Mapping[str, Any]], spread: float) -> bool:
    """Whether annotations agree: per part, every categorical value the same and every
    numeric value within `spread` of each other. Parts an annotation left out are skipped."""
    parts: dict[str, list[Any]] = {}
    for answer in answers:
        for part, value in answer.items():
            if value is not None and value != "":
                parts.setdefault(part, []).append(value)
    for values in parts.values():
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            if max(values) - min(values) > spread:
                return False
        elif len({repr(v) for v in values}) > 1:
            return False
    return True


def redundancy_wanted(answers: Sequence[Mapping[str, Any]], *, minimum: int, maximum: int,
                      spread: float, audited: bool = False) -> tuple[int, float]:
    """(annotations wanted, priority) of an item under dynamic redundancy, given its answers
    in the order they came.

    An item wants the maximum until it has the minimum and its raters agree; then it wants
    what it has (it is closed), unless it is in the audit sample, which goes on to the
    maximum so that the premise can be checked (`redundancy_audit`). Wanting the maximum
    rather than one more at a time keeps an open item open between two runs of the job, so
    the campaign never looks full (and closes for good) while a disagreeing item still waits
    for its next rater. Below the minimum first; then audited items that agreed, the most
    answered first (each finished soonest, so that the audit is judged early); then
    disagreeing items, the fewest answers first.
    """
    done = len(answers)
    if done < minimum:
        return maximum, BELOW_MINIMUM
    if audited and done < maximum and audit_can_fail(answers[:minimum], minimum=minimum,
                                                     maximum=maximum, spread=spread):
        return maximum, 1.0 + done / maximum
    if answers_agree(answers, spread):
        return done, 0.0
    return maximum, (maximum - done) / maximum


def in_audit_sample(item_id: int) -> bool:
    """Whether an item is in dynamic redundancy's audit sample: about AUDIT_SHARE of the items,
    chosen by a multiplicative hash of the id (fixed before any answer, so the sample is
    independent of what raters say, and spread evenly over consecutive ids)."""
    return (item_id * 0x9E3779B1) % 2**32 < AUDIT_SHARE * 2**32


def audit_can_fail(first: Sequence[Mapping[str, Any]], *, minimum: int, maximum: int,
                   spread: float) -> bool:
    """Whether auditing an item whose first `minimum` answers are `first` can tell anything:
    they agree, and either some part is numeric (the panel's mean can move) or the raters to
    come could outnumber or tie the agreed category (maximum - minimum >= minimum). With
    categorical answers and fewer raters to come than agreed, the majority is already
    decided, and carrying the item on would spend judgments for nothing."""
    if not answers_agree(first, spread):
        return False
    numeric = any(_is_number(v) for answer in first for v in answer.values())
    return numeric or maximum - minimum >= minimum


def agreement_kept(answers: Sequence[Mapping[str, Any]], *, minimum: int,
                   spread: float) -> bool | None:
    """For an item whose first `minimum` answers agree: whether the whole panel's answer is
    the agreed one (per part, the panel's most frequent categorical value is the agreed value
    and no other value is as frequent; the panel's numeric mean lies within half the spread of
    the first answers' mean). None when the first answers do not agree (nothing to check)."""
    first = answers[:minimum]
    if not answers_agree(first, spread):
        return None
    for part in {p for answer in first for p in answer}:
        early = _values(first, part)
        panel = _values(answers, part)
        if not early:
            continue
        if all(_is_number(v) for v in panel):
            if abs(sum(panel) / len(panel) - sum(early) / len(early)) > spread / 2:
                return False
        else:
            counts = Counter(repr(v) for v in panel)
            (top, n), *rest = counts.most_common()
            if top != repr(early[0]) or (rest and rest[0][1] == n):
                return False
    return True


def _values(answers: Sequence[Mapping[str, Any]], part: str) -> list[Any]:
    return [a[part] for a in answers if a.get(part) is not None and a.get(part) != ""]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True)
class Audit:
    """Dynamic redundancy's check of its own premise: of the audited items whose first raters
    agreed and that reached the maximum, how many kept the agreed answer with the whole panel,
    and the 95% Wilson upper bound of that share."""

    kept: int
    checked: int
    upper: float

    @property
    def failed(self) -> bool:
        """Whether agreement at the minimum is shown not to settle items: enough audited items,
        and even the upper bound of the share kept under AUDIT_FLOOR."""
        return self.checked >= AUDIT_ITEMS and self.upper < AUDIT_FLOOR

    def text(self, spread: float) -> str:
        """The finding in words, for the dashboard, the API and the report ('' before any)."""
        if not self.checked:
            return ""
        said = (f"Agreement audit: {self.kept} of {self.checked} audited items whose first "
                f"raters agreed kept that answer with all their raters (95% upper bound "
                f"{self.upper:.0%}; numeric answers within ±{spread / 2:g} of the first "
                f"raters' mean).")
        if self.failed:
            return said + (f" Under {AUDIT_FLOOR:.0%}: agreement does not settle these items, "
                           "so every item now gets the maximum, as under uniform allocation.")
        if self.checked < AUDIT_ITEMS:
            return said + f" Judged from {AUDIT_ITEMS} audited items on."
        return said


def redundancy_audit(answers: Mapping[int, Sequence[Mapping[str, Any]]], *, minimum: int,
                     maximum: int, spread: float) -> Audit:
    """The audit over every item in the sample that has reached the maximum and whose first
    raters agreed where disagreement could still show (`audit_can_fail`)."""
    results = [agreement_kept(items, minimum=minimum, spread=spread)
               for item, items in answers.items()
               if len(items) >= maximum and in_audit_sample(item)
               and audit_can_fail(items[:minimum], minimum=minimum, maximum=maximum,
                                  spread=spread)]
    return Audit(sum(results), len(results), wilson_upper(sum(results), len(results)))


def wilson_upper(successes: int, n: int) -> float:
    """The upper end of the 95% Wilson score interval of a proportion (1 when n is 0)."""
    if n == 0:
        return 1.0
    p, z2 = successes / n, Z_95 ** 2
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z_95 * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return float(min(1.0, centre + half))


def redundancy_plan(answers: Mapping[int, Sequence[Mapping[str, Any]]], items: Iterable[int],
                    *, minimum: int, maximum: int, spread: float
                    ) -> tuple[dict[int, float], dict[int, int], Audit]:
    """(priority, wanted) per item under dynamic redundancy, and the audit they follow: while
    the audit has not failed, `redundancy_wanted` per item; once it has, every item wants the
    maximum at one priority (least-filled first, as uniform allocation hands out)."""
    audit = redundancy_audit(answers, minimum=minimum, maximum=maximum, spread=spread)
    items = list(items)
    if audit.failed:
        return dict.fromkeys(items, 0.0), dict.fromkeys(items, maximum), audit
    plan = {item: redundancy_wanted(answers.get(item, []), minimum=minimum, maximum=maximum,
                                    spread=spread, audited=in_audit_sample(item))
            for item in items}
    return ({item: p for item, (_, p) in plan.items()},
            {item: w for item, (w, _) in plan.items()}, audit)


@dataclass(frozen=True)
class Strengths:
    """Bradley-Terry log-strengths and their covariance (from the observed information)."""

    systems: list[str]
    theta: np.ndarray
    covariance: np.ndarray

    def index(self, system: str) -> int:
        return self.systems.index(system)

    def difference(self, a: str, b: str) -> tuple[float, float]:
        """(theta_a - theta_b, its standard error)."""
        i, j = self.index(a), self.index(b)
        c = self.covariance
        return (float(self.theta[i] - self.theta[j]),
                float(np.sqrt(max(c[i, i] + c[j, j] - 2 * c[i, j], 0.0))))

    def wrong_order_probability(self, a: str, b: str) -> float:
        """Phi(-|d| / se): how likely the estimated order of a and b is the wrong one."""
        d, se = self.difference(a, b)
        return 0.5 if se == 0 else float(stats.norm.cdf(-abs(d) / se))


def bradley_terry_strengths(judgments: Iterable[tuple[str, str, float]],
                            pairs: Iterable[tuple[str, str]]) -> Strengths:
    """Fit Bradley-Terry to (first, second, score of first) judgments with PRIOR_WINS virtual
    wins each way between every two systems in `pairs` (the pairs the items show)."""
    judgments = list(judgments)
    systems = sorted({s for pair in pairs for s in pair}
                     | {s for a, b, _ in judgments for s in (a, b)})
    at = {s: i for i, s in enumerate(systems)}
    k = len(systems)
    wins = np.zeros((k, k))
    for a, b in {tuple(sorted(p)) for p in pairs}:
        if a != b:
            wins[at[a], at[b]] += PRIOR_WINS
            wins[at[b], at[a]] += PRIOR_WINS
    for a, b, score in judgments:
        wins[at[a], at[b]] += score
        wins[at[b], at[a]] += 1.0 - score
    theta = fit_strengths(wins) if k > 1 else None
    if theta is None:
        return Strengths(systems, np.zeros(k), np.zeros((k, k)))
    return Strengths(systems, theta, _covariance(wins, theta))


def _covariance(wins: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """The inverse of the observed information of the log-likelihood, on the centred
    parametrisation (Moore-Penrose inverse: the strengths are defined up to a constant)."""
    n = wins + wins.T
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # p[i, j] = P(i beats j)
    w = n * p * (1 - p)
    np.fill_diagonal(w, 0.0)
    information = np.diag(w.sum(axis=1)) - w
    return np.linalg.pinv(information)


def ranking_priorities(item_pairs: Mapping[int, tuple[str, str]], done: Mapping[int, int],
                       strengths: Strengths, *, minimum: int) -> dict[int, float]:
    """Per item showing a pair of systems: BELOW_MINIMUM until it has `minimum` judgments,
    then the probability that its pair's estimated order is wrong."""
    cache: dict[tuple[str, str], float] = {}
    out = {}
    for item, (a, b) in item_pairs.items():
        if done.get(item, 0) < minimum:
            out[item] = BELOW_MINIMUM
            continue
        key = (min(a, b), max(a, b))
        if key not in cache:
            cache[key] = strengths.wrong_order_probability(*key)
        out[item] = cache[key]
    return out


def ranks_separated(strengths: Strengths) -> tuple[bool, str]:
    """Whether every two systems adjacent in the estimated order differ at the 5% level
    (|d| > 1.96 se), and the least separated pair in words."""
    if len(strengths.systems) < 2:
        return False, "fewer than two systems"
    order = np.argsort(-strengths.theta)
    worst = (np.inf, "")
    for i, j in zip(order[:-1], order[1:], strict=True):
        a, b = strengths.systems[i], strengths.systems[j]
        d, se = strengths.difference(a, b)
        z = abs(d) / se if se > 0 else 0.0
        if z < worst[0]:
            worst = (z, f"{a} over {b} (z = {z:.2f})")
    return worst[0] > Z_95, worst[1]


def mean_half_width(counts: Mapping[float, int]) -> tuple[float, float, int]:
    """(mean, 95% t-interval half-width, n) of ratings given as {value: count}; the
    half-width is infinite below two ratings."""
    values = np.array(list(counts), dtype=float)
    weights = np.array(list(counts.values()), dtype=float)
    n = int(weights.sum())
    if n == 0:
        return float("nan"), float("inf"), 0
    mean = float((values * weights).sum() / n)
    if n < 2:
        return mean, float("inf"), n
    sd = float(np.sqrt((weights * (values - mean) ** 2).sum() / (n - 1)))
    return mean, float(stats.t.ppf(0.975, n - 1) * sd / np.sqrt(n)), n


def system_half_widths(tallies: Iterable[tuple[str, Mapping[str, Mapping[str, int]]]]
                       ) -> dict[str, float]:
    """Per system, the widest 95% half-width of the mean over its numeric parts, from
    (system, per-item tally {part: {value: count}}) pairs."""
    pooled: dict[str, dict[str, dict[float, int]]] = {}
    for system, counts in tallies:
        for part, values in counts.items():
            into = pooled.setdefault(system, {}).setdefault(part, {})
            for value, n in values.items():
                into[float(value)] = into.get(float(value), 0) + int(n)
    return {system: max(mean_half_width(c)[1] for c in parts.values())
            for system, parts in pooled.items()}


def precision_priorities(item_systems: Mapping[int, str], done: Mapping[int, int],
                         half_widths: Mapping[str, float], *, target: float,
                         minimum: int) -> dict[int, float]:
    """Per item: BELOW_MINIMUM until it has `minimum` ratings, then its system's half-width
    relative to the target (a system without two ratings yet: BELOW_MINIMUM / 2)."""
    out = {}
    for item, system in item_systems.items():
        if done.get(item, 0) < minimum:
            out[item] = BELOW_MINIMUM
            continue
        width = half_widths.get(system, float("inf"))
        out[item] = BELOW_MINIMUM / 2 if not np.isfinite(width) else width / target
    return out
