"""Rater connectivity: a graded measure of how raters link systems replaces the yes/no nesting
test, so one crossover rating no longer lets per-rater z-scores name a winner."""
import json

import numpy as np
import pandas as pd
import pytest
from scipy.sparse.csgraph import connected_components

from campaigns.analysis import comparisons
from campaigns.analysis.connectivity import rater_connectivity
from campaigns.analysis.scores import system_ranking, z_scores
from campaigns.analysis.spans import answers_frame, mqm_scores
from campaigns.selectors.analysis import campaign_statistics
from campaigns.services.items import items_import
from campaigns.services.judgments import JudgmentRow, judgments_import
from tests.analysis.test_realdata_conclusions import DA_DIR, DA_SCHEMA, _da_ratings
from tests.factories import make_campaign
from tests.shared_data import require


def _nested_but_for(crossovers: int, seed: int, gap: float = 1.0) -> pd.DataFrame:
    """Two systems, 40 items each, 4 raters each, raters nested in systems except for
    `crossovers` ratings of B's items by one of A's raters. B is truly `gap` better and its
    raters are harsher by 2 * gap, so raw means of B look worse but are not."""
    rng = np.random.default_rng(seed)
    rows = []
    for system, quality, lenience in (("A", 0.0, 2 * gap), ("B", gap, 0.0)):
        for n in range(40):
            truth = quality + rng.normal(0, 1)
            for k in range(2):
                worker = f"{system}{(n + k) % 4}"
                rows.append((f"{system}{n}", system, worker,
                             truth + lenience + rng.normal(0, 0.5)))
    frame = pd.DataFrame(rows, columns=["item", "system", "worker", "value"])
    b_rows = frame.index[frame["system"].eq("B")][:crossovers]
    frame.loc[b_rows, "worker"] = "A0"
    return frame.assign(question="q", part="", segment=None)


def test_connectivity_figures_match_a_direct_count_and_graph():
    frame = _nested_but_for(3, seed=0)
    figures = rater_connectivity(frame)
    systems_per_worker = frame.groupby("worker")["system"].nunique()
    crossed = systems_per_worker[systems_per_worker > 1].index
    assert figures["crossed_raters"] == len(crossed) == 1
    assert figures["share_crossed"] == pytest.approx(frame["worker"].isin(crossed).mean())
    b = frame[frame["system"] == "B"]
    assert figures["min_system_share_crossed"] == pytest.approx(b["worker"].isin(crossed).mean())
    assert figures["weakest_system"] == "B" and figures["min_shared_raters"] == 1
    # The rater-system graph by an independent adjacency matrix: one component.
    names = sorted(frame["system"].unique()) + sorted(frame["worker"].unique())
    where = {n: k for k, n in enumerate(names)}
    adjacency = np.zeros((len(names), len(names)))
    for s, w in zip(frame["system"], frame["worker"], strict=True):
        adjacency[where[s], where[w]] = adjacency[where[w], where[s]] = 1
    assert connected_components(adjacency, directed=False)[0] == 1
    assert figures["components"] == 1 and figures["adequate"] is False


def test_a_crossed_design_is_adequate_and_a_lone_rater_is_comparable_with_themself():
    rows = [(f"{s}{n}", s, f"w{(n + k) % 5}", float(n % 7)) for s in "ABC" for n in range(20)
            for k in range(2)]
    frame = pd.DataFrame(rows, columns=["item", "system", "worker", "value"])
    figures = rater_connectivity(frame)
    assert figures["adequate"] and figures["min_system_share_crossed"] == 1.0
    assert rater_connectivity(frame.assign(worker="w"))["adequate"]
    codes = {w.code for w in comparisons.design_checks(frame.assign(question="q", part=""))}
    assert not codes & set(comparisons.BLOCKING)


def test_three_crossover_ratings_no_longer_rank_the_worse_system_first():
    frame = _nested_but_for(3, seed=1)
    warnings = comparisons.design_checks(frame)
    assert comparisons.WEAKLY_CONNECTED in [w.code for w in warnings]
    blocked = comparisons.blocked_parts(warnings)
    assert system_ranking(frame, blocked=blocked)["rank"].isna().all()
    row = comparisons.compare_systems(z_scores(frame), blocked=blocked, n_boot=0).iloc[0]
    assert row["basis"] == "raw" and row["better"] is None
    assert row["blocked_by"] == comparisons.WEAKLY_CONNECTED
    # The old yes/no guard fired only when no rater crossed; here one does, so it was off and
    # the z-based ranking (means of about 0 either way) ranked the systems.
    assert comparisons.NESTED not in [w.code for w in warnings]


@pytest.mark.django_db
def test_mlqe_pe_with_one_crossover_rating_names_no_winner(owner):
    require(DA_DIR)
    ratings = _da_ratings()
    moved = ratings.index[ratings["system"].eq("ru-en")][0]
    ratings.loc[moved, "rater"] = "en-de-r1"  # one ru-en rating given by an en-de rater
    campaign = make_campaign(owner=owner, schema=DA_SCHEMA, slug="mlqe-da-crossover")
    items = ratings.drop_duplicates("item")
    items_import(campaign=campaign, filename="items.jsonl", content="\n".join(
        json.dumps({"id": i, "system": s, "source": src, "translation": t})
        for i, s, src, t in zip(items["item"], items["system"], items["source"],
                                items["translation"], strict=True)).encode())
    judgments_import(campaign=campaign, platform="link", rows=[
        JudgmentRow(n, i, r, repr({"da": s})) for n, (i, r, s) in enumerate(
            zip(ratings["item"], ratings["rater"], ratings["score"], strict=True), start=1)])

    result = campaign_statistics(campaign=campaign, n_boot=0)

    (comparison,) = result["comparisons"]
    assert comparison["better"] is None  # was "ru-en", p = 0.0037, raw means 68.8 vs 83.5
    assert comparison["blocked_by"] == comparisons.WEAKLY_CONNECTED
    assert comparison["basis"] == "raw"
    (connectivity,) = result["rater_connectivity"]
    assert connectivity["crossed_raters"] == 1 and connectivity["weakest_system"] == "ru-en"
    assert connectivity["min_system_share_crossed"] == pytest.approx(1 / 600)
    assert all(r["rank"] is None for r in result["ranking"])


def test_mqm_z_is_withheld_when_raters_barely_connect_systems():
    def weight(severity, category):
        return {"minor": 1.0, "major": 5.0}[severity]

    rows = []
    for system, worker_prefix in (("A", "a"), ("B", "b")):
        for n in range(12):
            for k in range(2):
                spans = [{"start": 0, "end": 2, "text": "xx", "severity": "minor",
                          "category": None}] * ((n + k) % 3 + (system == "B"))
                rows.append((f"{system}{n}", system, f"{worker_prefix}{k}", spans, "a b c"))
    rows[-1] = (*rows[-1][:2], "a0", *rows[-1][3:])  # one crossover answer
    answers = answers_frame(rows)
    assert mqm_scores(answers, weight, n_boot=0)["mqm_z"].isna().all()
    crossed = answers_frame([(i, s, f"w{k}", sp, src) for (i, s, _, sp, src), k in
                             zip(rows, [n % 3 for n in range(len(rows))], strict=True)])
    assert mqm_scores(crossed, weight, n_boot=0)["mqm_z"].notna().all()
