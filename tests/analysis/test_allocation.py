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
    assert wanted([{"q": 1}, {"q": 5}], minimum=2, maximum=5, spread=0) == (5, 0.6)
    assert wanted([{"q": 1}, {"q": 5}, {"q": 3}], minimum=2, maximum=5, spread=0) == (5, 0.4)


def test_an_audited_item_goes_on_to_the_maximum_ahead_of_disagreeing_items():
    wanted = alloc.redundancy_wanted
    agreed = [{"q": 3}, {"q": 3}]
    assert wanted(agreed, minimum=2, maximum=5, spread=0, audited=True) == (5, 1.4)
    assert wanted(agreed + [{"q": 1}], minimum=2, maximum=5, spread=0, audited=True) == (5, 1.6)
    assert wanted(agreed * 2 + [{"q": 3}], minimum=2, maximum=5, spread=0,
                  audited=True) == (5, 0.0)  # at the maximum: nothing more wanted
    # an audited item whose first raters disagree is a disagreeing item like any other
    assert wanted([{"q": 1}, {"q": 5}], minimum=2, maximum=5, spread=0, audited=True) == (5, 0.6)
    assert wanted([{"q": 1}], minimum=2, maximum=5, spread=0, audited=True) == (
        5, alloc.BELOW_MINIMUM)
    # categorical answers with fewer raters to come than agreed: the majority is decided,
    # so the item closes as if it were not audited
    assert wanted([{"w": "a"}] * 2, minimum=2, maximum=3, spread=0, audited=True) == (2, 0.0)
    assert wanted([{"w": "a"}] * 2, minimum=2, maximum=4, spread=0, audited=True) == (4, 1.5)
    assert wanted([{"w": "a", "q": 3}] * 2, minimum=2, maximum=3, spread=0,
                  audited=True) == (3, 1 + 2 / 3)


def test_the_audit_sample_is_a_fifth_of_the_ids_spread_evenly():
    sample = [alloc.in_audit_sample(i) for i in range(1, 10_001)]
    assert sum(sample) == pytest.approx(2_000, abs=20)
    for start in range(0, 10_000, 100):  # every run of 100 consecutive ids
        assert 15 <= sum(sample[start:start + 100]) <= 25


def test_the_panel_keeps_the_agreed_answer_by_hand():
    kept = alloc.agreement_kept
    # numeric: first two 80 and 90 (mean 85, within the spread of 10); the panel's mean must
    # be within 5 of 85
    assert kept([{"r": 80}, {"r": 90}, {"r": 84}, {"r": 86}], minimum=2, spread=10)  # 85
    assert kept([{"r": 80}, {"r": 90}, {"r": 90}, {"r": 100}], minimum=2, spread=10)  # 90
    assert not kept([{"r": 80}, {"r": 90}, {"r": 100}, {"r": 100}], minimum=2, spread=10)
    assert kept([{"r": 60}, {"r": 90}, {"r": 0}], minimum=2, spread=10) is None
    # categorical: the agreed value must be the panel's most frequent, alone
    assert kept([{"w": "a"}, {"w": "a"}, {"w": "b"}], minimum=2, spread=0)
    assert not kept([{"w": "a"}, {"w": "a"}, {"w": "b"}, {"w": "b"}], minimum=2, spread=0)
    assert not kept([{"w": "a"}, {"w": "a"}] + [{"w": "b"}] * 3, minimum=2, spread=0)
    # every part must keep its answer
    assert not kept([{"w": "a", "r": 1}, {"w": "a", "r": 1}, {"w": "a", "r": 5}],
                    minimum=2, spread=1)


def test_wilson_upper_bound_matches_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    for kept, n in ((0, 10), (7, 10), (10, 10), (22, 35), (1, 1)):
        expected = proportion_confint(kept, n, alpha=0.05, method="wilson")[1]
        assert alloc.wilson_upper(kept, n) == pytest.approx(expected, rel=1e-9)
    assert alloc.wilson_upper(0, 0) == 1.0


def _audited_ids(n, *, audited=True):
    return [i for i in range(1, 1000) if alloc.in_audit_sample(i) == audited][:n]


def test_a_failed_audit_hands_out_as_uniform_allocation_does():
    """Ten audited items whose first two raters agreed (5, 5) and whose panel of four did not
    keep it (mean 3); one closed item and one below the minimum. 0 of 10 kept: the Wilson
    upper bound is 0.28, under 0.9, so every item wants the maximum at one priority."""
    audited, (closed, fresh) = _audited_ids(10), _audited_ids(2, audited=False)
    answers = {i: [{"r": 5}, {"r": 5}, {"r": 1}, {"r": 1}] for i in audited}
    answers[closed] = [{"r": 5}, {"r": 5}]
    answers[fresh] = [{"r": 5}]
    priority, wanted, audit = alloc.redundancy_plan(answers, [*audited, closed, fresh],
                                                    minimum=2, maximum=4, spread=1)
    assert (audit.kept, audit.checked, audit.failed) == (0, 10, True)
    assert audit.upper == pytest.approx(0.2775, abs=1e-4)
    assert set(priority.values()) == {0.0} and set(wanted.values()) == {4}
    assert "0 of 10 audited items" in audit.text(1) and "every item now gets" in audit.text(1)


def test_a_kept_or_unfinished_audit_leaves_dynamic_redundancy_as_it_is():
    audited, (closed,) = _audited_ids(10), _audited_ids(1, audited=False)
    answers = {i: [{"r": 5}, {"r": 5}, {"r": 5}, {"r": 4}] for i in audited}
    answers[closed] = [{"r": 5}, {"r": 5}]
    priority, wanted, audit = alloc.redundancy_plan(answers, [*audited, closed],
                                                    minimum=2, maximum=4, spread=1)
    assert (audit.kept, audit.checked, audit.failed) == (10, 10, False)
    assert (wanted[closed], priority[closed]) == (2, 0.0)
    # nine failures are not yet enough to judge: the premise stands until ten are in
    answers = {i: [{"r": 5}, {"r": 5}, {"r": 1}, {"r": 1}] for i in audited[:9]}
    answers[closed] = [{"r": 5}, {"r": 5}]
    priority, wanted, audit = alloc.redundancy_plan(answers, [*audited, closed],
                                                    minimum=2, maximum=4, spread=1)
    assert (audit.checked, audit.failed, wanted[closed]) == (9, False, 2)
    assert "Judged from 10 audited items on" in audit.text(1)
    assert priority[audited[9]] == alloc.BELOW_MINIMUM
    # categorical items with fewer raters to come than agreed cannot fail: not counted
    answers = {i: [{"w": "a"}, {"w": "a"}, {"w": "b"}] for i in audited}
    audit = alloc.redundancy_audit(answers, minimum=2, maximum=3, spread=0)
    assert (audit.checked, audit.text(0)) == (0, "")


def test_on_mlqe_pe_scores_agreement_of_two_raters_does_not_settle_a_segment():
    """The real DA scores (300 en-de segments, 6 raters each, in the file's order), as items
    1-300 at the maximum, two raters agreeing within 10 points: the audit's count is the
    share computed directly with pandas, and it fails."""
    import ast
    import csv

    import pandas as pd

    from tests.shared_data import SHARED, require

    folder = SHARED / "realdata" / "translation_da"
    require(folder)
    frame = pd.read_csv(folder / "mlqe-pe_en-de_test20.ende.df.short_first300.tsv", sep="\t",
                        quoting=csv.QUOTE_NONE)
    scores = [ast.literal_eval(s) for s in frame["scores"]]
    answers = {n: [{"rating": v} for v in row] for n, row in enumerate(scores, start=1)}
    audit = alloc.redundancy_audit(answers, minimum=2, maximum=6, spread=10)

    direct = pd.DataFrame({"id": range(1, 301), "scores": scores})
    direct = direct[direct["id"].map(lambda i: (i * 2654435761) % 2**32 < 0.2 * 2**32)]
    first = direct["scores"].map(lambda s: s[:2])
    agreed = direct[first.map(lambda s: max(s) - min(s) <= 10)]
    kept = agreed["scores"].map(lambda s: abs(np.mean(s) - np.mean(s[:2])) <= 5)
    assert (audit.kept, audit.checked) == (int(kept.sum()), len(agreed))
    assert audit.checked >= 10 and audit.kept / audit.checked < 0.75 and audit.failed


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
