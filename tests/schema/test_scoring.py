"""Scoring an answer against a control item's expected answers, per atomic part: numbers within
the item's tolerance (exact without one), text ignoring case. The worker's saves, the judges'
outputs and the judgment import all score through it (tests/work/test_answers.py: the saves)."""
import pytest

from campaigns.models import Item
from campaigns.schema import parse_schema
from campaigns.schema.scoring import control_passed
from tests.factories import RUBRIC_SCHEMA, TRANSLATION_SCHEMA

pytestmark = pytest.mark.django_db


def test_a_gold_answer_without_tolerance_must_match_exactly(owner):
    schema = parse_schema(TRANSLATION_SCHEMA)
    item = Item(gold={"acceptability": 70}, control="gold")
    assert control_passed(schema, item, {"acceptability": 70}) is True
    assert control_passed(schema, item, {"acceptability": 71}) is False
    assert control_passed(schema, item, {}) is False


def test_gold_rubric_scores_are_compared_per_criterion(owner):
    schema = parse_schema(RUBRIC_SCHEMA)
    criteria = {f"C{n}": 0 for n in range(1, 16)}
    gold = {"rubric": {**criteria, "total": 0}}
    item = Item(gold=gold, control="gold", gold_tolerance=0)
    assert control_passed(schema, item, {"rubric": {**criteria, "total": 0}}) is True
    assert control_passed(schema, item, {"rubric": {**criteria, "C3": 1, "total": 1}}) is False


def test_gold_flags_compare_the_selected_reasons(owner):
    schema = parse_schema(TRANSLATION_SCHEMA)
    item = Item(gold={"source_issues": {"selected": ["typos"]}}, control="gold")
    assert control_passed(schema, item, {"source_issues": {"selected": ["typos"]}}) is True
    assert control_passed(schema, item, {"source_issues": {"selected": ["nonsense"]}}) is False
