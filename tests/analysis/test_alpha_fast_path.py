"""question_value_counts: the same counts, and so the same alpha, as the ratings path."""
import numpy as np
import pytest

from campaigns.analysis.agreement import alpha_from_counts, krippendorff_alpha, value_counts
from campaigns.selectors import analysis
from campaigns.selectors.analysis import annotations_frame, question_ratings, question_value_counts
from tests.analysis.helpers import add_item, annotate
from tests.factories import (
    CONTINUATION_SCHEMA,
    RUBRIC_SCHEMA,
    SUMMARY_SCHEMA,
    TRANSLATION_SCHEMA,
    make_campaign,
)

pytestmark = pytest.mark.django_db


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
    rated = analysis._agreement_input(frame[frame["question"].eq("lines") & frame["rated"]])
    table = analysis.agreement.agreement_table(rated, analysis._levels(rated), n_boot=0)
    assert alpha_from_counts(counts, domain, level) == table.loc[0, "alpha"]


def test_on_postgresql_fixed_scales_read_the_item_tallies_not_the_answers(owner, monkeypatch):
    campaign = _likert_study(owner)
    expected, _ = _old_counts(campaign, "coherence")

    def refuse(*args, **kwargs):
        raise AssertionError("the PostgreSQL fast path should not read the answers")

    monkeypatch.setattr(analysis, "question_ratings", refuse)
    monkeypatch.setattr(analysis, "_numeric_pairs_binary", refuse)
    counts, domain, _ = question_value_counts(campaign=campaign, question="coherence")
    assert np.array_equal(_units(counts), _units(expected[0]))
    assert np.array_equal(domain, expected[1])
    empty = make_campaign(owner=owner, schema=CONTINUATION_SCHEMA)
    counts, domain, level = question_value_counts(campaign=empty, question="coherence")
    assert counts.size == 0 and alpha_from_counts(counts, domain, level) is None
