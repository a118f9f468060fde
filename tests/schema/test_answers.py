"""One function validates answers for every question kind, against the schema and the item."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from campaigns.schema import AnswerInvalid, parse_schema, validate_answers
from tests.factories import (
    CONTINUATION_SCHEMA,
    RUBRIC_SCHEMA,
    SUMMARY_SCHEMA,
    TRANSLATION_SCHEMA,
)

CONTINUATION = parse_schema(CONTINUATION_SCHEMA)
SUMMARY = parse_schema(SUMMARY_SCHEMA)
RUBRIC = parse_schema(RUBRIC_SCHEMA)
TRANSLATION = parse_schema(TRANSLATION_SCHEMA)
STORY = {"story": "A story.", "summary": "He left. She stayed! It rained."}
FULL_RUBRIC = {f"C{n}": 1 for n in range(1, 16)}


def errors_of(schema, answers, item=None, **kw):
    with pytest.raises(AnswerInvalid) as info:
        validate_answers(schema, answers, item, **kw)
    return info.value.errors


# likert / text -----------------------------------------------------------------------------

def test_it_accepts_likert_values_given_as_numbers_or_numeric_text():
    cleaned = validate_answers(CONTINUATION, {"coherence": "4", "sentiment": 2.0})
    assert cleaned == {"coherence": 4, "sentiment": 2}


def test_it_rejects_a_likert_value_off_the_scale():
    assert "Choose one of 1, 2, 3, 4, 5" in errors_of(
        CONTINUATION, {"coherence": 6, "sentiment": 3})["coherence"]


def test_it_names_every_missing_required_question():
    assert errors_of(CONTINUATION, {}) == {
        "coherence": "Please answer this question.",
        "sentiment": "Please answer this question.",
    }


def test_it_rejects_unknown_questions():
    assert "Unknown question" in errors_of(
        CONTINUATION, {"coherence": 1, "sentiment": 1, "extra": 1})["extra"]


def test_optional_text_may_be_left_out_but_not_exceed_its_limit():
    assert "feedback" not in validate_answers(
        CONTINUATION, {"coherence": 1, "sentiment": 1, "feedback": "   "})
    assert "At most 50" in errors_of(
        CONTINUATION, {"coherence": 1, "sentiment": 1, "feedback": "x" * 51})["feedback"]


@given(st.one_of(st.integers(), st.floats(allow_nan=True), st.text(), st.booleans(), st.none(),
                 st.lists(st.integers())))
def test_likert_accepts_exactly_the_scale_points(value):
    answers = {"coherence": value, "sentiment": 3}
    try:
        cleaned = validate_answers(CONTINUATION, answers)
    except AnswerInvalid:
        assert value is None or value not in [1, 2, 3, 4, 5] or isinstance(value, bool) or (
            isinstance(value, str))
    else:
        assert cleaned["coherence"] in {1, 2, 3, 4, 5}
        assert not isinstance(value, bool)


# lines -------------------------------------------------------------------------------------

def test_it_needs_one_label_per_summary_line_counted_from_the_item():
    answers = {"lines": [{"label": "consistent"}] * 2, "summary_consistent": "consistent"}
    assert "Expected 3 line labels, got 2" in errors_of(SUMMARY, answers, STORY)["lines"]


def test_a_rewrite_is_required_exactly_for_inconsistent_lines():
    answers = {"lines": [{"label": "consistent"}, {"label": "inconsistent"}, {"label": "na"}],
               "summary_consistent": "inconsistent"}
    assert errors_of(SUMMARY, answers, STORY) == {
        "lines.2.rewrite": "Line 2: required for a line marked Inconsistent."}
    answers["lines"][1] = {"label": "inconsistent", "rewrite": "She left."}
    answers["lines"][0] = {"label": "consistent", "rewrite": "ignored"}
    cleaned = validate_answers(SUMMARY, answers, STORY)
    assert cleaned["lines"] == [{"label": "consistent"},
                                {"label": "inconsistent", "rewrite": "She left."},
                                {"label": "na"}]


def test_it_names_the_line_with_a_missing_or_unknown_label():
    answers = {"lines": [{"label": "consistent"}, {"label": ""}, {"label": "maybe"}],
               "summary_consistent": "consistent"}
    found = errors_of(SUMMARY, answers, STORY)
    assert found == {"lines.2.label": "Line 2: choose a label.",
                     "lines.3.label": "Line 3: choose one of consistent, inconsistent, na."}


def test_lines_given_as_a_list_in_the_item_are_taken_as_they_are():
    item = {"story": "s", "summary": ["One line.", "Two. Still two."]}
    answers = {"lines": ["consistent", "na"], "summary_consistent": "consistent"}
    assert validate_answers(SUMMARY, answers, item)["lines"] == [
        {"label": "consistent"}, {"label": "na"}]


@given(st.lists(st.sampled_from(["consistent", "inconsistent", "na"]), min_size=3, max_size=3),
       st.lists(st.text(max_size=5), min_size=3, max_size=3))
def test_rewrites_are_kept_only_and_always_for_inconsistent_lines(labels, rewrites):
    answers = {"lines": [{"label": la, "rewrite": rw} for la, rw in zip(labels, rewrites,
                                                                          strict=True)],
               "summary_consistent": "consistent"}
    needs = [n for n, (la, rw) in enumerate(zip(labels, rewrites, strict=True), start=1)
             if la == "inconsistent" and not rw.strip()]
    try:
        cleaned = validate_answers(SUMMARY, answers, STORY)
    except AnswerInvalid as exc:
        assert sorted(exc.errors) == [f"lines.{n}.rewrite" for n in needs]
    else:
        assert not needs
        for entry in cleaned["lines"]:
            assert ("rewrite" in entry) == (entry["label"] == "inconsistent")


# rubric ------------------------------------------------------------------------------------

def test_rubric_points_stay_within_each_criterions_own_range_and_total_is_computed():
    cleaned = validate_answers(RUBRIC, {"rubric": {**FULL_RUBRIC, "C9": 2}})
    assert cleaned["rubric"]["total"] == 16
    found = errors_of(RUBRIC, {"rubric": {**FULL_RUBRIC, "C1": 2, "C9": 3}})
    assert set(found) == {"rubric.C1", "rubric.C9"}
    assert "C1 takes 0 to 1 points" in found["rubric.C1"]


def test_rubric_accepts_judge_style_keys_and_float_points():
    answers = {"rubric": {f"C{n}": 1.0 for n in range(1, 16)}}
    assert validate_answers(RUBRIC, answers)["rubric"]["C3"] == 1


def test_rubric_rejects_a_missing_criterion_and_a_wrong_claimed_total():
    partial = dict(FULL_RUBRIC)
    del partial["C15"]
    assert "rubric.C15" in errors_of(RUBRIC, {"rubric": partial})
    assert "The total is 15" in errors_of(
        RUBRIC, {"rubric": {**FULL_RUBRIC, "total": 19}})["rubric.total"]


@given(st.dictionaries(st.sampled_from([f"C{n}" for n in range(1, 16)]),
                       st.integers(min_value=-1, max_value=3), min_size=15, max_size=15))
def test_rubric_total_is_the_sum_and_never_above_19(points):
    try:
        cleaned = validate_answers(RUBRIC, {"rubric": points})["rubric"]
    except AnswerInvalid as exc:
        bad = {k for k, v in points.items()
               if not 0 <= v <= (2 if k in ("C9", "C10", "C11", "C12") else 1)}
        assert {k.split(".")[1] for k in exc.errors} == bad
    else:
        assert cleaned["total"] == sum(points.values()) <= 19


# slider / flags ----------------------------------------------------------------------------

def test_an_unmoved_slider_is_unanswered():
    found = errors_of(TRANSLATION, {"acceptability": {"value": 50, "moved": False}})
    assert found == {"acceptability": "Please answer this question."}
    moved = validate_answers(TRANSLATION, {"acceptability": {"value": "73", "moved": True}})
    assert moved == {"acceptability": 73}


@given(st.floats(min_value=-1000, max_value=1000, allow_nan=False))
def test_slider_accepts_exactly_the_grid_in_range(value):
    try:
        cleaned = validate_answers(TRANSLATION, {"acceptability": value})
    except AnswerInvalid:
        assert not (0 <= value <= 100 and float(value).is_integer())
    else:
        assert 0 <= cleaned["acceptability"] <= 100


def test_flags_keep_schema_order_and_reject_unknown_reasons():
    cleaned = validate_answers(TRANSLATION, {
        "acceptability": 10, "source_issues": {"selected": ["nonsense", "typos"], "other": " x "}})
    assert cleaned["source_issues"] == {"selected": ["typos", "nonsense"], "other": "x"}
    assert "Unknown reason(s): rude" in errors_of(
        TRANSLATION, {"acceptability": 10, "source_issues": ["rude"]})["source_issues"]


def test_partial_validation_checks_only_the_named_questions():
    assert validate_answers(TRANSLATION, {"acceptability": 0}, partial=True) == {"acceptability": 0}
    assert "acceptability" in errors_of(TRANSLATION, {"acceptability": 500}, partial=True)
