"""Error-span statistics: MQM against a hand-computed WMT example, span F1 against hand counts."""
import csv
import json
import statistics

import numpy as np
import pandas as pd
import pytest

from campaigns.analysis.spans import (
    WMT,
    Weights,
    answers_frame,
    count_words,
    error_counts,
    mqm_scores,
    segment_penalties,
    span_agreement,
)
from campaigns.selectors.analysis import campaign_statistics
from campaigns.services.items import items_import
from campaigns.services.judgments import JudgmentRow, judgments_import
from tests.factories import make_campaign
from tests.shared_data import SHARED, require


def span(start, end, severity, category=None):
    return {"start": start, "end": end, "text": "x" * (end - start), "severity": severity,
            "category": category}


SOURCES = {1: "one two three four five six seven eight nine ten", 2: "one two three four five"}
# Two systems (A, B) translate segments 1 and 2; two raters (r1, r2).
ANSWERS = [
    ("A1", "A", "r1", [span(0, 10, "major", "accuracy/mistranslation"),
                       span(12, 13, "minor", "fluency/punctuation")], SOURCES[1]),  # 5 + 0.1
    ("A1", "A", "r2", [span(5, 15, "minor", "style/awkward")], SOURCES[1]),  # 1
    ("A2", "A", "r1", [], SOURCES[2]),  # 0
    ("A2", "A", "r2", [], SOURCES[2]),  # 0
    ("B1", "B", "r2", [span(3, 9, "major", "non-translation")], SOURCES[1]),  # 25
    ("B2", "B", "r1", [span(0, 4, "minor", "fluency/grammar"),
                       span(6, 8, "minor", "style/awkward")], SOURCES[2]),  # 1 + 1
    ("B2", "B", "r2", [span(2, 7, "major", "accuracy/omission")], SOURCES[2]),  # 5
]


@pytest.fixture
def answers():
    return answers_frame(ANSWERS)


def test_weights_follow_the_severity_unless_the_category_overrides_it():
    assert WMT("major", "accuracy/mistranslation") == 5
    assert WMT("minor", "fluency/punctuation") == 0.1
    assert WMT("major", "fluency/punctuation") == 5  # only minor punctuation is cheap
    assert WMT("minor", "non-translation") == 25
    assert WMT("critical", None) == 25


def test_a_severity_missing_from_the_weights_weighs_nothing():
    assert Weights(severity={"minor": 1})("major", None) == 0
    assert Weights(severity={"minor": 1}, category={"x": {"minor": 3}})("minor", "x") == 3


def test_segment_penalties_sum_the_weights_of_an_answers_spans(answers):
    scored = segment_penalties(answers, WMT)
    assert scored["penalty"].tolist() == pytest.approx([5.1, 1, 0, 0, 25, 2, 5])
    assert scored["errors"].tolist() == [2, 1, 0, 0, 1, 2, 1]


def test_mqm_scores_match_the_hand_computed_wmt_example(answers):
    table = mqm_scores(answers, WMT, n_boot=0).set_index("system")
    # Items average their raters first: A1 = (5.1 + 1) / 2, A2 = 0; B1 = 25, B2 = (2 + 5) / 2.
    assert table.loc["A", "mqm"] == pytest.approx((3.05 + 0) / 2)
    assert table.loc["B", "mqm"] == pytest.approx((25 + 3.5) / 2)
    # Per 100 source words: items' penalties over their words (10 + 5).
    assert table.loc["A", "mqm_per_100_words"] == pytest.approx(100 * 3.05 / 15)
    assert table.loc["B", "mqm_per_100_words"] == pytest.approx(100 * 28.5 / 15)
    assert table.loc["A", "rank"] == 1 and table.loc["B", "rank"] == 2
    assert table.loc["A", ["answers", "items", "workers", "errors"]].tolist() == [4, 2, 2, 3]
    # z: each rater's penalties standardised by that rater's mean and sd (n - 1).
    r1, r2 = [5.1, 0, 2], [1, 0, 25, 5]

    def z(value, rater):
        return (value - statistics.mean(rater)) / statistics.stdev(rater)

    a = ((z(5.1, r1) + z(1, r2)) / 2 + (z(0, r1) + z(0, r2)) / 2) / 2
    b = (z(25, r2) + (z(2, r1) + z(5, r2)) / 2) / 2
    assert table.loc["A", "mqm_z"] == pytest.approx(a)
    assert table.loc["B", "mqm_z"] == pytest.approx(b)
    assert table["ci_low"].isna().all()  # no resamples asked for


def test_mqm_intervals_resample_items_and_contain_the_estimate():
    rows = [(f"{s}{i}", s, "r1",
             [span(j, j + 1, "minor") for j in range(i % 3 if s == "A" else i % 5)], "w " * 10)
            for s in "AB" for i in range(40)]
    table = mqm_scores(answers_frame(rows), WMT, n_boot=500, seed=3).set_index("system")
    for system in "AB":
        row = table.loc[system]
        assert row["ci_low"] < row["mqm"] < row["ci_high"]
        assert row["per_100_ci_low"] < row["mqm_per_100_words"] < row["per_100_ci_high"]
        assert row["mqm_per_100_words"] == pytest.approx(10 * row["mqm"])  # 10 words each


def test_without_source_words_there_is_no_per_100_words_figure():
    table = mqm_scores(answers_frame([("i", "A", "r", [span(0, 2, "major")], None)]), WMT)
    assert table.loc[0, "mqm"] == 5
    assert table.loc[0, "mqm_per_100_words"] is None or pd.isna(table.loc[0,
                                                                         "mqm_per_100_words"])


def test_error_counts_per_system_by_severity_and_by_category(answers):
    severity = error_counts(answers, WMT, by="severity").set_index(["system", "severity"])
    assert severity["errors"].to_dict() == {("A", "major"): 1, ("A", "minor"): 2,
                                            ("B", "major"): 2, ("B", "minor"): 2}
    assert severity.loc[("A", "minor"), "per_answer"] == pytest.approx(2 / 4)
    assert severity.loc[("B", "major"), "per_answer"] == pytest.approx(2 / 3)
    category = error_counts(answers, WMT, by="category").set_index(["system", "category"])
    assert category.loc[("B", "style/awkward"), "errors"] == 1
    assert category.loc[("B", "non-translation"), "errors"] == 1
    assert len(category) == 3 + 4  # A: 3 categories, B: 4


def test_span_agreement_is_character_f1_pooled_over_pairs_of_workers(answers):
    table = span_agreement(answers, n_boot=0).set_index("severity", drop=False)
    overall = table[table["severity"].isna()].iloc[0]
    # A1: r1 marks {0..9, 12} (11), r2 {5..14} (10), both {5..9, 12} (6).
    # B2: r1 marks {0..3, 6, 7} (6), r2 {2..6} (5), both {2, 3, 6} (3). A2: both empty.
    assert overall["f1"] == pytest.approx(2 * (6 + 3) / (21 + 11))
    assert overall[["items", "pairs", "pairs_both_empty"]].tolist() == [3, 3, 1]
    # Minor: A1 {12} vs {5..14}: 1 shared of 1 + 10; B2 {0..3, 6, 7} vs nothing: 0 of 6.
    assert table.loc["minor", "f1"] == pytest.approx(2 * 1 / (11 + 6))
    # Major: never on the same characters.
    assert table.loc["major", "f1"] == 0


def test_identical_spans_agree_perfectly_and_a_lone_worker_gives_no_pairs():
    same = [span(2, 6, "minor")]
    rows = [("i", "A", "r1", same, None), ("i", "A", "r2", same, None),
            ("j", "A", "r1", [span(0, 1, "major")], None)]
    table = span_agreement(answers_frame(rows), n_boot=0)
    overall = table[table["severity"].isna()].iloc[0]
    assert overall["f1"] == 1 and overall["pairs"] == 1 and overall["items"] == 1


def test_span_agreement_intervals_resample_items():
    rows = []
    for i in range(30):
        rows += [(i, "A", "r1", [span(0, 10, "minor")], None),
                 (i, "A", "r2", [span(i % 10, 10, "minor")], None)]
    overall = span_agreement(answers_frame(rows), n_boot=300, seed=1).iloc[0]
    assert overall["ci_low"] < overall["f1"] < overall["ci_high"]


def test_words_are_runs_of_non_space_characters():
    assert count_words("  Ich  möchte\tSie\n alle ") == 4
    assert count_words(None) is None


# --- Real data: WMT 2020 TED en-de MQM (Freitag et al. 2021), imported as past human results --

MQM_TSV = SHARED / "realdata" / "translation_da" / "wmt-mqm_ted_ende_first200.tsv"
TAG, END_TAG = "<v>", "</v>"


def _read_mqm_tsv() -> pd.DataFrame:
    """One row per error (or one No-error row per segment and rater); QUOTE_NONE as SOURCE.md
    says; `<v>...</v>` in `target` marks the error's span."""
    frame = pd.read_csv(MQM_TSV, sep="\t", quoting=csv.QUOTE_NONE, dtype=str,
                        keep_default_na=False)
    frame["item"] = frame["system"] + "|" + frame["seg_id"]
    frame["plain"] = frame["target"].str.replace(TAG, "").str.replace(END_TAG, "")
    frame["start"] = frame["target"].str.find(TAG)
    frame["end"] = frame["target"].str.find(END_TAG) - len(TAG)
    return frame


def _mqm_campaign(owner, frame: pd.DataFrame):
    """A spans campaign with the file's categories and WMT's weights, its items (system,
    segment) and one past rater per `rater`, imported through judgments_import."""
    errors = frame[frame["severity"] != "No-error"]
    categories = sorted(errors["category"].str.lower().unique())
    schema = {"questions": [{
        "id": "mqm", "kind": "spans", "text": "Mark every error", "field": "target",
        "source_field": "source", "allow_overlap": True, "require_category": True,
        "severities": [{"value": "minor", "label": "Minor", "weight": 1},
                       {"value": "major", "label": "Major", "weight": 5}],
        "categories": [{"value": c, "label": c,
                        **({"weights": {"minor": 0.1}} if c == "fluency/punctuation" else {})}
                       for c in categories]}]}
    campaign = make_campaign(owner=owner, schema=schema, slug="wmt-mqm-ted")
    items = frame.drop_duplicates("item")
    lines = [json.dumps({"id": r.item, "system": r.system, "source": r.source,
                         "target": r.plain}) for r in items.itertuples()]
    items_import(campaign=campaign, content="\n".join(lines).encode(), filename="items.jsonl")
    rows = []
    for n, ((item, rater), group) in enumerate(frame.groupby(["item", "rater"], sort=True), 1):
        marked = [{"start": int(r.start), "end": int(r.end), "text": r.plain[r.start:r.end],
                   "severity": r.severity.lower(), "category": r.category.lower()}
                  for r in group.itertuples() if r.severity != "No-error"]
        rows.append(JudgmentRow(n, item, rater, repr({"mqm": marked})))
    judgments_import(campaign=campaign, rows=rows, platform="account")
    return campaign


@pytest.mark.django_db
def test_wmt_mqm_file_imported_as_a_spans_campaign_gives_its_per_system_mqm_scores(owner):
    require(MQM_TSV.parent)
    frame = _read_mqm_tsv()
    campaign = _mqm_campaign(owner, frame)
    ours = campaign_statistics(campaign=campaign, n_boot=0)["error_spans"]
    assert [q["question"] for q in ours] == ["mqm"]
    mqm = {r["system"]: r for r in ours[0]["mqm"]}

    # Independently, straight from the TSV: WMT's weights per row, summed per segment and
    # rater, averaged over raters per segment, then over segments per system.
    minor_punct = (frame["severity"] == "Minor") & (frame["category"] == "Fluency/Punctuation")
    frame["weight"] = np.select([frame["severity"] == "No-error", minor_punct,
                                 frame["severity"] == "Minor", frame["severity"] == "Major"],
                                [0.0, 0.1, 1.0, 5.0], np.nan)
    segments = frame.groupby(["system", "seg_id", "rater"], as_index=False).agg(
        weight=("weight", "sum"), source=("source", "first"))
    per_segment = segments.groupby(["system", "seg_id"], as_index=False).agg(
        weight=("weight", "mean"), source=("source", "first"))
    expected = per_segment.groupby("system")["weight"].mean()
    assert len(expected) == 14 and set(mqm) == set(expected.index)
    for system, value in expected.items():
        assert mqm[system]["mqm"] == pytest.approx(value), system
    words = per_segment.assign(words=per_segment["source"].str.split().str.len())
    sums = words.groupby("system")[["weight", "words"]].sum()
    for system, row in sums.iterrows():
        assert mqm[system]["mqm_per_100_words"] == pytest.approx(100 * row["weight"]
                                                                 / row["words"])
    # z: each rater's segment penalties standardised by that rater's mean and sd (n - 1).
    by_rater = segments.groupby("rater")["weight"]
    segments["z"] = ((segments["weight"] - by_rater.transform("mean"))
                     / by_rater.transform("std"))
    expected_z = segments.groupby(["system", "seg_id"])["z"].mean().groupby("system").mean()
    for system, value in expected_z.items():
        assert mqm[system]["mqm_z"] == pytest.approx(value), system
    best = expected.idxmin()
    assert mqm[best]["rank"] == 1
    # Error counts by severity, per system, as rows of the file.
    counted = frame[frame["severity"] != "No-error"].groupby(["system", "severity"]).size()
    ours_counts = {(r["system"], r["severity"]): r["errors"]
                   for r in ours[0]["errors_by_severity"]}
    assert ours_counts == {(s, v.lower()): n for (s, v), n in counted.items()}
