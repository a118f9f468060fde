"""Schemas are validated as a whole, and every problem names its JSON path."""

import copy

from campaigns.schema import parse_questions, parse_schema, validate_schema
from campaigns.schema.base import AnswerInvalid
from tests.factories import (
    CONTINUATION_SCHEMA,
    RUBRIC_SCHEMA,
    SUMMARY_SCHEMA,
    TRANSLATION_SCHEMA,
)


def paths(schema):
    return {issue.path: issue.message for issue in validate_schema(schema)}


def test_the_example_schemas_of_every_kind_are_valid():
    for schema in (CONTINUATION_SCHEMA, SUMMARY_SCHEMA, RUBRIC_SCHEMA, TRANSLATION_SCHEMA):
        assert validate_schema(schema) == []


def test_it_reports_every_error_with_its_path_at_once():
    schema = copy.deepcopy(CONTINUATION_SCHEMA)
    del schema["questions"][0]["points"][2]["label"]
    schema["questions"][1]["kind"] = "stars"
    schema["questions"][2]["max_length"] = 0
    schema["display"][0]["colour"] = "red"
    found = paths(schema)
    assert "questions[0].points[2].label" in found
    assert "does not match" in found["questions[1]"]
    assert "questions[2].max_length" in found
    assert found["display[0].colour"] == "unknown setting"


def test_it_rejects_repeated_question_ids():
    schema = copy.deepcopy(CONTINUATION_SCHEMA)
    schema["questions"][1]["id"] = "coherence"
    assert "repeated: coherence" in paths(schema)["questions"]


def test_it_rejects_a_schema_without_questions_or_not_an_object():
    assert "questions" in paths({"display": [], "questions": []})
    assert validate_schema(["not", "an", "object"])[0].message == "the schema must be a JSON object"


def test_it_rejects_rubric_levels_that_do_not_cover_the_range():
    schema = copy.deepcopy(RUBRIC_SCHEMA)
    schema["questions"][0]["criteria"][8]["levels"].pop()
    assert (
        "levels must describe each value from 0 to 2" in paths(schema)["questions[0].criteria[8]"]
    )


def test_it_rejects_a_followup_for_an_unknown_option():
    schema = copy.deepcopy(SUMMARY_SCHEMA)
    schema["questions"][0]["followup"]["when"] = ["wrong"]
    assert "unknown options" in paths(schema)["questions[0]"]


def test_it_rejects_slider_anchors_outside_the_range():
    schema = copy.deepcopy(TRANSLATION_SCHEMA)
    schema["questions"][0]["anchors"][1]["value"] = 101
    assert "outside [min, max]" in paths(schema)["questions[0]"]


def test_intake_questions_are_parsed_as_a_bare_list_with_prefixed_paths():
    questions = parse_questions([{"id": "age", "kind": "text", "text": "Your age"}])
    assert questions[0].id == "age"
    try:
        parse_questions([{"id": "age", "kind": "text"}], path="intake_questions")
    except Exception as exc:  # noqa: BLE001
        assert "intake_questions[0].text" in str(exc)
    else:
        raise AssertionError("a question without text was accepted")


def test_item_fields_lists_displayed_and_segmented_fields_once():
    assert parse_schema(SUMMARY_SCHEMA).item_fields == ["story", "summary"]


def test_answer_errors_carry_every_path():
    exc = AnswerInvalid({"a": "x", "b.1": "y"})
    assert exc.errors == {"a": "x", "b.1": "y"}
    assert "b.1: y" in str(exc)


def test_it_names_the_repeated_option_value():
    schema = copy.deepcopy(TRANSLATION_SCHEMA)
    schema["questions"][1]["options"][1]["value"] = "typos"
    assert paths(schema)["questions[1]"] == "option values must be distinct; repeated: typos"
