"""Parsing a judge's raw output: a dict literal, never evaluated; keys mapped to criteria."""
import pytest

from campaigns.schema import parse_schema
from campaigns.services.judgments import OutputInvalid, judge_answers, parse_judge_output
from tests.factories import CONTINUATION_SCHEMA, RUBRIC_SCHEMA

RUBRIC = parse_schema(RUBRIC_SCHEMA)
SCORES = {str(n): 1 for n in range(1, 16)}


@pytest.mark.parametrize("text", [
    '{"1": 1, "2": 0}',
    "{1: 1.0, 2: 0}",
    '```python\n{"1": 1, "2": 0}\n```',
    '```\n{"1": 1, "2": 0}```',
    'Here is the evaluation:\n{"1": 1, "2": 0}\nLet me know if you need more.',
])
def test_it_finds_the_dict_in_plain_fenced_or_prose_output(text):
    parsed = parse_judge_output(text)
    assert {str(k): int(v) for k, v in parsed.items()} == {"1": 1, "2": 0}


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty"),
    ("I cannot score this.", "no {...} dictionary"),
    ("{'1': __import__('os').system('true')}", "does not parse"),
    ("{1: 1, 2: }", "does not parse"),
    ("{" * 10 + "}" * 10, "does not parse"),
    ("x" * 60_000, "longer than"),
])
def test_it_rejects_output_that_is_not_a_literal_dict(text, message):
    with pytest.raises(OutputInvalid, match=message):
        parse_judge_output(text)


def test_numeric_keys_name_rubric_criteria_by_position():
    answers = judge_answers(RUBRIC, {1: 1, "2": 0, "c3": 1, "C4": 0, "total": 2})
    assert answers == {"rubric": {"C1": 1, "C2": 0, "C3": 1, "C4": 0, "total": 2}}


@pytest.mark.parametrize(("parsed", "message"), [
    ({"16": 1}, "outside 1-15"),
    ({"0": 1}, "outside 1-15"),
    ({"clarity": 1}, "names no criterion"),
    ({"1": 1, "C1": 0}, "scored twice"),
])
def test_keys_that_name_no_criterion_are_refused(parsed, message):
    with pytest.raises(OutputInvalid, match=message):
        judge_answers(RUBRIC, parsed)


def test_keys_that_are_question_ids_are_taken_as_they_are():
    schema = parse_schema(CONTINUATION_SCHEMA)
    assert judge_answers(schema, {"coherence": 4, "sentiment": 2}) == {"coherence": 4,
                                                                        "sentiment": 2}
    with pytest.raises(OutputInvalid, match="not question ids"):
        judge_answers(schema, {"1": 4})
