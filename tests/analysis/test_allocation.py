"""campaigns/analysis/allocation.py: the figures adaptive allocation steers by, each checked
against a computation by hand or by scipy directly."""
import math

import numpy as np
import pytest
from scipy import optimize, stats

from campaigns.analysis import allocation as alloc


def test_raters_agree_on_equal_categories_and_numbers_within_the_spread():
    assert alloc.answers_agree([{"q/winner": "s1"}, {"q/winner": "s1"}], spread=1)
    assert not alloc.answers_agree([{"q/winner": "s1"}, {"q/winner": "s2"}], spread=1)
    assert alloc.answers_agree([{"q": 3}, {"q": 4}], spread=1)
    assert not alloc.answers_agree([{"q": 3}, {"q": 5}], spread=1)
    assert alloc.answers_agree([{"q": 3, "r": ""}, {"q": 3}], spread=0)  # left out: skipped


def test_dynamic_redundancy_stops_at_the_minimum_on_agreement_and_stays_open_otherwise():
    wanted = alloc.redundancy_wanted
    assert wanted([{"q": 3}], minimum=2, maximum=5, spread=0) == (5, alloc.BELOW_MINIMUM)
    assert wanted([{"q": 3}, {"q": 3}], minimum=2, maximum=5, spread=0) == (2, 0.0)
    assert wanted([{"q": 1}, {"q": 5}], minimum=2, maximum=5, spread=0) == (5, 3.0)
    assert wanted([{"q": 1}, {"q": 5}, {"q": 3}], minimum=2, maximum=5, spread=0) == (5, 2.0)


def test_two_system_strengths_match_the_closed_form_with_the_prior():
    """Two systems, 10 wins to 0 plus half a virtual win each way: d = log(10.5 / 0.5) and
    var(d) = 1 / (n p (1 - p)) with n = 11, p = 21 / 22 (the binomial logit's information)."""
    strengths = alloc.bradley_terry_strengths([("a", "b", 1.0)] * 10, [("a", "b")])
    d, se = strengths.difference("a", "b")
    assert d == pytest.approx(math.log(21), rel=1e-6)
    p = 21 / 22
    assert se == pytest.approx(math.sqrt(1 / (11 * p * (1 - p))), rel=1e-6)
    assert strengths.wrong_order_probability("a", "b") == pytest.approx(
        stats.norm.cdf(-math.log(21) / se), rel=1e-6)


def test_three_system_fit_and_covariance_match_scipy_on_the_same_likelihood():
    judgments = ([("a", "b", 1.0)] * 6 + [("b", "a", 1.0)] * 2 + [("b", "c", 1.0)] * 3
                 + [("c", "b", 1.0)] * 3 + [("a", "c", 0.5)] * 2)
    pairs = [("a", "b"), ("b", "c"), ("a", "c")]
    strengths = alloc.bradley_terry_strengths(judgments, pairs)
    wins = np.full((3, 3), alloc.PRIOR_WINS)
    np.fill_diagonal(wins, 0)
    at = {"a": 0, "b": 1, "c": 2}
    for x, y, score in judgments:
        wins[at[x], at[y]] += score
        wins[at[y], at[x]] += 1 - score

    def loss(free):  # theta_c = 0 fixes the constant
        theta = np.append(free, 0.0)
        diff = theta[:, None] - theta[None, :]
        return -(wins * -np.logaddexp(0, -diff)).sum()

    fit = optimize.minimize(loss, np.zeros(2), method="BFGS", options={"gtol": 1e-10})
    theta = np.append(fit.x, 0.0)
    expected_d = theta[0] - theta[1]
    d, se = strengths.difference("a", "b")
    assert d == pytest.approx(expected_d, abs=1e-5)
    # var(theta_a - theta_b) from the inverse Hessian of the reduced problem, numerically
    h = 1e-4
    hessian = np.zeros((2, 2))
    for i in range(2):
        for j in range(2):
            e_i, e_j = np.eye(2)[i] * h, np.eye(2)[j] * h
            hessian[i, j] = (loss(fit.x + e_i + e_j) - loss(fit.x + e_i - e_j)
                             - loss(fit.x - e_i + e_j) + loss(fit.x - e_i - e_j)) / (4 * h * h)
    cov = np.linalg.inv(hessian)
    assert se == pytest.approx(math.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]), rel=1e-3)


def test_ranking_priorities_favour_the_uncertain_pair_after_the_minimum():
    strengths = alloc.bradley_terry_strengths(
        [("s1", "s2", 1.0)] * 10 + [("s2", "s3", 1.0), ("s3", "s2", 1.0)],
        [("s1", "s2"), ("s2", "s3")])
    priority = alloc.ranking_priorities({1: ("s1", "s2"), 2: ("s2", "s3"), 3: ("s1", "s3")},
                                        {1: 10, 2: 2, 3: 0}, strengths, minimum=1)
    assert priority[3] == alloc.BELOW_MINIMUM
    assert priority[2] == pytest.approx(0.5)  # a 1-1 tie: the order is a coin toss
    assert priority[1] < 0.05


def test_half_width_is_the_t_interval_of_the_pooled_ratings():
    mean, half, n = alloc.mean_half_width({1.0: 2, 5.0: 2})
    ratings = np.array([1, 1, 5, 5.0])
    low, high = stats.t.interval(0.95, 3, loc=ratings.mean(), scale=stats.sem(ratings))
    assert (mean, n) == (3.0, 4)
    assert half == pytest.approx((high - low) / 2)
    widths = alloc.system_half_widths([("A", {"q": {"5": 2}}), ("A", {"q": {"5": 2}}),
                                       ("B", {"q": {"1": 1, "5": 1}}),
                                       ("B", {"q": {"1": 1, "5": 1}})])
    assert widths == {"A": 0.0, "B": pytest.approx(half)}


def test_ranks_separated_needs_every_adjacent_pair_significant():
    clear = alloc.bradley_terry_strengths([("a", "b", 1.0)] * 30 + [("b", "c", 1.0)] * 30,
                                          [("a", "b"), ("b", "c")])
    assert alloc.ranks_separated(clear)[0]
    close = alloc.bradley_terry_strengths([("a", "b", 1.0)] * 30 + [("b", "c", 0.5)] * 4,
                                          [("a", "b"), ("b", "c")])
    separated, closest = alloc.ranks_separated(close)
    assert not separated and ("b over c" in closest or "c over b" in closest)
