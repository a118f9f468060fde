"""Disagreement reporting against an independent computation on real ratings: three Toloka
raters per story (1-5 coherence) and six DA raters per sentence (0-100, MLQE-PE en-de)."""
import ast
import math
from collections import Counter

import pandas as pd
import pytest
from scipy import stats

from campaigns.analysis.disagreement import disagreement, soft_labels
from tests.shared_data import SHARED, require

STORIES = SHARED / "realdata" / "story_rating"
DA = SHARED / "realdata" / "translation_da"


def coherence_ratings() -> pd.DataFrame:
    require(STORIES)
    raw = pd.read_csv(STORIES / "scratchplot_coherence_full-annotation-result-new.tsv",
                      sep="\t")
    return pd.DataFrame({"unit": raw["INPUT:story"], "question": "coherence", "part": "",
                         "value": raw["OUTPUT:category"].astype(int), "level": "ordinal"})


def da_ratings() -> pd.DataFrame:
    require(DA)
    raw = pd.read_csv(DA / "mlqe-pe_en-de_test20.ende.df.short_first300.tsv", sep="\t")
    rows = [(i, float(score)) for i, scores in zip(raw["index"], raw["scores"], strict=True)
            for score in ast.literal_eval(scores)]
    return pd.DataFrame(rows, columns=["unit", "value"]).assign(
        question="da", part="", level="interval")


def independent_entropies(frame: pd.DataFrame) -> dict:
    """Per story: scipy's Shannon entropy (base 2) of its label counts, from plain Counters."""
    return {unit: stats.entropy(list(Counter(values).values()), base=2)
            for unit, values in frame.groupby("unit")["value"]}


def test_soft_labels_and_entropy_match_scipy_on_real_story_ratings():
    ratings = coherence_ratings()
    soft = soft_labels(ratings)
    per_unit = soft.drop_duplicates("unit").set_index("unit")
    expected = independent_entropies(ratings)
    assert len(per_unit) == len(expected) == 100
    for unit, entropy in expected.items():
        assert per_unit.at[unit, "entropy"] == pytest.approx(entropy, abs=1e-12)
    k = ratings["value"].nunique()
    assert per_unit["normalised_entropy"].to_numpy() == pytest.approx(
        per_unit["entropy"].to_numpy() / math.log2(k))
    shares = soft.groupby("unit")["share"].sum()
    assert shares.to_numpy() == pytest.approx(1.0)
    story = ratings["unit"].iloc[0]
    counts = Counter(ratings.loc[ratings["unit"].eq(story), "value"].astype(str))
    mine = soft[soft["unit"].eq(story)]
    assert dict(zip(mine["label"], mine["count"], strict=True)) == counts


def test_summary_shares_of_split_votes_and_the_most_disputed_stories():
    ratings = coherence_ratings()
    out = disagreement(ratings, top_n=5)
    row = out["summary"].iloc[0]
    votes = ratings.groupby("unit")["value"].agg(list)
    top_share = votes.map(lambda v: Counter(v).most_common(1)[0][1] / len(v))
    assert row["units"] == 100 and row["ratings_per_unit"] == 3
    assert row["share_split"] == pytest.approx((top_share < 1).mean())
    assert row["share_no_majority"] == pytest.approx((top_share <= 0.5).mean())
    assert 0 < row["share_no_majority"] < row["share_split"] < 1  # real raters disagree
    entropies = pd.Series(independent_entropies(ratings))
    assert row["mean_entropy"] == pytest.approx(entropies.mean())
    disputed = out["disputed"]
    assert [d["rank"] for d in disputed] == [1, 2, 3, 4, 5]
    assert [d["entropy"] for d in disputed] == pytest.approx(
        sorted(entropies, reverse=True)[:5])
    assert all(sum(d["label_counts"].values()) == 3 for d in disputed)
    # 1-5 is numeric too: the spread is given beside the labels
    assert row["mean_sd"] == pytest.approx(ratings.groupby("unit")["value"].std().mean())


def test_numeric_da_scores_get_a_spread_and_no_soft_labels():
    ratings = da_ratings()
    out = disagreement(ratings, top_n=3)
    row = out["summary"].iloc[0]
    sd = ratings.groupby("unit")["value"].std(ddof=1)
    assert row["units"] == 300 and pd.isna(row["mean_entropy"])
    assert row["mean_sd"] == pytest.approx(sd.mean()) and row["median_sd"] == pytest.approx(
        sd.median())
    spread = ratings.groupby("unit")["value"].agg(lambda v: v.max() - v.min())
    scale = ratings["value"].max() - ratings["value"].min()
    assert row["mean_normalised_range"] == pytest.approx((spread / scale).mean())
    assert [d["unit"] for d in out["disputed"]] == sd.sort_values(
        ascending=False, kind="stable").index[:3].tolist()
    assert out["soft_labels"].empty


def test_a_pairwise_winner_split_and_a_single_rating_are_read_as_stated():
    frame = pd.DataFrame({"unit": [1, 1, 1, 1, 2, 2, 3], "question": "pref", "part": "winner",
                          "value": ["x", "y", "x", "y", "x", "x", "y"], "level": "nominal"})
    out = disagreement(frame)
    row = out["summary"].iloc[0]
    assert row["units"] == 2  # unit 3 has one rating: it cannot disagree
    assert row["share_split"] == 0.5 and row["share_no_majority"] == 0.5
    assert out["disputed"][0] == {"question": "pref", "part": "winner", "rank": 1, "unit": 1,
                                  "n": 4, "label_counts": {"x": 2, "y": 2}, "entropy": 1.0,
                                  "sd": None}
    assert out["disputed"][1]["entropy"] == 0.0
