"""Bradley-Terry with style covariates ("style control") against statsmodels' unpenalised
logistic regression on real human preferences (HH-RLHF: crowdworkers chose the less harmful of
two replies, whose lengths differ), and on a simulated verbose system."""
import json
import re

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from campaigns.analysis.preference_style import (
    ELO_SCALE,
    bradley_terry_style,
    style_counts,
)
from tests.shared_data import SHARED, require

HH = SHARED / "realdata" / "chat_preference" / "harmless_base_test_first400.jsonl"
SYSTEMS = ["a", "b", "c", "v"]


def last_reply(transcript: str) -> str:
    return transcript.rsplit("\n\nAssistant:", 1)[-1].strip()


def hh_study(seed: int = 0):
    """Each HH row's two last replies given to two of four systems drawn at random (v takes
    the longer one 80% of the time), shown in a random order; the crowdworker's choice is the
    outcome. Returns the frame and the two replies shown per judgment."""
    require(HH.parent)
    rng = np.random.default_rng(seed)
    rows, shown = [], []
    for n, line in enumerate(HH.read_text().splitlines()):
        pair = json.loads(line)
        chosen, rejected = last_reply(pair["chosen"]), last_reply(pair["rejected"])
        s1, s2 = (SYSTEMS[i] for i in rng.choice(4, 2, replace=False))
        texts = [chosen, rejected]
        if "v" in (s1, s2):
            longer_first = len(chosen.split()) >= len(rejected.split())
            v_longer = rng.random() < 0.8
            texts = texts if (longer_first == v_longer) == (s1 == "v") else texts[::-1]
        flip = rng.random() < 0.5
        (first, t1), (second, t2) = [(s2, texts[1]), (s1, texts[0])] if flip else \
            [(s1, texts[0]), (s2, texts[1])]
        rows.append((n, "crowd", first, second, 1.0 if t1 == chosen else 0.0))
        shown.append((t1, t2))
    return pd.DataFrame(rows, columns=["item", "worker", "first", "second", "score"]), shown


def statsmodels_fit(frame: pd.DataFrame, shown: list) -> tuple[pd.Series, float, float]:
    """(centred strengths, length coefficient, position coefficient) from sm.Logit on a design
    built here: +1/-1 system dummies (a dropped), an intercept, and the word-count difference
    (first - second) / (first + second + 1) divided by its standard deviation."""
    words = np.array([[len(re.findall(r"\S+", t)) for t in pair] for pair in shown], float)
    ratio = (words[:, 0] - words[:, 1]) / (words.sum(axis=1) + 1)
    x = pd.DataFrame(0.0, index=frame.index, columns=SYSTEMS[1:])
    for s in SYSTEMS[1:]:
        x[s] = frame["first"].eq(s).astype(float) - frame["second"].eq(s).astype(float)
    x["position"] = 1.0
    x["length"] = ratio / ratio.std()
    fit = sm.Logit(frame["score"], x).fit(disp=0, method="newton", tol=1e-12, maxiter=100)
    theta = pd.Series([0.0, *fit.params[SYSTEMS[1:]]], index=SYSTEMS)
    return theta - theta.mean(), fit.params["length"], fit.params["position"]


def test_style_adjusted_strengths_match_statsmodels_on_real_preferences():
    frame, shown = hh_study()
    counts = np.array([[style_counts(t) for t in pair] for pair in shown])
    out = bradley_terry_style(frame, counts[:, 0], counts[:, 1], n_boot=200)
    theta, length, position = statsmodels_fit(frame, shown)
    table = out["table"].set_index("system")
    assert table["strength"].to_dict() == pytest.approx(theta.to_dict(), abs=1e-7)
    effects = out["effects"].set_index("term")
    assert effects.at["length", "coefficient"] == pytest.approx(length, abs=1e-7)
    assert effects.at["position", "coefficient"] == pytest.approx(position, abs=1e-7)
    # Harmlessness: the longer reply loses, and the interval says so.
    assert effects.at["length", "ci_high"] < 0
    # HH replies carry little Markdown: too few judgments differ in it to model it
    assert set(out["dropped"]) == {"headers", "lists", "bold"}
    assert table["elo"].to_numpy() == pytest.approx(1000 + ELO_SCALE * table["strength"])
    # v sat on the longer reply; unadjusted it pays for that, adjusted it does not
    assert table.at["v", "unadjusted_strength"] < table.at["v", "strength"] - 0.1
    assert (table["ci_low"] < table["strength"]).all() and out["n_boot_used"] == 200


def test_a_verbose_equal_system_ranks_first_unadjusted_and_not_once_length_is_modelled():
    rng = np.random.default_rng(3)
    n = 600
    systems = rng.choice(["p", "q", "verbose"], size=(n, 2))
    systems = systems[systems[:, 0] != systems[:, 1]]
    words = np.where(systems == "verbose", rng.integers(150, 400, systems.shape),
                     rng.integers(40, 200, systems.shape))
    ratio = (words[:, 0] - words[:, 1]) / (words.sum(axis=1) + 1)
    wins = rng.random(len(words)) < 1 / (1 + np.exp(-4 * ratio))  # equal systems, length wins
    frame = pd.DataFrame({"item": np.arange(len(words)), "worker": "w", "first": systems[:, 0],
                          "second": systems[:, 1], "score": wins.astype(float)})
    counts = [np.column_stack([words[:, i], np.zeros((len(words), 3), int)]) for i in (0, 1)]
    out = bradley_terry_style(frame, *counts, n_boot=300)
    table = out["table"].set_index("system")
    assert table["unadjusted_strength"].idxmax() == "verbose"
    assert table.at["verbose", "unadjusted_strength"] > 0.3
    assert table.at["verbose", "ci_low"] < 0 < table.at["verbose", "ci_high"]
    assert out["effects"].set_index("term").at["length", "ci_low"] > 0


def test_markdown_features_are_counted_as_arena_counts_them():
    text = "# Title\n## Part\nSome **bold** and __also__.\n1. one\n2. two\n - dash\n* star\n#no"
    assert style_counts(text) == (len(text.split()), 2, 4, 2)
    assert style_counts("") == (0, 0, 0, 0)
