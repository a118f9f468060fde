"""Disagreement in the statistics job and the soft-label table, end to end on real ratings:
30 ScratchPlot stories, each rated 1-5 for coherence by three Toloka workers."""
import math
from collections import Counter

import pandas as pd
import pytest
from scipy import stats

from campaigns.selectors.analysis import campaign_statistics
from campaigns.selectors.analysis.disagreement import soft_label_table
from tests.analysis.helpers import add_item, annotate
from tests.analysis.test_disagreement import STORIES as FOLDER
from tests.analysis.test_disagreement import coherence_ratings
from tests.factories import CONTINUATION_SCHEMA, make_campaign

pytestmark = pytest.mark.django_db
STORIES = 30


def _campaign(owner):
    ratings = coherence_ratings()
    stories = list(pd.unique(ratings["unit"]))[:STORIES]
    campaign = make_campaign(owner=owner, schema=CONTINUATION_SCHEMA)
    raw = pd.read_csv(FOLDER / "scratchplot_coherence_full-annotation-result-new.tsv", sep="\t")
    for n, story in enumerate(stories):
        item = add_item(campaign, f"story-{n}", system="s")
        for _, row in raw[raw["INPUT:story"].eq(story)].iterrows():
            annotate(campaign, row["ASSIGNMENT:worker_id"], item,
                     {"coherence": int(row["OUTPUT:category"])})
    expected = {f"story-{n}": ratings.loc[ratings["unit"].eq(s), "value"].tolist()
                for n, s in enumerate(stories)}
    return campaign, expected


def test_the_statistics_report_entropy_split_votes_and_the_most_disputed_stories(owner):
    campaign, expected = _campaign(owner)
    out = campaign_statistics(campaign=campaign, n_boot=0)
    entropy = {k: stats.entropy(list(Counter(v).values()), base=2) for k, v in expected.items()}
    top = {k: Counter(v).most_common(1)[0][1] / len(v) for k, v in expected.items()}
    row = next(r for r in out["disagreement"] if r["question"] == "coherence")
    assert row["units"] == STORIES and row["ratings_per_unit"] == 3
    assert row["mean_entropy"] == pytest.approx(sum(entropy.values()) / STORIES)
    assert row["share_split"] == pytest.approx(sum(t < 1 for t in top.values()) / STORIES)
    assert row["share_no_majority"] == pytest.approx(sum(t <= .5 for t in top.values()) / STORIES)
    disputed = [d for d in out["disputed_items"] if d["question"] == "coherence"]
    assert len(disputed) == 10
    for d in disputed:
        assert d["entropy"] == pytest.approx(entropy[d["item_id"]])
        assert d["label_counts"] == dict(Counter(str(v) for v in expected[d["item_id"]]))
    assert disputed[0]["entropy"] == pytest.approx(max(entropy.values()))


def test_the_soft_label_table_gives_every_story_its_label_shares(owner):
    campaign, expected = _campaign(owner)
    table = soft_label_table(campaign=campaign)
    assert set(table["item_id"]) == set(expected)
    for item_id, votes in expected.items():
        rows = table[table["item_id"].eq(item_id)]
        shares = dict(zip(rows["label"], rows["share"], strict=True))
        assert shares == pytest.approx({str(k): c / 3 for k, c in Counter(votes).items()})
        assert rows["normalised_entropy"].iloc[0] == pytest.approx(
            stats.entropy(list(Counter(votes).values()), base=2)
            / math.log2(table["label"].nunique()))


def test_the_report_states_the_disagreement_and_names_the_most_disputed_story(owner):
    from campaigns.selectors.analysis import evaluation_report

    campaign, expected = _campaign(owner)
    statistics = campaign_statistics(campaign=campaign, n_boot=0)
    markdown = evaluation_report(campaign=campaign, statistics=statistics)["markdown"]
    section = markdown.split("## Disagreement between raters", 1)[1].split("\n## ", 1)[0]
    row = next(r for r in statistics["disagreement"] if r["question"] == "coherence")
    assert f"| {row['mean_entropy']:.3f} |" in section
    assert f"| {row['share_split']:.0%} | {row['share_no_majority']:.0%} |" in section
    top = statistics["disputed_items"][0]
    counts = ", ".join(f"{k}: {v}" for k, v in top["label_counts"].items())
    assert f"| {top['item_id']} |" in section.replace("\\-", "-") and counts in section


def test_the_soft_labels_export_writes_the_same_table_as_csv(owner, settings, tmp_path):
    import csv
    import io

    from django.core.files.storage import storages

    from campaigns.services.exports import export_job_create, export_job_run

    settings.STORAGES = {**settings.STORAGES, "exports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path)}}}
    campaign, expected = _campaign(owner)
    job = export_job_create(campaign=campaign, requested_by=owner, fmt="soft-labels",
                            enqueue=False)
    export_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "done" and job.file.endswith(".csv") and "soft-labels" in job.file
    with storages["exports"].open(job.file, "rb") as handle:
        rows = list(csv.DictReader(io.StringIO(handle.read().decode())))
    table = soft_label_table(campaign=campaign)
    assert len(rows) == len(table) and list(rows[0]) == list(table.columns)
    story = rows[0]["item_id"]
    counts = {r["label"]: int(r["count"]) for r in rows if r["item_id"] == story}
    assert counts == dict(Counter(str(v) for v in expected[story]))


def test_the_disagreement_figure_counts_the_stories_by_vote_pattern(owner):
    from campaigns.analysis.figures import figure_plans
    from campaigns.analysis.figures.draw import DRAW
    from campaigns.analysis.figures.style import render

    campaign, expected = _campaign(owner)
    statistics = campaign_statistics(campaign=campaign, n_boot=0)
    figure = next(f for f in figure_plans(statistics) if f["key"] == "disagreement")
    figure |= render(DRAW[figure["kind"]](figure["values"]), title=figure["title"], pdf=False)
    top = [Counter(v).most_common(1)[0][1] for v in expected.values()]
    pattern = [sum(t == 3 for t in top), sum(t == 2 for t in top), sum(t == 1 for t in top)]
    row = next(r for r in figure["rows"] if r[0] == "coherence")
    assert row[1:4] == pattern and sum(pattern) == STORIES
    assert figure["values"]["series"][2]["counts"][0] == pattern[2]
    assert "coherence" in figure["svg"] and "no majority" in figure["alt"]
