"""Dawid-Skene and MACE against crowd-kit's algorithms, re-implemented here from crowd-kit
1.4.2's source (crowd-kit itself needs transformers and nltk, too heavy for the test extra),
on the real scratchplot story ratings: 300 ratings of 100 stories, 11 workers, 5 classes."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import digamma

from campaigns.analysis.reliability import dawid_skene_accuracy, worker_reliability
from campaigns.analysis.worker_models import MIN_LABELS, mace, reliability_table
from tests.analysis.test_realdata import STORY_DIR, _story_ratings
from tests.shared_data import require


def _interestingness() -> pd.DataFrame:
    require(STORY_DIR)
    ratings = _story_ratings()[1]
    part = ratings[ratings["aspect"] == "interestingness"]
    return pd.DataFrame({"task": part["id"], "worker": part["worker"], "label": part["rating"]})


def _crowdkit_dawid_skene(data: pd.DataFrame, n_iter=100, tol=1e-5) -> pd.Series:
    """crowd-kit's DawidSkene.fit: majority-vote start, M step, then E/M until the ELBO per
    rating gains less than `tol`; errors floored at 1e-10 over the labels a worker gave.
    Returns each worker's sum_c prior_c P(label c | class c)."""
    eps = 1e-10
    probas = data.groupby(["task", "label"]).size().unstack(fill_value=0)
    probas = probas.div(probas.sum(axis=1), axis=0)

    def m_step(probas):
        errors = data.join(probas, on="task").drop(columns="task").groupby(
            ["worker", "label"]).sum().clip(lower=eps)
        return errors / errors.groupby("worker").sum()

    priors, errors, loss = probas.mean(), m_step(probas), -np.inf
    for _ in range(n_iter):
        joined = data.join(np.log2(errors), on=["worker", "label"]).drop(
            columns=["worker", "label"])
        log_lik = np.log2(priors.clip(lower=eps)) + joined.groupby("task").sum()
        scaled = np.exp2(log_lik.sub(log_lik.max(axis=1), axis=0))
        probas = scaled.div(scaled.sum(axis=1), axis=0)
        priors, errors = probas.mean(), m_step(probas)
        expected = data.join(np.log(errors) + np.log(priors.clip(lower=eps)),
                             on=["worker", "label"])
        per_rating = (probas.reindex(expected["task"]).to_numpy()
                      * expected[probas.columns].to_numpy()).sum()
        clipped = probas.clip(lower=eps)
        new_loss = (per_rating - (np.log(clipped) * clipped).sum().sum()) / len(data)
        if new_loss - loss < tol:
            break
        loss = new_loss
    return pd.Series({w: sum(priors[c] * errors.loc[(w, c), c] if (w, c) in errors.index
                             else 0.0 for c in priors.index)
                      for w in data["worker"].unique()})


def _ours(data: pd.DataFrame, **options) -> pd.Series:
    items, _ = pd.factorize(data["task"])
    workers, names = pd.factorize(data["worker"])
    labels, _ = pd.factorize(data["label"], sort=True)
    return pd.Series(dawid_skene_accuracy(items, workers, labels, **options), index=names)


def test_dawid_skene_with_crowdkits_settings_matches_crowdkits_algorithm_on_real_ratings():
    data = _interestingness()
    reference = _crowdkit_dawid_skene(data)
    same = _ours(data, smoothing=0.0, stop="elbo", tolerance=1e-5)
    assert same.to_numpy() == pytest.approx(reference[same.index].to_numpy(), abs=1e-9)
    # The product's defaults (smoothing 0.01, run until the posteriors stop moving) differ by
    # up to 0.389; running crowd-kit's estimate on to convergence alone moves it by 0.379:
    # crowd-kit stops while EM is still moving along a flat likelihood (docs/analysis.md).
    default = _ours(data)
    converged = _ours(data, smoothing=0.0)
    assert (default - reference[default.index]).abs().max() == pytest.approx(0.389, abs=0.005)
    assert (converged - reference[converged.index]).abs().max() == pytest.approx(0.379, abs=0.005)


def _crowdkit_mace(tasks, workers, labels, k, spamming, strategy, n_iter=50):
    """crowd-kit's MACE (method "vb"), rating by rating in probability space as it computes."""
    tasks, workers, labels = (np.asarray(a) for a in (tasks, workers, labels))
    for _ in range(n_iter):
        gold = np.ones((tasks.max() + 1, k))
        for t, w, a in zip(tasks, workers, labels, strict=True):
            gold[t] *= [spamming[w, 0] * strategy[w, a] + spamming[w, 1] * (a == c)
                        for c in range(k)]
        gold /= k
        instance = gold.sum(axis=1)
        knowing = np.zeros((len(spamming), 2))
        strategy_counts = np.zeros_like(strategy)
        for t, w, a in zip(tasks, workers, labels, strict=True):
            spam = sum(gold[t, c] / (spamming[w, 0] * strategy[w, a] + spamming[w, 1] * (a == c))
                       for c in range(k)) * spamming[w, 0] * strategy[w, a] / instance[t]
            knew = gold[t, a] * spamming[w, 1] / (spamming[w, 0] * strategy[w, a]
                                                  + spamming[w, 1]) / instance[t]
            knowing[w] += [spam, knew]
            strategy_counts[w, a] += spam
        prior = np.array([0.5, 0.5])
        spamming = np.exp(digamma(knowing + prior)) / np.exp(digamma(
            (knowing + prior).sum(axis=1)))[:, None]
        strategy = np.exp(digamma(strategy_counts + 10.0)) / np.exp(digamma(
            (strategy_counts + 10.0).sum(axis=1)))[:, None]
    return spamming, strategy


def test_mace_from_crowdkits_start_matches_crowdkits_updates_on_real_ratings():
    data = _interestingness()
    tasks, _ = pd.factorize(data["task"])
    workers, names = pd.factorize(data["worker"])
    labels, values = pd.factorize(data["label"], sort=True)
    w, k = len(names), len(values)
    # crowd-kit's start: uniform on [1, 2.5] from random_state 0, rows normalised.
    spam0 = stats.uniform(1, 1.5).rvs(size=(w, 2), random_state=0)
    strategy0 = stats.uniform(1, 1.5).rvs(size=(w, k), random_state=0)
    start = (spam0 / spam0.sum(axis=1, keepdims=True),
             strategy0 / strategy0.sum(axis=1, keepdims=True))
    expected = _crowdkit_mace(tasks, workers, labels, k, *start, n_iter=10)
    spamming, strategy, competence, _ = mace(tasks, workers, labels, init=start, iterations=10,
                                             tolerance=-1)
    assert spamming == pytest.approx(expected[0], abs=1e-9)
    assert strategy == pytest.approx(expected[1], abs=1e-9)
    assert np.all((competence > 0) & (competence < 1))


def _frame(data: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"item": data["task"], "worker": data["worker"], "value": data["label"],
                         "question": "interestingness", "part": "", "level": "ordinal"})


def test_reliabilities_need_twenty_labels_and_carry_an_item_bootstrap_interval():
    data = _interestingness()
    table = reliability_table(_frame(data), n_boot=25, seed=0)
    ds = table[table["model"] == "dawid_skene"].set_index("worker")
    counts = data.groupby("worker").size()
    few = counts.index[counts < MIN_LABELS]
    assert len(few) and ds.loc[few, "reliability"].isna().all()
    assert (ds.loc[few, "note"] == "fewer than 20 labels").all()
    shown = counts.index[counts >= MIN_LABELS]
    point = worker_reliability(_frame(data)).set_index("worker")["reliability"]
    assert ds.loc[shown, "reliability"].to_numpy(dtype=float) == pytest.approx(
        point[shown].to_numpy())
    # The interval, recomputed: the same 25 item draws, each resample refitted from scratch.
    rng = np.random.default_rng(0)
    items = np.array(sorted(data["task"].unique()))
    rows_of = {item: np.flatnonzero(data["task"].to_numpy() == item) for item in items}
    draws = []
    for _ in range(25):
        drawn = items[rng.integers(0, len(items), len(items))]
        rows = [rows_of[item] for item in drawn]
        resample = data.iloc[np.concatenate(rows)].assign(
            task=np.repeat(np.arange(len(drawn)), [len(r) for r in rows]))
        draws.append(worker_reliability(_frame(resample)).set_index("worker")["reliability"])
    boot = pd.DataFrame(draws)
    for worker in shown:
        low, high = np.percentile(boot[worker].dropna(), [2.5, 97.5])
        assert ds.loc[worker, "ci_low"] == pytest.approx(low, abs=0.01)
        assert ds.loc[worker, "ci_high"] == pytest.approx(high, abs=0.01)
    mace_rows = table[table["model"] == "mace"].set_index("worker")
    assert mace_rows.loc[shown, "reliability"].notna().all()
    assert (mace_rows.loc[shown, "ci_low"] <= mace_rows.loc[shown, "reliability"]).all()


def test_parts_over_the_same_items_are_resampled_together():
    # The same ratings as two parts: resampled together, every draw's average is the one
    # part's figure, so the interval is the one part's (drawn apart, it would be narrower).
    data = _interestingness()
    one = reliability_table(_frame(data), n_boot=25, seed=3)
    two = reliability_table(pd.concat([_frame(data), _frame(data).assign(part="again")]),
                            n_boot=25, seed=3)
    shown = one["reliability"].notna()
    assert two.loc[shown, "ci_low"].to_numpy(dtype=float) == pytest.approx(
        one.loc[shown, "ci_low"].to_numpy(dtype=float))
    assert two.loc[shown, "ci_high"].to_numpy(dtype=float) == pytest.approx(
        one.loc[shown, "ci_high"].to_numpy(dtype=float))
    assert (two.loc[shown, "n_parts"] == 2).all()


def test_a_part_too_big_for_mace_says_so_and_keeps_dawid_skene(monkeypatch):
    import campaigns.analysis.worker_models as models

    monkeypatch.setattr(models, "MACE_MAX_RATINGS", 100)  # the 300 ratings are "too many"
    table = reliability_table(_frame(_interestingness()), n_boot=0)
    mace_rows = table[table["model"] == "mace"]
    shown = table[(table["model"] == "dawid_skene") & table["reliability"].notna()]
    assert len(shown) == 6 and mace_rows["reliability"].isna().all()
    enough = mace_rows["n_labels"] >= MIN_LABELS
    assert (mace_rows.loc[enough, "note"] == "not fitted: parts of more than 100 ratings").all()
