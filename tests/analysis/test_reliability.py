"""Worker reliability: Dawid-Skene on a hand-checked case, and the leave-one-out flag."""
import numpy as np
import pandas as pd
import pytest

from campaigns.analysis.reliability import dawid_skene, loo_correlations, worker_reliability
from campaigns.selectors.analysis import campaign_statistics
from tests.analysis.helpers import add_item, annotate
from tests.factories import make_campaign

LIKERT = {"display": [{"field": "prompt"}],
          "questions": [{"id": "q", "kind": "likert", "text": "Good?",
                         "points": [{"value": v, "label": str(v)} for v in range(1, 6)]}]}


def test_one_em_step_matches_the_hand_computation():
    # Item 0: A=0, B=0, C=1; item 1: everyone 1. Majority start: item 0 is (2/3, 1/3), item 1
    # is (0, 1). Worker A's confusion after the first M step (before any E step), smoothing
    # 0.01 per cell:
    #   true 0: label 0 gets 2/3 (item 0), label 1 gets 0 (item 1) -> (0.6767, 0.01) / 0.6867
    #   true 1: label 0 gets 1/3, label 1 gets 1 -> (0.3433, 1.01) / 1.3533
    items = np.array([0, 0, 0, 1, 1, 1])
    workers = np.array([0, 1, 2, 0, 1, 2])
    labels = np.array([0, 0, 1, 1, 1, 1])
    priors, confusion, _ = dawid_skene(items, workers, labels, iterations=0)
    assert priors == pytest.approx([1 / 3, 2 / 3])
    assert confusion[0] == pytest.approx(np.array([[0.67667 / 0.68667, 0.01 / 0.68667],
                                                   [0.34333 / 1.35333, 1.01 / 1.35333]]),
                                         abs=1e-4)


def test_a_worker_who_always_flips_the_label_gets_a_low_reliability():
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 2, 40)
    rows = []
    for item, label in enumerate(truth):
        rows += [(item, "good1", label), (item, "good2", label), (item, "flipper", 1 - label)]
        rows.append((item, "noisy", label if rng.random() < 0.7 else 1 - label))
    frame = pd.DataFrame(rows, columns=["item", "worker", "value"]).assign(
        question="q", part="", level="nominal")
    table = worker_reliability(frame).set_index("worker")["reliability"]
    assert table["good1"] > 0.95 and table["good2"] > 0.95
    assert table["flipper"] < 0.05
    assert 0.55 < table["noisy"] < 0.85


def test_leave_one_out_correlation_matches_pandas():
    rng = np.random.default_rng(1)
    quality = rng.normal(0, 1, 20)
    rows = [(i, w, float(np.clip(np.round(3 + quality[i] + rng.normal(0, 0.5)), 1, 5)))
            for i in range(20) for w in ("a", "b", "c")]
    rows += [(i, "reversed", float(np.clip(np.round(3 - quality[i]), 1, 5))) for i in range(20)]
    frame = pd.DataFrame(rows, columns=["item", "worker", "value"]).assign(
        question="q", part="", level="ordinal")
    table = loo_correlations(frame).set_index("worker")
    z = (frame["value"] - frame["value"].mean()) / frame["value"].std()
    wide = frame.assign(z=z).pivot(index="item", columns="worker", values="z")
    others = wide.drop(columns="reversed").mean(axis=1)
    expected = np.corrcoef(wide["reversed"], others)[0, 1]
    assert table.loc["reversed", "loo_correlation"] == pytest.approx(expected)
    assert table.loc["reversed", "negative_loo"]
    assert not table.loc[["a", "b", "c"], "negative_loo"].any()


@pytest.mark.django_db
def test_a_reversed_scale_worker_is_flagged_and_reliabilities_are_reported(owner):
    campaign = make_campaign(owner=owner, schema=LIKERT)
    # 20 items: a reliability is shown from worker_models.MIN_LABELS labels on.
    items = [add_item(campaign, f"i{n}", system="A" if n % 2 else "B") for n in range(20)]
    for n, item in enumerate(items):
        score = 1 + n % 5
        for worker in ("w1", "w2", "w3"):
            annotate(campaign, worker, item, {"q": score})
        annotate(campaign, "upside-down", item, {"q": 6 - score})
    result = campaign_statistics(campaign=campaign, n_boot=0)
    flagged = [r for r in result["quality"] if r["flagged"]]
    assert len(flagged) == 1 and flagged[0]["negative_loo"]
    assert "correlate negatively" in flagged[0]["reasons"][-1]
    assert flagged[0]["loo_correlation"] == pytest.approx(-1.0)
    assert {r["model"] for r in result["worker_reliability"]} == {"dawid_skene", "mace"}
    for model in ("dawid_skene", "mace"):
        reliabilities = {r["worker"]: r for r in result["worker_reliability"]
                         if r["model"] == model}
        assert reliabilities[flagged[0]["worker"]]["reliability"] == min(
            r["reliability"] for r in reliabilities.values())
