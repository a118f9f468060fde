"""The analysis selector: the tidy frame, flagged workers, campaign_statistics end to end, and the
value counts that give the same alpha as the ratings path."""
import json

import numpy as np
import pytest

from campaigns.analysis import agreement
from campaigns.analysis.agreement import alpha_from_counts, krippendorff_alpha, value_counts
from campaigns.models import Worker
from campaigns.selectors.analysis import (
    FRAME_COLUMNS,
    annotations_frame,
    campaign_statistics,
    flagged_worker_ids,
    frames,
    question_ratings,
    question_value_counts,
    ratings,
)
from tests.analysis.helpers import add_item, annotate
from tests.factories import (
    CONTINUATION_SCHEMA,
    RUBRIC_SCHEMA,
    SUMMARY_SCHEMA,
    TRANSLATION_SCHEMA,
    make_campaign,
)

pytestmark = pytest.mark.django_db


# The analysis selector: the tidy frame, flagged workers, and campaign_statistics end to end.


def test_the_frame_has_one_row_per_atomic_judgment_with_item_and_worker_facts(owner):
    campaign = make_campaign(owner=owner, schema=CONTINUATION_SCHEMA)
    item = add_item(campaign, "x1", system="gpt2")
    annotate(campaign, "w1", item, {"coherence": 4, "sentiment": 2, "feedback": "=nice"},
             seconds=12.5)
    frame = annotations_frame(campaign=campaign)
    assert list(frame.columns) == FRAME_COLUMNS
    rows = frame.set_index("question")
    assert rows.loc["coherence", "value"] == 4.0 and rows.loc["coherence", "level"] == "ordinal"
    assert rows.loc["feedback", "value"] == "=nice" and not rows.loc["feedback", "rated"]
    assert set(frame["system"]) == {"gpt2"} and set(frame["external_id"]) == {"x1"}
    assert set(frame["seconds"]) == {12.5} and set(frame["platform"]) == {"link"}
    assert frame["worker_name"].iloc[0].startswith("w_")  # pseudonymous, not the platform id


def test_lines_and_flags_go_through_their_atoms(owner):
    summary = make_campaign(owner=owner, schema=SUMMARY_SCHEMA)
    item = add_item(summary, "s1", data={"story": "s", "summary": ["One.", "Two."]})
    annotate(summary, "w1", item, {"lines": [{"label": "consistent"},
                                             {"label": "inconsistent", "rewrite": "Fixed."}],
                                   "summary_consistent": "inconsistent"})
    frame = annotations_frame(campaign=summary)
    parts = dict(zip(frame["part"], zip(frame["value"], frame["level"], strict=True),
                     strict=True))
    assert parts["1.label"] == ("consistent", "nominal")
    assert parts["2.rewrite"] == ("Fixed.", None)
    assert parts[""] == ("inconsistent", "nominal")

    translation = make_campaign(owner=owner, schema=TRANSLATION_SCHEMA)
    item = add_item(translation, "t1")
    annotate(translation, "w1", item, {"acceptability": 62.5,
                                       "source_issues": {"selected": ["typos"], "other": "odd"}})
    frame = annotations_frame(campaign=translation).set_index(["question", "part"])
    assert frame.loc[("acceptability", ""), "value"] == 62.5
    assert frame.loc[("acceptability", ""), "level"] == "interval"
    assert frame.loc[("source_issues", "typos"), "value"] == 1
    assert frame.loc[("source_issues", "other"), "rated"] == False  # noqa: E712


def test_gold_items_carry_expected_atoms_and_low_slider_gold_is_a_bad_reference(owner):
    campaign = make_campaign(owner=owner, schema=TRANSLATION_SCHEMA)
    bad = add_item(campaign, "bad", control="gold", gold={"acceptability": 0}, tolerance=25)
    check = add_item(campaign, "att", control="attention", gold={"acceptability": 100},
                     tolerance=10)
    annotate(campaign, "w1", bad, {"acceptability": 10})
    annotate(campaign, "w1", check, {"acceptability": 95})
    frame = annotations_frame(campaign=campaign).set_index("external_id")
    assert frame.loc["bad", "gold"] == 0 and frame.loc["bad", "bad_reference"]
    assert frame.loc["att", "gold"] == 100 and not frame.loc["att", "bad_reference"]


def _study(owner):
    """Three careful workers who agree, one who fails two attention checks, and a judge."""
    campaign = make_campaign(owner=owner, schema=CONTINUATION_SCHEMA)
    items = [add_item(campaign, f"i{n}", system="A" if n < 4 else "B") for n in range(8)]
    checks = [add_item(campaign, f"att{n}", control="attention", gold={"coherence": 2})
              for n in range(2)]
    for worker in ("w1", "w2", "w3"):
        for n, item in enumerate(items):
            annotate(campaign, worker, item, {"coherence": 5 if n < 4 else 2,
                                              "sentiment": 1 + n % 5})
        for check in checks:
            annotate(campaign, worker, check, {"coherence": 2, "sentiment": 3}, passed=True)
    for n, item in enumerate(items):
        annotate(campaign, "careless", item, {"coherence": 1 if n < 4 else 5, "sentiment": 3})
    for check in checks:
        annotate(campaign, "careless", check, {"coherence": 4, "sentiment": 3}, passed=False)
    for n, item in enumerate(items):
        annotate(campaign, "gpt-4", item, {"coherence": 5 if n < 2 else 2, "sentiment": 3},
                 platform="llm")
    return campaign


def test_flagged_workers_are_found_and_excluding_them_shows_what_changes(owner):
    campaign = _study(owner)
    careless = Worker.objects.get(platform_id="careless")
    assert flagged_worker_ids(campaign=campaign) == {careless.pk}

    full = campaign_statistics(campaign=campaign, n_boot=100)
    assert full["counts"]["flagged_workers"] == 1 and full["counts"]["judges"] == ["gpt-4"]
    coherence = {r["question"]: r for r in full["agreement"] if r["subset"] is None}["coherence"]
    assert coherence["n_raters"] == 4 and coherence["alpha"] < 0.5

    kept = campaign_statistics(campaign=campaign, exclude_flagged=True, n_boot=100)
    coherence = {r["question"]: r for r in kept["agreement"] if r["subset"] is None}["coherence"]
    assert coherence["n_raters"] == 3 and coherence["alpha"] == pytest.approx(1.0)
    change = {r["question"]: r for r in kept["changes"]["agreement"]}["coherence"]
    assert change["alpha_change"] > 0.5 and change["n_raters_all"] == 4
    assert kept["counts"]["annotations_used"] < kept["counts"]["annotations"]
    assert [r["system"] for r in kept["ranking"] if r["question"] == "coherence"] == ["A", "B"]
    judge = {r["question"]: r for r in kept["judges"]}["coherence"]
    assert judge["exact_agreement"] == pytest.approx(6 / 8)
    assert judge["mean_difference"] == pytest.approx(2 * (2 - 5) / 8)
    json.dumps(kept)  # JSON-ready as it is
    careless_row = next(r for r in kept["quality"] if r["flagged"])
    assert careless_row["attention_failures"] == 2


def test_an_empty_campaign_has_empty_tables(owner):
    statistics = campaign_statistics(campaign=make_campaign(owner=owner))
    assert statistics["agreement"] == [] and statistics["quality"] == []
    assert statistics["judges"] == [] and statistics["counts"]["annotations"] == 0
    json.dumps(statistics)


TRICKY_SCHEMA = {
    "display": [{"field": "prompt", "label": "Prompt"}],
    "questions": [
        {"id": "pick", "kind": "choice", "text": "Pick",
         "options": [{"value": v, "label": v} for v in ("t", "01", "1", "a,b")]},
        {"id": "note", "kind": "text", "text": "Note", "required": False},
    ],
}


@pytest.mark.parametrize("value", ["t", "01", "1", "a,b"])
def test_nominal_values_and_free_text_come_back_exactly_as_stored(owner, value):
    campaign = make_campaign(owner=owner, schema=TRICKY_SCHEMA)
    note = 'say "hi",\nthen \\N; leave'
    annotate(campaign, "w1", add_item(campaign, "x"), {"pick": value, "note": note}, seconds=None)
    annotate(campaign, "w2", add_item(campaign, "y"), {"pick": value})
    frame = annotations_frame(campaign=campaign)
    assert frame[frame.question == "pick"]["value"].tolist() == [value, value]
    assert frame[frame.question == "note"]["value"].tolist() == [note]
    assert frame["control_passed"].tolist() == [None] * 3
    assert frame[frame.question == "note"]["seconds"].isna().all()


def test_question_ratings_are_the_human_ratings_of_regular_items_only(owner):
    campaign = _study(owner)
    ratings = question_ratings(campaign=campaign, question="coherence")
    frame = annotations_frame(campaign=campaign)
    expected = frame[frame.question.eq("coherence") & frame.control.eq("")
                     & frame.platform.ne("llm")][["item", "worker", "value"]]
    assert len(ratings) == 32
    assert sorted(map(tuple, ratings.to_numpy().tolist())) == sorted(
        map(tuple, expected.to_numpy().tolist()))
    assert ratings["value"].dtype == float


def test_each_summary_line_is_its_own_unit_of_agreement(owner):
    campaign = make_campaign(owner=owner, schema=SUMMARY_SCHEMA)
    labels = {"w1": [["consistent", "inconsistent"], ["consistent", "consistent"]],
              "w2": [["consistent", "inconsistent"], ["inconsistent", "consistent"]]}
    items = [add_item(campaign, f"s{n}", data={"story": "s", "summary": ["One.", "Two."]})
             for n in range(2)]
    for worker, per_item in labels.items():
        for item, lines in zip(items, per_item, strict=True):
            annotate(campaign, worker, item, {
                "lines": [{"label": v, **({"rewrite": "R."} if v == "inconsistent" else {})}
                          for v in lines], "summary_consistent": "consistent"})
    rows = {(r["question"], r["part"]): r for r in
            campaign_statistics(campaign=campaign, n_boot=0)["agreement"]}
    assert ("lines", "label") in rows and ("lines", "1.label") not in rows
    assert rows[("lines", "label")]["n_items"] == 4  # 2 items x 2 lines
    assert rows[("lines", "label")]["level"] == "nominal"


def test_ids_with_double_underscores_still_reach_the_frame(owner):
    schema = {"display": [{"field": "prompt"}],
              "questions": [{"id": "fluency__v2", "kind": "likert", "text": "Fluent?",
                             "points": [{"value": 1, "label": "no"},
                                        {"value": 2, "label": "yes"}]}]}
    campaign = make_campaign(owner=owner, schema=schema)
    annotate(campaign, "w1", add_item(campaign, "x"), {"fluency__v2": 2})
    frame = annotations_frame(campaign=campaign)
    assert frame[["question", "value", "level"]].values.tolist() == [
        ["fluency__v2", 2.0, "ordinal"]]
    assert isinstance(frame["value"].iloc[0], float)


def test_a_judge_only_campaign_gets_the_rater_tables_from_its_judges(owner):
    campaign = make_campaign(owner=owner, schema=CONTINUATION_SCHEMA)
    items = [add_item(campaign, f"i{n}", system="A" if n < 6 else "B") for n in range(12)]
    for judge, shift in (("gpt-4", 0), ("claude", 1)):
        for n, item in enumerate(items):
            annotate(campaign, judge, item, {"coherence": min(5, 1 + n % 4 + shift),
                                             "sentiment": 3}, platform="llm")
    result = campaign_statistics(campaign=campaign, n_boot=0)
    assert result["figures_from"] == "llm_judges"
    assert {r["system"] for r in result["system_scores"]} == {"A", "B"}
    pooled = [r for r in result["agreement"] if r["subset"] is None]
    assert {r["question"] for r in pooled} >= {"coherence"}
    assert result["comparisons"] and result["judges"] == []


# question_value_counts: the same counts, and so the same alpha, as the ratings path.


def _likert_study(owner):
    """Four workers, some ratings missing, an attention item and an LLM judge to leave out."""
    campaign = make_campaign(owner=owner, schema=CONTINUATION_SCHEMA)
    items = [add_item(campaign, f"i{n}") for n in range(7)]
    check = add_item(campaign, "att", control="attention", gold={"coherence": 1})
    for w in range(4):
        for n, item in enumerate(items):
            if (n + w) % 5 == 0:
                continue  # a missing rating
            annotate(campaign, f"w{w}", item, {"coherence": 1 + (n * 3 + w) % 5,
                                               "sentiment": 1 + n % 5})
        annotate(campaign, f"w{w}", check, {"coherence": 5, "sentiment": 5})
    for item in items:
        annotate(campaign, "judge", item, {"coherence": 5, "sentiment": 1}, platform="llm")
    annotate(campaign, "w0", add_item(campaign, "lone"), {"coherence": 2, "sentiment": 2})
    return campaign


def _old_counts(campaign, question, part=""):
    ratings = question_ratings(campaign=campaign, question=question, part=part)
    numeric = ratings["value"].dtype.kind == "f"
    return value_counts(ratings["item"].to_numpy(), ratings["value"].to_numpy(),
                        numeric=numeric), ratings


def _units(counts):
    """The rows of a counts matrix in a canonical order: the fast paths may order units
    differently (alpha does not depend on their order)."""
    return counts[np.lexsort(counts.T[::-1])] if counts.size else counts


def _assert_same(campaign, question, part="", level="ordinal"):
    (old, old_domain), ratings = _old_counts(campaign, question, part)
    counts, domain, found = question_value_counts(campaign=campaign, question=question,
                                                  part=part)
    assert found == level
    assert np.array_equal(_units(counts), _units(old)) and np.array_equal(domain, old_domain)
    before = krippendorff_alpha(ratings["item"], ratings["worker"], ratings["value"],
                                level=level, n_boot=0)
    assert alpha_from_counts(counts, domain, found) == pytest.approx(before.alpha, abs=1e-12)
    return counts


def test_likert_counts_and_alpha_match_the_ratings_path(owner):
    campaign = _likert_study(owner)
    counts = _assert_same(campaign, "coherence")
    assert counts.shape == (7, 5) and counts.sum() == 23  # no control item, judge or lone rating
    _assert_same(campaign, "sentiment")


def test_rubric_criteria_slider_and_choice_match_the_ratings_path(owner):
    rubric = make_campaign(owner=owner, schema=RUBRIC_SCHEMA)
    for n in range(4):
        item = add_item(rubric, f"r{n}")
        for w in range(3):
            annotate(rubric, f"w{w}", item,
                     {"rubric": {f"C{c}": (n + w + c) % 2 for c in range(1, 16)}})
    _assert_same(rubric, "rubric", "C7")
    _assert_same(rubric, "rubric", "C9")

    slider = make_campaign(owner=owner, schema=TRANSLATION_SCHEMA)
    for n in range(4):
        item = add_item(slider, f"t{n}")
        for w in range(3):
            annotate(slider, f"w{w}", item, {"acceptability": 12.5 * (n + w)})
    _assert_same(slider, "acceptability", level="interval")

    summary = make_campaign(owner=owner, schema=SUMMARY_SCHEMA)
    for n in range(4):
        item = add_item(summary, f"s{n}")
        for w in range(3):
            annotate(summary, f"w{w}", item, {"summary_consistent": (
                "consistent" if (n + w) % 3 else "inconsistent")})
    _assert_same(summary, "summary_consistent", level="nominal")


def test_each_line_is_its_own_unit_as_in_the_agreement_table(owner):
    campaign = make_campaign(owner=owner, schema=SUMMARY_SCHEMA)
    for n in range(3):
        item = add_item(campaign, f"s{n}", data={"story": "s", "summary": ["One.", "Two."]})
        for w in range(2):
            labels = ["consistent", "inconsistent" if (n + w) % 2 else "consistent"]
            annotate(campaign, f"w{w}", item, {
                "lines": [{"label": label} if label == "consistent" else
                          {"label": label, "rewrite": "Fixed."} for label in labels],
                "summary_consistent": "consistent"})
    counts, domain, level = question_value_counts(campaign=campaign, question="lines",
                                                  part="label")
    assert level == "nominal" and counts.shape[0] == 6  # 3 items x 2 lines
    frame = annotations_frame(campaign=campaign)
    rated = frames._agreement_input(frame[frame["question"].eq("lines") & frame["rated"]])
    table = agreement.agreement_table(rated, frames._levels(rated), n_boot=0)
    assert alpha_from_counts(counts, domain, level) == table.loc[0, "alpha"]


def test_on_postgresql_fixed_scales_read_the_item_tallies_not_the_answers(owner, monkeypatch):
    campaign = _likert_study(owner)
    expected, _ = _old_counts(campaign, "coherence")

    def refuse(*args, **kwargs):
        raise AssertionError("the PostgreSQL fast path should not read the answers")

    monkeypatch.setattr(ratings, "question_ratings", refuse)
    monkeypatch.setattr(ratings, "_numeric_pairs_binary", refuse)
    counts, domain, _ = question_value_counts(campaign=campaign, question="coherence")
    assert np.array_equal(_units(counts), _units(expected[0]))
    assert np.array_equal(domain, expected[1])
    empty = make_campaign(owner=owner, schema=CONTINUATION_SCHEMA)
    counts, domain, level = question_value_counts(campaign=empty, question="coherence")
    assert counts.size == 0 and alpha_from_counts(counts, domain, level) is None
