"""The pairwise and best-worst figures on judgments from published data: the WMT MQM sample's
segment penalties (shared data) as preferences. Of five systems, every two on the same segment
make a pairwise item (the smaller penalty wins, equal penalties tie) and every four a best-worst
item (best: smallest penalty, worst: largest). The figures must plot what the statistics say,
and the win counts and best-minus-worst scores counted here from the penalties directly.

The other real-data campaigns (DA, story ratings, CompQA rubric, GPT-4 judge, MQM spans) check
their figures in the tests that compute their statistics (tests/analysis/test_realdata*.py,
test_judge_alignment.py, test_design_tests.py)."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from campaigns.selectors.analysis import campaign_statistics
from campaigns.services.items import items_import
from campaigns.services.judgments import JudgmentRow, judgments_import
from tests.analysis.figures.checks import assert_figures_plot_the_statistics
from tests.analysis.test_spans import MQM_TSV, _read_mqm_tsv
from tests.factories import make_campaign
from tests.shared_data import require

pytestmark = pytest.mark.django_db
SYSTEMS = 5


@pytest.fixture(scope="module")
def penalties():
    """Segment x system penalty (WMT weights: major 5, minor 1, minor punctuation 0.1) of the
    first five systems, on the segments all five were rated on."""
    require(MQM_TSV.parent)
    frame = _read_mqm_tsv()
    minor_punct = (frame["severity"] == "Minor") & (frame["category"] == "Fluency/Punctuation")
    frame["weight"] = np.select([frame["severity"] == "No-error", minor_punct,
                                 frame["severity"] == "Minor", frame["severity"] == "Major"],
                                [0.0, 0.1, 1.0, 5.0], 0.0)
    table = frame.groupby(["seg_id", "system"])["weight"].sum().unstack("system")
    table = table[sorted(table.columns)[:SYSTEMS]].dropna()
    assert len(table) >= 10
    return table, frame.drop_duplicates(["seg_id"]).set_index("seg_id")["source"]


def _campaign(owner, slug: str, question: dict, items: list[dict], answers: list[dict]):
    campaign = make_campaign(owner=owner, slug=slug, schema={
        "display": [{"field": "source", "label": "Source"}], "questions": [question]})
    items_import(campaign=campaign, filename="items.jsonl",
                 content="\n".join(json.dumps(i) for i in items).encode())
    judgments_import(campaign=campaign, platform="account", rows=[
        JudgmentRow(n, i["id"], "mqm-rater", repr({question["id"]: a}))
        for n, (i, a) in enumerate(zip(items, answers, strict=True), start=1)])
    return campaign


def test_pairwise_win_rates_and_bradley_terry_figures_of_mqm_preferences(owner, penalties):
    table, sources = penalties
    items, answers, counts = [], [], {}
    for seg, row in table.iterrows():
        for a, b in itertools.combinations(table.columns, 2):
            items.append({"id": f"{seg}|{a}|{b}", "source": sources[seg], "outputs": [
                {"system": a, "text": f"{a} {seg}"}, {"system": b, "text": f"{b} {seg}"}]})
            answers.append("A" if row[a] < row[b] else "B" if row[b] < row[a] else "tie")
            won = counts.setdefault((a, b), [0, 0, 0])
            won[0 if row[a] < row[b] else 2 if row[b] < row[a] else 1] += 1
    campaign = _campaign(owner, "mqm-pairwise", {"id": "preference", "kind": "pairwise",
                                                 "text": "Which is better?", "tie": True},
                         items, answers)

    result = campaign_statistics(campaign=campaign, n_boot=50)

    plotted = {p["key"]: p for p in assert_figures_plot_the_statistics(result)}
    heat = plotted["win_rates:preference"]["values"]
    for (a, b), (wins, ties, losses) in counts.items():
        i, j = heat["rows"].index(a), heat["columns"].index(b)
        assert heat["text"][i][j] == f"{wins}-{ties}-{losses}"
        assert heat["matrix"][i][j] == pytest.approx((wins + ties / 2) / (wins + ties + losses))
    strengths = plotted["bradley_terry:preference"]["values"]
    assert sorted(strengths["labels"]) == sorted(table.columns)
    assert sum(strengths["estimate"]) == pytest.approx(0, abs=1e-9)  # log-strengths, mean 0
    # The system with the most wins over all others is the strongest.
    total = {s: sum(w + t / 2 for (a, b), (w, t, _) in counts.items() if a == s)
             + sum(ls + t / 2 for (a, b), (_, t, ls) in counts.items() if b == s)
             for s in table.columns}
    best = strengths["labels"][int(np.argmax(strengths["estimate"]))]
    assert total[best] == max(total.values())


def test_best_worst_figure_of_mqm_preferences(owner, penalties):
    table, sources = penalties
    items, answers, score = [], [], {s: [0, 0, 0] for s in table.columns}
    for seg, row in table.iterrows():
        for shown in itertools.combinations(table.columns, 4):
            ranked = sorted(shown, key=lambda s: (row[s], s))  # ties: by name
            items.append({"id": f"{seg}|{'|'.join(shown)}", "source": sources[seg],
                          "outputs": [{"system": s, "text": f"{s} {seg}"} for s in shown]})
            answers.append({"best": "ABCD"[shown.index(ranked[0])],
                            "worst": "ABCD"[shown.index(ranked[-1])]})
            score[ranked[0]][0] += 1
            score[ranked[-1]][1] += 1
            for s in shown:
                score[s][2] += 1
    campaign = _campaign(owner, "mqm-best-worst", {"id": "bws", "kind": "bws",
                                                   "text": "Best and worst?"}, items, answers)

    result = campaign_statistics(campaign=campaign, n_boot=50)

    plotted = {p["key"]: p for p in assert_figures_plot_the_statistics(result)}
    v = plotted["best_worst:bws"]["values"]
    assert sorted(v["labels"]) == sorted(table.columns)
    for label, estimate in zip(v["labels"], v["estimate"], strict=True):
        best, worst, shown = score[label]
        assert estimate == pytest.approx((best - worst) / shown)
