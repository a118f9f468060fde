"""Krippendorff's alpha wrapper: published values, the reference package, the bootstrap."""
import krippendorff
import numpy as np
import pandas as pd
import pytest

from campaigns.analysis.agreement import (
    LEVELS,
    agreement_table,
    alpha_from_counts,
    bootstrap_alphas,
    krippendorff_alpha,
    resample_weights,
    value_counts,
)

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 coders, 12 units.
RELIABILITY = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
])
PUBLISHED = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}


def _triples(matrix):
    raters, units = np.indices(matrix.shape)
    return units.ravel(), raters.ravel(), matrix.ravel()


@pytest.mark.parametrize("level", LEVELS)
def test_it_reproduces_krippendorffs_published_example(level):
    result = krippendorff_alpha(*_triples(RELIABILITY), level=level, n_boot=0)
    assert round(result.alpha, 3) == PUBLISHED[level]
    assert result.alpha == pytest.approx(
        krippendorff.alpha(RELIABILITY, level_of_measurement=level))
    # Unit 12 has a single rating: it is not pairable and does not count.
    assert (result.n_items, result.n_raters, result.n_ratings) == (11, 4, 40)


def _repetitive_counts():
    """600 units rated by 3 of 5 values: a few dozen distinct rows (the multinomial draw)."""
    rng = np.random.default_rng(3)
    truth = rng.integers(1, 6, 600)
    matrix = np.clip(truth + rng.integers(-1, 2, (3, 600)), 1, 5).astype(float)
    units, _, values = _triples(matrix)
    return value_counts(units, values, numeric=True)


def _published_counts():
    """Krippendorff's 12 units: nearly all distinct (units drawn one by one)."""
    units, _, values = _triples(RELIABILITY)
    keep = ~np.isnan(values)
    return value_counts(units[keep], values[keep], numeric=True)


@pytest.mark.parametrize("data", [_published_counts, _repetitive_counts])
@pytest.mark.parametrize("level", LEVELS)
def test_each_bootstrap_resample_equals_the_package_on_the_same_resample(level, data):
    counts, domain = data()
    ours = bootstrap_alphas(counts, domain, level, n_boot=5, seed=7)
    groups, sizes = np.unique(counts, axis=0, return_counts=True)
    weights = np.vstack([w for _, w in resample_weights(sizes, n_boot=5, seed=7)])
    assert (weights.sum(axis=1) == len(counts)).all()  # each resample has every unit's size
    for alpha, drawn in zip(ours, weights, strict=True):
        resample = np.repeat(groups, drawn.astype(int), axis=0)
        assert alpha == pytest.approx(krippendorff.alpha(
            value_counts=resample, value_domain=domain, level_of_measurement=level))


def test_the_ci_does_not_depend_on_the_order_units_were_read_in():
    counts, domain = _repetitive_counts()
    shuffled = counts[np.random.default_rng(1).permutation(len(counts))]
    assert np.array_equal(bootstrap_alphas(counts, domain, "ordinal", n_boot=50),
                          bootstrap_alphas(shuffled, domain, "ordinal", n_boot=50))


def test_both_ways_of_drawing_resamples_give_the_same_spread():
    """Drawing group counts from the multinomial is the same distribution as drawing units."""
    counts, _ = _repetitive_counts()
    _, sizes = np.unique(counts, axis=0, return_counts=True)
    direct = np.vstack([w for _, w in resample_weights(sizes, n_boot=4000, seed=1)])
    unit_by_unit = np.vstack([np.bincount(np.repeat(np.arange(len(sizes)), sizes)[
        np.random.default_rng(s).integers(0, sizes.sum(), sizes.sum())], minlength=len(sizes))
        for s in range(4000)])
    assert direct.mean(axis=0) == pytest.approx(unit_by_unit.mean(axis=0), rel=0.05, abs=0.3)
    assert direct.std(axis=0) == pytest.approx(unit_by_unit.std(axis=0), rel=0.1, abs=0.3)


def test_the_confidence_interval_brackets_alpha_and_is_reproducible():
    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, 300)
    matrix = np.clip(truth + rng.integers(-1, 2, (4, 300)), 1, 5).astype(float)
    first = krippendorff_alpha(*_triples(matrix), level="ordinal")
    again = krippendorff_alpha(*_triples(matrix), level="ordinal")
    assert first.ci_low < first.alpha < first.ci_high
    assert first == again
    assert first.alpha == pytest.approx(krippendorff.alpha(matrix, level_of_measurement="ordinal"))


def test_nominal_labels_may_be_text():
    units = [1, 1, 2, 2, 3, 3, 4, 4]
    labels = ["yes", "yes", "no", "no", "yes", "no", "na", "na"]
    coded = pd.Series(labels).map({"yes": 0, "no": 1, "na": 2}).to_numpy(dtype=float)
    matrix = np.vstack([coded[::2], coded[1::2]])
    ours = krippendorff_alpha(units, [1, 2] * 4, labels, level="nominal", n_boot=0)
    assert ours.alpha == pytest.approx(krippendorff.alpha(matrix, level_of_measurement="nominal"))


def test_alpha_is_undefined_without_variation_or_pairs():
    assert krippendorff_alpha([1, 1, 2, 2], [1, 2, 1, 2], [3, 3, 3, 3], level="ordinal").alpha \
        is None
    assert krippendorff_alpha([1, 2], [1, 1], [3, 4], level="ordinal").alpha is None
    assert alpha_from_counts(np.zeros((0, 2), dtype=int), np.array([1.0, 2.0]), "nominal") is None


def test_the_table_has_a_row_per_question_part_at_its_level():
    frame = pd.DataFrame({
        "unit": [1, 1, 2, 2, 3, 3] * 2,
        "worker": ["a", "b"] * 6,
        "question": ["q"] * 6 + ["r"] * 6,
        "part": [""] * 12,
        "value": [1, 1, 2, 2, 3, 2, "x", "x", "y", "x", "y", "y"],
    })
    table = agreement_table(frame, {("q", ""): "ordinal", ("r", ""): "nominal"}, n_boot=50)
    assert list(table["question"]) == ["q", "r"]
    assert list(table["level"]) == ["ordinal", "nominal"]
    assert table["n_items"].tolist() == [3, 3]
    assert table["alpha"].iloc[1] == pytest.approx(krippendorff.alpha(
        np.array([[0, 1, 1], [0, 0, 1]]), level_of_measurement="nominal"))


@pytest.mark.parametrize("level", LEVELS)
def test_past_the_package_size_alpha_sums_distinct_units_and_equals_the_package(
        level, monkeypatch):
    """A million units would make the package hold gigabytes of per-unit matrices: past
    PACKAGE_CELLS the same sums run over distinct unit rows, to the package's value."""
    from campaigns.analysis import agreement

    counts, domain = _repetitive_counts()
    counts = np.vstack([counts, np.eye(len(domain), dtype=int)[:2]])  # units of one rating
    expected = alpha_from_counts(counts, domain, level)
    assert expected == pytest.approx(krippendorff.alpha(
        value_counts=counts, value_domain=domain if level != "nominal" else
        np.arange(len(domain)), level_of_measurement=level), abs=1e-12)
    monkeypatch.setattr(agreement, "PACKAGE_CELLS", 0)
    assert alpha_from_counts(counts, domain, level) == pytest.approx(expected, abs=1e-12)
