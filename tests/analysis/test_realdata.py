"""Proof on published data: expert vs GPT-4 rubric scores, and three raters' 1-5 story ratings.

Each figure our pipeline produces (import -> ORM -> frame -> statistics) is checked against the
same figure computed here straight from the TSV files with pandas, scipy and krippendorff.
"""
import json

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from campaigns.importing import ImportRejected
from campaigns.selectors.analysis import campaign_statistics, item_side_by_side
from campaigns.services.items import items_import
from campaigns.services.judgments import JudgmentRow, judgments_import
from tests.analysis.figures.checks import assert_figures_plot_the_statistics
from tests.factories import LIKERT_5, RUBRIC_SCHEMA, make_campaign
from tests.shared_data import SHARED, require

REALDATA = SHARED / "realdata"
RUBRIC_DIR = REALDATA / "comparative_rubric"
STORY_DIR = REALDATA / "story_rating"
CRITERIA = [f"score_dict.{n}" for n in range(1, 16)]
ASPECTS = ["coherence", "interestingness", "naturalness"]

pytestmark = pytest.mark.django_db


def _rubric_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Human and GPT-4 rows joined as SOURCE.md says: (object1, object2, aspect, filename)."""
    def read(name):
        frame = pd.read_csv(RUBRIC_DIR / name, sep="\t", keep_default_na=False)
        frame["filename"] = frame["filename"].str.removesuffix(".json")
        frame["key"] = frame[["object1", "object2", "aspect", "filename"]].agg("|".join, axis=1)
        frame[CRITERIA] = frame[CRITERIA].astype(float)
        return frame

    return read("small_dataset_hum_evaluation.tsv"), read("small_dataset_gpt4_evaluation.tsv")


def _judge_output(values: list[float], n: int) -> str:
    """GPT-4-style raw output; the TSV's own floats (1.0) kept; some wrapped in prose/fences."""
    literal = "{" + ", ".join(f'"{i}": {v!r}' if n % 2 else f"{i}: {v!r}"
                              for i, v in enumerate(values, start=1)) + "}"
    if n % 3 == 0:
        return f"```python\n{literal}\n```"
    if n % 3 == 1:
        return f"Here is my evaluation of the comparison:\n{literal}\nI hope this helps."
    return literal


def _import_rubric(owner):
    human, gpt = _rubric_frames()
    campaign = make_campaign(owner=owner, schema=RUBRIC_SCHEMA, slug="cqa-realdata")
    items = [{"id": k, "system": f.removeprefix("scored_").removesuffix("_comparison"),
              "answer": text} for k, f, text in zip(human["key"], human["filename"],
                                                    human["comparison"], strict=True)]
    items_import(campaign=campaign, content="\n".join(json.dumps(i) for i in items).encode(),
                 filename="items.jsonl")
    expert = [JudgmentRow(n, k, "expert", repr({f"C{i}": int(v) for i, v in enumerate(vals, 1)}))
              for n, (k, vals) in enumerate(zip(human["key"], human[CRITERIA].to_numpy(),
                                                strict=True), start=1)]
    judgments_import(campaign=campaign, rows=expert, platform="account")
    rows = [JudgmentRow(n, k, "gpt-4", _judge_output(list(vals), n))
            for n, (k, vals) in enumerate(zip(gpt["key"], gpt[CRITERIA].to_numpy().tolist(),
                                              strict=True), start=1)]
    return campaign, human, gpt, rows


def test_gpt4_rubric_agreement_matches_an_independent_computation(owner):
    require(RUBRIC_DIR)
    campaign, human, gpt, rows = _import_rubric(owner)

    # One GPT-4 answer got half points (C6 0.5, C9 1.5), which the integer rubric refuses:
    # the whole file is rejected, naming that row and those criteria.
    with pytest.raises(ImportRejected) as caught:
        judgments_import(campaign=campaign, rows=rows)
    scores = gpt[CRITERIA].to_numpy()
    halves = [(int(r) + 1, f"output.rubric.C{int(c) + 1}") for r, c in np.argwhere(scores % 1)]
    assert [(e.row, e.field) for e in caught.value.errors] == halves
    assert {halves[0][0]} == {58}
    half = halves[0][0]
    assert "0.5 given" in caught.value.errors[0].message

    kept = [r for r in rows if r.row != half]
    result = judgments_import(campaign=campaign, rows=kept)
    assert (result.created, result.judges) == (124, ["gpt-4"])
    # Every output, the five failed (all-zero) runs included: test_judge_alignment.py checks
    # the default, which leaves them out.
    stats_ = campaign_statistics(campaign=campaign, n_boot=0, include_failed_judge_outputs=True)
    ours = {r["part"]: r for r in stats_["judges"] if r["judge"] == "gpt-4"}

    joined = human.merge(gpt.drop(index=half - 1), on="key", suffixes=("_h", "_g"))
    assert len(joined) == 124
    for n in range(1, 16):
        h = joined[f"score_dict.{n}_h"].to_numpy()
        g = joined[f"score_dict.{n}_g"].to_numpy()
        row = ours[f"C{n}"]
        assert row["n_items"] == 124
        assert row["exact_agreement"] == pytest.approx((h == g).mean())
        assert row["mean_difference"] == pytest.approx((g - h).mean())
        expected_alpha = krippendorff.alpha(np.vstack([h, g]), level_of_measurement="ordinal")
        if np.isnan(expected_alpha):
            assert row["alpha"] is None
        else:
            assert row["alpha"] == pytest.approx(expected_alpha)
    totals_h = joined[[f"{c}_h" for c in CRITERIA]].sum(axis=1)
    totals_g = joined[[f"{c}_g" for c in CRITERIA]].sum(axis=1)
    rho = stats.spearmanr(totals_h, totals_g).statistic
    assert ours["total"]["spearman"] == pytest.approx(rho)
    print("\nC  exact  alpha  mean_diff   (GPT-4 vs expert, 124 answers)")
    for n in range(1, 16):
        r = ours[f"C{n}"]
        alpha = "  n/a" if r["alpha"] is None else f"{r['alpha']:5.2f}"
        print(f"C{n:<2} {r['exact_agreement']:.2f}  {alpha}  {r['mean_difference']:+.3f}")
    print(f"Spearman of totals: {ours['total']['spearman']:.3f}")
    assert_figures_plot_the_statistics(stats_)

    table = item_side_by_side(campaign=campaign, external_id=joined["key"].iloc[0])
    assert [r["part"] for r in table] == [f"C{n}" for n in range(1, 16)] + ["total"]
    first = joined.iloc[0]
    for r in table[:15]:
        n = int(r["part"][1:])
        assert r["gpt-4"] == first[f"score_dict.{n}_g"]
        assert r["human"] == first[f"score_dict.{n}_h"]
        assert r["differs"] == (first[f"score_dict.{n}_g"] != first[f"score_dict.{n}_h"])


def test_reimporting_a_judge_updates_its_annotations(owner):
    require(RUBRIC_DIR)
    campaign, _, gpt, rows = _import_rubric(owner)
    first = [r for r in rows[:10]]
    judgments_import(campaign=campaign, rows=first)
    again = judgments_import(campaign=campaign, rows=first)
    assert (again.created, again.updated) == (0, 10)
    assert campaign.annotations.filter(worker__platform="llm").count() == 10


STORY_SCHEMA = {
    "display": [{"field": "story", "label": "Story"}],
    "questions": [{"id": a, "kind": "likert", "text": f"{a}?", "required": False,
                   "points": LIKERT_5} for a in ASPECTS],
}


def _story_ratings() -> tuple[pd.DataFrame, pd.DataFrame]:
    def read(name):
        return pd.read_csv(STORY_DIR / name, sep="\t", dtype=str, keep_default_na=False)

    stories = read("scratchplot_general-new.tsv")
    stories["id"] = [f"story-{n}" for n in range(1, len(stories) + 1)]
    ratings = []
    for aspect in ASPECTS:
        frame = read(f"scratchplot_{aspect}_full-annotation-result-new.tsv")
        frame = frame.merge(stories[["INPUT:story", "id"]], on="INPUT:story")
        ratings.append(pd.DataFrame({
            "id": frame["id"], "system": frame["INPUT:system"], "aspect": aspect,
            "worker": frame["ASSIGNMENT:worker_id"], "rating": frame["OUTPUT:category"].astype(int),
        }))
    return stories, pd.concat(ratings, ignore_index=True)


def story_rating_campaign(owner, slug: str):
    """A campaign of the 100 ScratchPlot stories with their 900 real ratings imported, one
    annotation per (rater, story) holding every aspect that rater scored; with the ratings."""
    stories, ratings = _story_ratings()
    campaign = make_campaign(owner=owner, schema=STORY_SCHEMA, slug=slug)
    items = [{"id": i, "system": s, "story": t} for i, s, t in
             zip(stories["id"], stories["INPUT:system"], stories["INPUT:story"], strict=True)]
    items_import(campaign=campaign, content="\n".join(json.dumps(i) for i in items).encode(),
                 filename="items.jsonl")
    per_rater = ratings.groupby(["worker", "id"]).apply(
        lambda g: repr(dict(zip(g["aspect"], g["rating"].astype(int), strict=True))),
        include_groups=False)
    rows = [JudgmentRow(n, item, worker, output)
            for n, ((worker, item), output) in enumerate(per_rater.items(), start=1)]
    judgments_import(campaign=campaign, rows=rows, platform="link")
    return campaign, ratings


def test_story_ratings_alpha_and_system_means_match_an_independent_computation(owner):
    require(STORY_DIR)
    campaign, ratings = story_rating_campaign(owner, "scratchplot-realdata")
    assert len(ratings) == 900

    stats_ = campaign_statistics(campaign=campaign, n_boot=200)
    agreement = {r["question"]: r for r in stats_["agreement"] if r["subset"] is None}
    means = {(r["question"], r["system"]): r for r in stats_["system_scores"]}
    print("\naspect           alpha (ordinal)  95% CI          items raters   means by system")
    for aspect in ASPECTS:
        sub = ratings[ratings["aspect"] == aspect]
        matrix = sub.pivot(index="worker", columns="id", values="rating").to_numpy(dtype=float)
        expected = krippendorff.alpha(matrix, level_of_measurement="ordinal")
        row = agreement[aspect]
        assert row["level"] == "ordinal"
        assert row["alpha"] == pytest.approx(expected)
        assert (row["n_items"], row["n_raters"]) == (100, sub["worker"].nunique())
        assert row["ci_low"] <= row["alpha"] <= row["ci_high"]
        expected_means = sub.groupby("system")["rating"].agg(["mean", "std", "size"])
        for system, ref in expected_means.iterrows():
            ours = means[(aspect, system)]
            assert ours["mean"] == pytest.approx(ref["mean"])
            assert ours["sd"] == pytest.approx(ref["std"])
            assert ours["n"] == ref["size"]
        print(f"{aspect:16} {row['alpha']:.3f}  [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
              f"  {row['n_items']:5} {row['n_raters']:6}   "
              + ", ".join(f"{s} {m:.2f}" for s, m in expected_means["mean"].items()))
    # Each aspect's score figure plots the means computed here, best first.
    plotted = {p["key"]: p["values"] for p in assert_figures_plot_the_statistics(stats_)}
    for aspect in ASPECTS:
        expected = ratings[ratings["aspect"] == aspect].groupby("system")["rating"].mean()
        v = plotted[f"scores:{aspect}"]
        assert v["labels"] == sorted(expected.index, key=lambda s: (-expected[s], s))
        assert v["estimate"] == pytest.approx([expected[s] for s in v["labels"]])
