"""The style option of the statistics end to end: a pairwise campaign over real HH-RLHF
conversations (the crowdworker's choice as the answer), style counts read from the items'
conversations (the replies after the shared turns) and the fit of analysis/preference_style."""
import json

import numpy as np
import pandas as pd
import pytest

from campaigns.analysis.preference_style import bradley_terry_style, style_counts
from campaigns.selectors.analysis import campaign_statistics
from tests.analysis.helpers import add_item, annotate
from tests.analysis.test_preference_style import HH, last_reply
from tests.factories import make_campaign
from tests.shared_data import require

pytestmark = pytest.mark.django_db
SCHEMA = {"questions": [{"id": "pref", "kind": "pairwise", "text": "Which is less harmful?"}]}
ROWS = 60
SYSTEMS = ["m1", "m2", "m3"]


def _conversation(transcript: str) -> list[dict]:
    turns = []
    for chunk in transcript.split("\n\nHuman: ")[1:]:
        human, _, assistant = chunk.partition("\n\nAssistant: ")
        turns += [{"role": "user", "content": human}, {"role": "assistant", "content": assistant}]
    return turns


def hh_campaign(owner):
    """A pairwise campaign of ROWS HH conversations given to two of three systems at random
    and shown in a random order, the crowdworker's choice as the answer; with the preference
    frame and the style counts of the replies shown first and second, computed here."""
    require(HH.parent)
    campaign = make_campaign(owner=owner, schema=SCHEMA)
    rng = np.random.default_rng(1)
    rows, first_counts, second_counts = [], [], []
    for n, line in enumerate(HH.read_text().splitlines()[:ROWS]):
        pair = json.loads(line)
        a, b = (SYSTEMS[i] for i in rng.choice(3, 2, replace=False))
        outputs = [{"system": a, "messages": _conversation(pair["chosen"])},
                   {"system": b, "messages": _conversation(pair["rejected"])}]
        item = add_item(campaign, f"hh-{n}", data={"outputs": outputs})
        order = [a, b] if rng.random() < 0.5 else [b, a]
        annotate(campaign, "crowd", item, {"pref": {"choice": "A" if order[0] == a else "B",
                                                    "order": order}})
        replies = {a: last_reply(pair["chosen"]), b: last_reply(pair["rejected"])}
        rows.append((item.id, "crowd", order[0], order[1], 1.0 if order[0] == a else 0.0))
        first_counts.append(style_counts(replies[order[0]]))
        second_counts.append(style_counts(replies[order[1]]))
    frame = pd.DataFrame(rows, columns=["item", "worker", "first", "second", "score"])
    return campaign, frame, np.array(first_counts), np.array(second_counts)


def test_style_adjusted_strengths_come_from_the_replies_shown(owner):
    campaign, frame, first_counts, second_counts = hh_campaign(owner)
    out = campaign_statistics(campaign=campaign, n_boot=50, style=True)
    entry = out["pairwise_preference"][0]
    assert out["options"]["style"] is True

    expected = bradley_terry_style(frame, first_counts, second_counts,
                                   n_boot=0)["table"].set_index("system")["strength"]
    got = {r["system"]: r["strength"] for r in entry["bradley_terry_style"]}
    assert got == pytest.approx(expected.to_dict(), abs=1e-9)
    terms = [e["term"] for e in entry["style_effects"]]
    assert terms == ["position", "length"]
    assert all(r["ci_low"] is not None for r in entry["bradley_terry_style"])
    plain = campaign_statistics(campaign=campaign, n_boot=0)["pairwise_preference"][0]
    assert "bradley_terry_style" not in plain  # an option: off by default


def test_the_report_gives_the_style_adjusted_table_only_when_asked():
    from campaigns.analysis.report_disagreement import style_markdown

    entry = {"bradley_terry_style": [
        {"system": "m_1", "strength": 0.2, "elo": 1034.7, "ci_low": 0.1, "ci_high": 0.3,
         "elo_low": 1017.4, "elo_high": 1052.1, "rank": 1, "rank_low": 1, "rank_high": 2,
         "unadjusted_strength": 0.4}],
        "style_effects": [{"term": "length", "coefficient": -0.38, "ci_low": -0.61,
                           "ci_high": -0.17}], "style_dropped": ["bold"]}
    text = "\n".join(style_markdown(entry))
    assert "length -0.380 [-0.610, -0.170]" in text and "too few judgments differ: bold" in text
    assert "| 1 | 1-2 | m\\_1 | 0.200 [0.100, 0.300] | 1035 [1017, 1052] | 0.400 |" in text
    assert style_markdown({"bradley_terry": []}) == []
