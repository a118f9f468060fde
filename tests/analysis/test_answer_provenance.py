"""The free-text flags: each rule at its threshold, short answers left alone, and the quality
table's counts, reasons and verdict."""
import pandas as pd
import pytest

from campaigns.analysis.answer_provenance import (
    MAX_CHARS_PER_SECOND,
    MIN_CHARS,
    MOSTLY_PASTED,
    TYPED_TOO_FAST,
    add_to_quality,
    answer_flags,
    flag_counts,
)


def record(chars=100, typed=0, pasted=0, pastes=0, ms=60_000):
    return {"chars": chars, "typed": typed, "pasted": pasted, "pastes": pastes, "ms": ms}


def test_half_or_more_of_an_answer_pasted_is_mostly_pasted():
    assert answer_flags(record(typed=51, pasted=49, pastes=1)) == []
    assert answer_flags(record(typed=50, pasted=50, pastes=1)) == [MOSTLY_PASTED]
    # Pasted and then cut down: never more than the answer's own length counts.
    assert answer_flags(record(chars=40, pasted=4000, pastes=1)) == [MOSTLY_PASTED]


def test_typing_above_200_words_a_minute_from_focus_to_save_is_too_fast():
    assert MAX_CHARS_PER_SECOND == pytest.approx(1000 / 60)
    assert answer_flags(record(typed=100, ms=6_000)) == []  # 16.7 characters a second
    assert answer_flags(record(typed=100, ms=5_900)) == [TYPED_TOO_FAST]
    # A script that sets the whole text in one event: all typed, no time at all.
    assert answer_flags(record(typed=100, ms=0)) == [TYPED_TOO_FAST]


def test_a_person_typing_at_record_speed_with_no_pause_is_not_flagged():
    # 150 words a minute, the fastest sustained typing on record, for a 300-character answer.
    seconds = 300 / (150 * 5 / 60)
    assert answer_flags(record(chars=300, typed=300, ms=int(seconds * 1000))) == []


def test_answers_shorter_than_the_minimum_are_never_flagged():
    assert answer_flags(record(chars=MIN_CHARS - 1, pasted=MIN_CHARS - 1, pastes=1)) == []
    assert answer_flags(record(chars=MIN_CHARS - 1, typed=MIN_CHARS - 1, ms=1)) == []
    assert answer_flags(record(chars=MIN_CHARS, pasted=MIN_CHARS, pastes=1)) == [MOSTLY_PASTED]


@pytest.mark.parametrize("bad", [None, [], "x", {"chars": "100", "pasted": "100"},
                                 {"chars": True, "pasted": True}])
def test_a_record_that_is_not_numbers_raises_nothing(bad):
    assert answer_flags(bad) == []


def test_counts_per_key_and_the_quality_table_gains_the_reasons():
    rows = [(1, {"summary": record(pasted=100, pastes=1), "q.reason": record(typed=100, ms=1)}),
            (1, {"summary": record(pasted=90, pastes=2)}),
            (2, {"summary": record(typed=100)}), (3, {}), (3, "not a dict")]
    counts = flag_counts(rows)
    assert counts == {1: {MOSTLY_PASTED: 2, TYPED_TOO_FAST: 1}}
    table = pd.DataFrame({"submission": [1, 2], "reasons": [[], ["gold accuracy 0%"]],
                          "flagged": [False, True]})
    out = add_to_quality(table, "submission", counts)
    assert list(out[MOSTLY_PASTED]) == [2, 0] and list(out[TYPED_TOO_FAST]) == [1, 0]
    assert out["reasons"][0] == ["2 free-text answers mostly pasted",
                                 "1 free-text answer typed faster than a person types"]
    assert out["reasons"][1] == ["gold accuracy 0%"]
    assert list(out["flagged"]) == [True, True]
    assert list(table["reasons"][0]) == []  # the input is left as it was
