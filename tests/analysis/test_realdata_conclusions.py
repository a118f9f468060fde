"""What the statistics conclude on published data, checked against independent computations.

MLQE-PE DA (en-de and ru-en as two "systems", each rated by its own raters) and CompQA
(25 systems answering the same questions, scored by an expert): the numbers are recomputed
here from the original files with pandas, scipy, statsmodels and krippendorff.
"""
import json

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from campaigns.selectors.analysis import campaign_statistics
from campaigns.services.items import items_import
from campaigns.services.judgments import JudgmentRow, judgments_import
from tests.analysis.figures.checks import assert_figures_plot_the_statistics
from tests.factories import make_campaign
from tests.shared_data import SHARED, require

REALDATA = SHARED / "realdata"
DA_DIR = REALDATA / "translation_da"
RUBRIC_DIR = REALDATA / "comparative_rubric"
CRITERIA = [f"score_dict.{n}" for n in range(1, 16)]

pytestmark = pytest.mark.django_db

DA_SCHEMA = {
    "display": [{"field": "source", "label": "Source"}, {"field": "translation", "label": "MT"}],
    "questions": [{"id": "da", "kind": "slider", "text": "How good is the translation?",
                   "min": 0, "max": 100,
                   "anchors": [{"value": 0, "label": "Nonsense"},
                               {"value": 100, "label": "Perfect"}]}],
}


def _da_ratings() -> pd.DataFrame:
    """One row per (segment, rater position): the file keeps each row's raters in order only,
    so rater k of a language pair is position k of its lists (six raters en-de, three ru-en)."""
    frames = []
    for pair, name, key in (("en-de", "mlqe-pe_en-de_test20.ende.df.short_first300.tsv",
                             "index"),
                            ("ru-en", "mlqe-pe_ru-en_test20.ruen.df.short_first200.tsv",
                             "segid")):
        frame = pd.read_csv(DA_DIR / name, sep="\t", quoting=3, dtype=str,
                            keep_default_na=False)
        for _, row in frame.iterrows():
            for k, score in enumerate(json.loads(row["scores"]), start=1):
                frames.append({"item": f"{pair}-{row[key]}", "system": pair, "pair": pair,
                               "rater": f"{pair}-r{k}", "score": float(score),
                               "source": row["original"], "translation": row["translation"]})
    return pd.DataFrame(frames)


def test_da_raters_nested_in_language_pairs_name_no_winner_and_agreement_per_pair(owner):
    require(DA_DIR)
    ratings = _da_ratings()
    campaign = make_campaign(owner=owner, schema=DA_SCHEMA, slug="mlqe-da")
    items = ratings.drop_duplicates("item")
    items_import(campaign=campaign, filename="items.jsonl", content="\n".join(
        json.dumps({"id": i, "system": s, "language_pair": p, "source": src, "translation": t})
        for i, s, p, src, t in zip(items["item"], items["system"], items["pair"],
                                   items["source"], items["translation"], strict=True)
    ).encode())
    judgments_import(campaign=campaign, platform="link", rows=[
        JudgmentRow(n, i, r, repr({"da": s})) for n, (i, r, s) in enumerate(
            zip(ratings["item"], ratings["rater"], ratings["score"], strict=True), start=1)])

    result = campaign_statistics(campaign=campaign, n_boot=1000, subset_by=("language_pair",))

    codes = {w["code"] for w in result["design_warnings"] if w["question"] == "da"}
    assert "raters_nested_in_systems" in codes
    (comparison,) = result["comparisons"]
    assert result["pairwise"] == result["comparisons"]
    assert comparison["better"] is None and comparison["blocked_by"] == "raters_nested_in_systems"
    item_means = ratings.groupby(["system", "item"])["score"].mean()
    expected = stats.mannwhitneyu(item_means["en-de"], item_means["ru-en"])
    assert comparison["basis"] == "raw" and comparison["p"] == pytest.approx(expected.pvalue)
    assert all(r["rank"] is None and r["cluster"] is None for r in result["ranking"])

    def alpha_of(sub):
        matrix = sub.pivot(index="rater", columns="item", values="score").to_numpy()
        return krippendorff.alpha(matrix, level_of_measurement="interval")

    rows = {json.dumps(r["subset"], sort_keys=True): r for r in result["agreement"]}
    assert rows["null"]["alpha"] == pytest.approx(alpha_of(ratings))
    for pair in ("en-de", "ru-en"):
        expected_alpha = alpha_of(ratings[ratings["pair"] == pair])
        for field in ("system", "language_pair"):
            row = rows[json.dumps({field: pair})]
            assert row["alpha"] == pytest.approx(expected_alpha)
            assert row["ci_low"] < row["alpha"] < row["ci_high"]
    assert rows['{"system": "en-de"}']["alpha"] == pytest.approx(0.366171, abs=1e-6)
    assert rows['{"system": "ru-en"}']["alpha"] == pytest.approx(0.897093, abs=1e-6)

    # Intervals resample segments: close to a t-interval over segment means (six or three
    # ratings each), clearly wider than resampling single ratings would give.
    for row in result["system_scores"]:
        assert row["ci_method"] == "item_bootstrap"
        means = item_means[row["system"]]
        low, high = stats.t.interval(0.95, len(means) - 1, means.mean(), stats.sem(means))
        assert row["mean"] == pytest.approx(ratings[ratings.system == row["system"]]
                                            ["score"].mean())
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=0.35)
        single = ratings[ratings.system == row["system"]]["score"]
        naive = 2 * 1.96 * single.std() / np.sqrt(len(single))
        assert row["ci_high"] - row["ci_low"] > 1.1 * naive
    # The agreement figures plot the pooled alpha and each language pair's, computed above.
    plotted = {p["key"]: p["values"] for p in assert_figures_plot_the_statistics(result)}
    assert plotted["agreement"]["estimate"] == pytest.approx([alpha_of(ratings)])
    per_pair = dict(zip(plotted["agreement_subsets"]["labels"],
                        plotted["agreement_subsets"]["estimate"], strict=True))
    for pair in ("en-de", "ru-en"):
        assert per_pair[f"da (system={pair})"] == pytest.approx(alpha_of(
            ratings[ratings["pair"] == pair]))
    print("\nDA alpha pooled {:.3f}, en-de {:.3f}, ru-en {:.3f}; p {:.2g} (no winner)".format(
        rows["null"]["alpha"], rows['{"system": "en-de"}']["alpha"],
        rows['{"system": "ru-en"}']["alpha"], comparison["p"]))


RUBRIC_SCHEMA_Q = {
    "display": [{"field": "question", "label": "Question"},
                {"field": "answer", "label": "Answer", "format": "pre"}],
    "questions": [{"id": "rubric", "kind": "rubric", "text": "Score each criterion",
                   "criteria": [{"id": f"C{n}", "text": f"criterion {n}", "min": 0,
                                 "max": 2 if n in (9, 10, 11, 12) else 1}
                                for n in range(1, 16)]}],
}


def _expert() -> pd.DataFrame:
    frame = pd.read_csv(RUBRIC_DIR / "small_dataset_hum_evaluation.tsv", sep="\t",
                        keep_default_na=False)
    frame["question"] = frame[["object1", "object2", "aspect"]].agg("|".join, axis=1)
    frame["system"] = frame["filename"].str.removeprefix("scored_").str.removesuffix(
        "_comparison")
    frame["item"] = frame["question"] + "|" + frame["system"]
    frame["total"] = frame[CRITERIA].astype(float).sum(axis=1)
    return frame


def test_compqa_systems_are_compared_paired_and_none_survives_correction(owner):
    require(RUBRIC_DIR)
    expert = _expert()
    campaign = make_campaign(owner=owner, schema=RUBRIC_SCHEMA_Q, slug="compqa-conclusions")
    items_import(campaign=campaign, filename="items.jsonl", content="\n".join(
        json.dumps({"id": i, "system": s, "question": q, "answer": a})
        for i, s, q, a in zip(expert["item"], expert["system"], expert["question"],
                              expert["comparison"], strict=True)).encode())
    judgments_import(campaign=campaign, platform="account", rows=[
        JudgmentRow(n, i, "expert", repr({f"C{c}": int(float(v))
                                          for c, v in enumerate(values, start=1)}))
        for n, (i, values) in enumerate(zip(expert["item"], expert[CRITERIA].to_numpy(),
                                            strict=True), start=1)])

    holm = campaign_statistics(campaign=campaign, n_boot=200)
    bh = campaign_statistics(campaign=campaign, n_boot=0, correction="bh")
    assert holm["options"]["pair_by"] == "question"
    rows = {(r["system_a"], r["system_b"]): r for r in holm["comparisons"]}
    assert len(rows) == 300

    # Independent: one expert, so z is an increasing linear function of the expert's totals
    # and rank tests on the totals give the same p; each pair of systems answered the same
    # five questions -> Wilcoxon signed-rank on the pairs.
    by = expert.pivot(index="question", columns="system", values="total")
    pairs = sorted(rows)
    p = np.array([stats.wilcoxon(by[a], by[b]).pvalue if (by[a] != by[b]).any() else 1.0
                  for a, b in pairs])
    ours = np.array([rows[k]["p"] for k in pairs])
    assert ours == pytest.approx(p)
    assert [rows[k]["p_adjusted"] for k in pairs] == pytest.approx(
        multipletests(p, method="holm")[1])
    assert [r["p_adjusted"] for r in sorted(bh["comparisons"], key=lambda r: (
        r["system_a"], r["system_b"]))] == pytest.approx(multipletests(p, method="fdr_bh")[1])
    assert all(r["paired"] and r["test"] == "wilcoxon_signed_rank" for r in rows.values())
    assert not any(r["better"] for r in holm["comparisons"] + bh["comparisons"])
    codes = {w["code"] for w in holm["design_warnings"]}
    assert {"few_items_per_system", "few_raters_per_item"} <= codes
    # Five items per system: the interval is the t-interval over item totals.
    for row in (r for r in holm["system_scores"] if r["part"] == "total"):
        totals = expert[expert.system == row["system"]]["total"]
        low, high = stats.t.interval(0.95, 4, totals.mean(), stats.sem(totals))
        assert row["ci_method"] == "item_cluster_t"
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high))
    # The total's figure: 25 systems, their t-intervals, one significance group (none differ).
    plotted = {p["key"]: p["values"] for p in assert_figures_plot_the_statistics(holm)}
    total = plotted["scores:rubric.total"]
    assert len(total["labels"]) == 25 and len(set(total["groups"]) - {None}) <= 1
    means = expert.groupby("system")["total"].mean()
    assert total["estimate"] == pytest.approx([means[s] for s in total["labels"]])
    print(f"\nCompQA: {(p < 0.05).sum()} of 300 pairs below 0.05 unadjusted, 0 after Holm/BH")
