"""Judge alignment on published data: CompQA expert vs GPT-4, and scratchplot's three raters.

Every figure is recomputed here from the original files with pandas, scipy, statsmodels and
krippendorff, never copied from the product.
"""
import json

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.inter_rater import cohens_kappa

from campaigns.analysis.alignment import align, cohen_kappa, human_ceiling
from campaigns.analysis.system_level import split_half_ceiling
from campaigns.selectors.analysis import campaign_statistics
from campaigns.services.items import items_import
from campaigns.services.judgments import JudgmentRow, judgments_import
from tests.analysis.figures.checks import assert_figures_plot_the_statistics
from tests.analysis.test_realdata import _import_rubric, _story_ratings
from tests.analysis.test_realdata_conclusions import DA_DIR, _da_ratings
from tests.factories import make_campaign
from tests.shared_data import SHARED, require

RUBRIC_DIR = SHARED / "realdata" / "comparative_rubric"
STORY_DIR = SHARED / "realdata" / "story_rating"
CRITERIA = [f"score_dict.{n}" for n in range(1, 16)]

pytestmark = pytest.mark.django_db


def _kappa(h, g, weighted: bool | str) -> float:
    labels = np.unique(np.concatenate([h, g]))
    table = pd.crosstab(pd.Categorical(h, labels), pd.Categorical(g, labels),
                        dropna=False).to_numpy()
    wt = weighted if isinstance(weighted, str) else "linear" if weighted else None
    return cohens_kappa(table, wt=wt).kappa


def test_kappa_matches_statsmodels_on_hand_made_ratings():
    rng = np.random.default_rng(0)
    h = rng.integers(0, 4, 60)
    g = np.where(rng.random(60) < 0.6, h, rng.integers(0, 4, 60))
    categories = np.unique(np.concatenate([h, g]))
    hc, gc = np.searchsorted(categories, h), np.searchsorted(categories, g)
    assert cohen_kappa(hc, gc, categories)[0] == pytest.approx(_kappa(h, g, False))
    assert cohen_kappa(hc, gc, categories, weighted=True)[0] == pytest.approx(_kappa(h, g, True))
    row = align(pd.DataFrame({"item": range(60), "system": "s", "value_human": h,
                              "value_judge": g}), "ordinal", n_boot=300)
    assert row["kendall"] == pytest.approx(stats.kendalltau(h, g).statistic)
    for name in ("exact", "kappa", "kappa_weighted", "alpha", "pearson", "spearman", "kendall"):
        assert row[f"{name}_ci_low"] <= row[name] <= row[f"{name}_ci_high"], name


@pytest.mark.parametrize("weights", [False, "linear", "quadratic"])
def test_kappa_of_a_stack_of_slider_resamples_matches_statsmodels_row_by_row(weights):
    """Two DA raters' 0-100 slider scores of the same 300 segments (MLQE-PE en-de), and
    resamples of those segments: 22 distinct scores, one kappa per row."""
    require(DA_DIR)
    ratings = _da_ratings()
    wide = ratings[ratings["pair"] == "en-de"].pivot(index="item", columns="rater",
                                                     values="score")
    h, g = wide["en-de-r1"].to_numpy(), wide["en-de-r2"].to_numpy()
    categories = np.unique(np.concatenate([h, g]))
    assert len(categories) > 20 and not np.isnan(categories).any()
    draws = np.vstack([np.arange(len(h)),
                       np.random.default_rng(0).integers(0, len(h), (5, len(h)))])
    hc, gc = np.searchsorted(categories, h)[draws], np.searchsorted(categories, g)[draws]
    ours = cohen_kappa(hc, gc, categories, weighted=weights == "linear",
                       quadratic=weights == "quadratic")
    for row, kappa in zip(draws, ours, strict=True):
        labels = categories  # statsmodels' weights count categories, so every one is a row
        table = pd.crosstab(pd.Categorical(h[row], labels), pd.Categorical(g[row], labels),
                            dropna=False).to_numpy()
        expected = cohens_kappa(table, wt=weights or None).kappa
        assert kappa == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_gpt4_alignment_leaves_failed_outputs_out_and_matches_an_independent_computation(owner):
    require(RUBRIC_DIR)
    campaign, human, gpt, rows = _import_rubric(owner)
    half = 58  # the 0.5 output, refused by the importer (test_realdata.py)
    judgments_import(campaign=campaign, rows=[r for r in rows if r.row != half])

    result = campaign_statistics(campaign=campaign, n_boot=300)
    joined = human.merge(gpt.drop(index=half - 1), on="key", suffixes=("_h", "_g"))
    g_scores = joined[[f"{c}_g" for c in CRITERIA]].to_numpy()
    all_zero = joined[(g_scores == 0).all(axis=1)]
    assert len(all_zero) == 5
    failed = result["judge_failed_outputs"]
    assert sorted(f["item"] for f in failed) == sorted(all_zero["key"])
    assert {(f["judge"], f["reason"]) for f in failed} == {("gpt-4", "all_minimum")}

    kept = joined[~joined["key"].isin(all_zero["key"])]
    ours = {r["part"]: r for r in result["judges"] if r["judge"] == "gpt-4"}
    for n in range(1, 16):
        h, g = kept[f"score_dict.{n}_h"].to_numpy(), kept[f"score_dict.{n}_g"].to_numpy()
        row = ours[f"C{n}"]
        assert row["n"] == len(kept) == 119
        assert row["exact"] == pytest.approx((h == g).mean())
        assert row["kappa"] == pytest.approx(_kappa(h, g, False), nan_ok=True)
        assert row["kappa_weighted"] == pytest.approx(_kappa(h, g, True), nan_ok=True)
        top = max(h.max(), g.max())
        assert row["top_share_human"] == pytest.approx((h == top).mean())
        assert row["top_share_judge"] == pytest.approx((g == top).mean())
        expected_alpha = krippendorff.alpha(np.vstack([h, g]), level_of_measurement="ordinal")
        if np.isfinite(expected_alpha):
            assert row["alpha"] == pytest.approx(expected_alpha)

    def totals(frame):
        return (frame[[f"{c}_h" for c in CRITERIA]].sum(axis=1),
                frame[[f"{c}_g" for c in CRITERIA]].sum(axis=1))

    h_tot, g_tot = totals(kept)
    total = ours["total"]
    assert total["pearson"] == pytest.approx(stats.pearsonr(h_tot, g_tot).statistic)
    # The 0-19 total: quadratic-weighted kappa, no unweighted kappa (was 0.035 vs 0.097).
    assert total["kappa"] is None
    assert total["kappa_quadratic"] == pytest.approx(_kappa(h_tot.to_numpy(), g_tot.to_numpy(),
                                                            "quadratic"))
    for n in (1, 9):  # an ordinal criterion keeps both
        h, g = kept[f"score_dict.{n}_h"].to_numpy(), kept[f"score_dict.{n}_g"].to_numpy()
        assert ours[f"C{n}"]["kappa_quadratic"] == pytest.approx(_kappa(h, g, "quadratic"),
                                                                 nan_ok=True)
    assert total["spearman"] == pytest.approx(stats.spearmanr(h_tot, g_tot).statistic)
    assert total["kendall"] == pytest.approx(stats.kendalltau(h_tot, g_tot).statistic)
    system = kept.assign(h=h_tot, g=g_tot, system=kept["filename_h"]).groupby("system")[
        ["h", "g"]].mean()
    assert total["n_systems"] == len(system) == 24  # human_summaries' 5 answers all failed
    assert total["system_pearson"] == pytest.approx(
        stats.pearsonr(system["h"], system["g"]).statistic)
    assert total["system_spearman"] == pytest.approx(
        stats.spearmanr(system["h"], system["g"]).statistic)
    assert total["system_kendall"] == pytest.approx(
        stats.kendalltau(system["h"], system["g"]).statistic)
    # The judge-vs-human scatter of totals plots the 24 system means computed here.
    plotted = {p["key"]: p["values"] for p in assert_figures_plot_the_statistics(result)}
    scatter = plotted["judge_systems:gpt-4:rubric.total"]
    named = system.rename(index=lambda f: f.removeprefix("scored_").removesuffix("_comparison"))
    assert sorted(scatter["labels"]) == sorted(named.index)
    assert scatter["x"] == pytest.approx([named["h"][s] for s in scatter["labels"]])
    assert scatter["y"] == pytest.approx([named["g"][s] for s in scatter["labels"]])

    # With the failed runs the item-level Pearson of totals collapses: why they are excluded.
    with_failed = campaign_statistics(campaign=campaign, n_boot=0,
                                      include_failed_judge_outputs=True)
    total_all = {r["part"]: r for r in with_failed["judges"]}["total"]
    assert total_all["n"] == 124
    assert total_all["pearson"] == pytest.approx(stats.pearsonr(*totals(joined)).statistic)
    assert total_all["pearson"] < 0.1 < 0.4 < total["pearson"]
    print(f"\nGPT-4 totals: Pearson {total['pearson']:.2f} without the 5 failed runs "
          f"({total_all['pearson']:.2f} with them); system-level {total['system_pearson']:.2f}"
          f" ({total_all['system_pearson']:.2f})")
    assert result["human_ceiling"] == []  # one expert: no other human to hold a human to
    # ...so the ceiling the design allows is the split-half one on system means (the expert's
    # totals of every answer they scored), and the page says which it is.
    summary = {r["part"]: r for r in result["human_ceiling_summary"]}
    assert summary["total"]["method"] == "system_split_half"
    assert summary["total"]["reason"].startswith("one human rated every item")
    expert = human.assign(total=human[[f"{c}" for c in CRITERIA]].sum(axis=1))
    split = split_half_ceiling(expert["filename"].to_numpy(), expert["total"].to_numpy())
    assert summary["total"]["ceiling_pearson"] == pytest.approx(split["ceiling_pearson"])
    assert total["system_pearson"] < summary["total"]["ceiling_pearson"]
    assert total["system_pearson_boot_ci_low"] < total["system_pearson"] \
        < total["system_pearson_boot_ci_high"]


STORY_SCHEMA = {
    "display": [{"field": "story", "label": "Story"}],
    "questions": [{"id": a, "kind": "likert", "text": f"{a}?", "required": False,
                   "points": [{"value": v, "label": str(v)} for v in range(1, 6)]}
                  for a in ("coherence", "interestingness", "naturalness")],
}


def test_a_third_rater_as_judge_is_measured_against_the_two_humans_mean(owner):
    require(STORY_DIR)
    stories, ratings = _story_ratings()
    campaign = make_campaign(owner=owner, schema=STORY_SCHEMA, slug="scratchplot-judge")
    items_import(campaign=campaign, filename="items.jsonl", content="\n".join(
        json.dumps({"id": i, "system": s, "story": t}) for i, s, t in
        zip(stories["id"], stories["INPUT:system"], stories["INPUT:story"], strict=True)).encode())
    # Per story, the rater listed third for coherence is the "judge"; the other two stay human.
    coherence = ratings[ratings["aspect"] == "coherence"]
    third = coherence.groupby("id")["worker"].nth(2)
    judge_of = dict(zip(coherence.loc[third.index, "id"], third, strict=True))
    ratings["is_judge"] = [judge_of[i] == w for i, w in zip(ratings["id"], ratings["worker"],
                                                           strict=True)]
    for is_judge, platform in ((False, "link"), (True, "llm")):
        part = ratings[(ratings["aspect"] == "coherence") & (ratings["is_judge"] == is_judge)]
        judgments_import(campaign=campaign, platform=platform, rows=[
            JudgmentRow(n, i, "third" if is_judge else w, repr({"coherence": int(v)}))
            for n, (i, w, v) in enumerate(zip(part["id"], part["worker"], part["rating"],
                                              strict=True), start=1)])

    result = campaign_statistics(campaign=campaign, n_boot=200)
    row = next(r for r in result["judges"] if r["question"] == "coherence")
    humans = coherence[[judge_of[i] != w for i, w in zip(coherence["id"], coherence["worker"],
                                                         strict=True)]]
    judge = coherence[[judge_of[i] == w for i, w in zip(coherence["id"], coherence["worker"],
                                                        strict=True)]].set_index("id")["rating"]
    consensus = humans.groupby("id")["rating"].median()  # two raters: their mean
    gap = (judge - consensus.reindex(judge.index)).mean()
    lower = humans.groupby("id")["rating"].min()  # the old "lower median" of two
    assert row["mean_difference"] == pytest.approx(gap)
    assert abs(row["mean_difference"]) < abs((judge - lower.reindex(judge.index)).mean())
    assert row["spearman"] == pytest.approx(stats.spearmanr(
        judge.sort_index(), consensus.sort_index()).statistic)
    # Its confusion matrix: the judge's value against the humans' consensus, story by story.
    plotted = {p["key"]: p["values"] for p in assert_figures_plot_the_statistics(result)}
    matrix = plotted["confusion:third:coherence"]
    both = pd.DataFrame({"human": consensus.reindex(judge.index), "judge": judge}).dropna()
    assert sum(map(sum, matrix["matrix"])) == len(both)
    diagonal = sum(row[i] for i, row in enumerate(matrix["matrix"]))
    assert diagonal == (both["human"] == both["judge"]).sum()
    print(f"\nthird rater as judge: gap {gap:+.3f} against the mean of two "
          f"(lower median: {(judge - lower.reindex(judge.index)).mean():+.3f})")

    # The ceiling: each human against the median of the other humans on shared items
    # (names are pseudonyms in the product: compare the figures as multisets).
    ceiling = [r for r in result["human_ceiling"] if r["question"] == "coherence"]
    expected = []
    for worker, own in humans.groupby("worker"):
        others = humans[humans["worker"] != worker].groupby("id")["rating"].median()
        shared = own.set_index("id")["rating"].sort_index()
        shared = shared[shared.index.isin(others.index)]
        if len(shared):
            expected.append((len(shared), float((shared == others[shared.index]).mean())))
    ours_ceiling = sorted((r["n"], round(r["exact"], 9)) for r in ceiling)
    assert ours_ceiling == sorted((n, round(e, 9)) for n, e in expected)


def test_values_read_as_objects_still_give_system_level_correlations():
    # The frame keeps mixed answers as Python objects; the figures must not depend on that.
    h = [1, 2, 3, 4, 5, 2, 3, 4, 5, 1, 3, 4]
    j = [2, 2, 3, 5, 5, 1, 3, 3, 4, 1, 4, 4]
    pairs = pd.DataFrame({"item": range(12), "system": [f"S{n % 4}" for n in range(12)],
                          "value_human": pd.Series(h, dtype=object),
                          "value_judge": pd.Series(j, dtype=object)})
    row = align(pairs, "ordinal", n_boot=0)
    means = pd.DataFrame({"s": pairs["system"], "h": h, "j": j}).groupby("s").mean()
    assert row["system_pearson"] == pytest.approx(stats.pearsonr(means["h"], means["j"])[0])
    assert row["pearson"] == pytest.approx(stats.pearsonr(h, j)[0])


def test_a_crowds_ceiling_is_one_pooled_row_against_the_others_median():
    rng = np.random.default_rng(2)
    rows = [(i, f"S{i % 3}", w, float(rng.integers(1, 6)))
            for i in range(30) for w in rng.choice(8, 3, replace=False)]
    humans = pd.DataFrame(rows, columns=["item", "system", "worker", "value"]).assign(
        question="q", part="")
    pooled = human_ceiling(humans, {("q", ""): "ordinal"}, n_boot=0, per_worker=False)
    per_worker = human_ceiling(humans, {("q", ""): "ordinal"}, n_boot=0)
    expected = []
    for _, r in humans.iterrows():
        others = humans[(humans["item"] == r["item"]) & (humans["worker"] != r["worker"])]
        expected.append(r["value"] == others["value"].median())
    (row,) = pooled.to_dict("records")
    assert row["judge"] == "all humans" and row["n"] == len(humans)
    assert row["exact"] == pytest.approx(np.mean(expected))
    assert per_worker["n"].sum() == len(humans) and len(per_worker) == humans["worker"].nunique()


def test_system_means_and_pearsons_fisher_z_interval_across_systems():
    """What the judge-vs-human scatter plots: each system's mean by the humans and by the
    judge, and Pearson's r across systems with its 95% interval from Fisher's z by hand."""
    import numpy as np
    import pandas as pd

    from campaigns.analysis.alignment import align

    rng = np.random.default_rng(5)
    systems = np.repeat(["a", "b", "c", "d", "e"], 8)
    human = rng.integers(1, 6, systems.size).astype(float)
    judge = np.clip(human + rng.integers(-1, 2, systems.size), 1, 5)
    pairs = pd.DataFrame({"item": np.arange(systems.size), "system": systems,
                          "value_human": human, "value_judge": judge})
    row = align(pairs, "interval", n_boot=0)
    means = pairs.groupby("system")[["value_human", "value_judge"]].mean()
    assert row["system_means"] == [{"system": s, "human": h, "judge": j}
                                   for s, h, j in means.itertuples()]
    r = np.corrcoef(means["value_human"], means["value_judge"])[0, 1]
    half = 1.959963984540054 / np.sqrt(len(means) - 3)
    assert row["system_pearson"] == pytest.approx(r)
    assert row["system_pearson_ci_low"] == pytest.approx(np.tanh(np.arctanh(r) - half))
    assert row["system_pearson_ci_high"] == pytest.approx(np.tanh(np.arctanh(r) + half))


def test_the_judge_scatter_plots_the_system_means_it_is_given():
    from campaigns.analysis.figures import figure_plans

    row = {"judge": "gpt", "question": "q", "part": "", "system_pearson": 0.9,
           "system_pearson_ci_low": 0.1, "system_pearson_ci_high": 0.99,
           "system_means": [{"system": "a", "human": 1.0, "judge": 2.0},
                            {"system": "b", "human": 3.0, "judge": 2.5}]}
    [plan] = figure_plans({"judges": [row]})
    assert plan["key"] == "judge_systems:gpt:q"
    assert plan["values"]["x"] == [1.0, 3.0] and plan["values"]["y"] == [2.0, 2.5]
    assert plan["values"]["note"] == "r = 0.90 [0.10, 0.99]"
