"""Screening rules on intake questions: parsed with JSON-path errors, applied to answers."""
import pytest

from campaigns.schema import SchemaInvalid, parse_intake, parse_questions
from campaigns.schema.screening import answer_key, screening_failure

ADULT = {"id": "adult", "kind": "choice", "text": "Are you 18 or older?",
         "options": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]}
AGE = {"id": "age", "kind": "slider", "text": "Your age", "min": 0, "max": 120, "step": 1}
L1 = {"id": "l1", "kind": "choice", "text": "Your first language",
      "options": [{"value": v, "label": v} for v in ("de", "fr", "ar")]}
FLUENCY = {"id": "fluency", "kind": "likert", "text": "How fluent?",
           "points": [{"value": v, "label": str(v)} for v in range(1, 6)]}


def issues(data):
    with pytest.raises(SchemaInvalid) as caught:
        parse_intake(data, path="intake_questions")
    return {(i.path, i.message) for i in caught.value.issues}


def test_rules_are_set_aside_from_the_questions_and_parsed():
    questions, rules = parse_intake([{**ADULT, "eligible": ["yes"]},
                                     {**AGE, "eligible_min": 18, "eligible_max": 99},
                                     {**L1, "quota": {"de": 10, "fr": 10}}])
    assert [q.id for q in questions] == ["adult", "age", "l1"]
    assert [(r.question_id, r.eligible, r.eligible_min, r.eligible_max, r.quota)
            for r in rules] == [("adult", ("yes",), None, None, {}),
                                ("age", None, 18.0, 99.0, {}),
                                ("l1", None, None, None, {"de": 10, "fr": 10})]
    assert [q.id for q in parse_questions([{**ADULT, "eligible": ["yes"]}])] == ["adult"]


def test_a_likert_point_is_eligible_by_its_number_and_its_quota_by_its_text():
    _, [rule] = parse_intake([{**FLUENCY, "eligible": [4, 5], "quota": {"5": 2}}])
    assert rule.eligible == ("4", "5") and rule.quota == {"5": 2}
    assert screening_failure([rule], {"fluency": 5}) is None
    assert screening_failure([rule], {"fluency": 3}) == "fluency"


@pytest.mark.parametrize(("question", "expected"), [
    ({**ADULT, "eligible": ["maybe"]},
     ("intake_questions[0].eligible[0]", "'maybe' is not an answer to this question")),
    ({**ADULT, "eligible": []},
     ("intake_questions[0].eligible", "expected a non-empty list of answers")),
    ({**ADULT, "eligible_min": 18},
     ("intake_questions[0].eligible_min", "a choice question's answers are not numbers")),
    ({**AGE, "eligible_max": "old"}, ("intake_questions[0].eligible_max", "expected a number")),
    ({**AGE, "eligible_min": 60, "eligible_max": 18},
     ("intake_questions[0].eligible_min", "must not be above eligible_max")),
    ({**L1, "quota": {"en": 3}},
     ("intake_questions[0].quota.en", "'en' is not an answer to this question")),
    ({**L1, "quota": {"de": -1}}, ("intake_questions[0].quota.de",
                                   "expected a whole number of participants, 0 or more")),
    ({**L1, "quota": ["de"]},
     ("intake_questions[0].quota", 'expected an object {"<answer>": most participants}')),
])
def test_a_broken_rule_is_named_by_its_json_path(question, expected):
    assert expected in issues([question])


def test_an_unknown_setting_beside_the_rules_is_still_refused():
    assert ("intake_questions[0].eligibel", "unknown setting") in issues(
        [{**ADULT, "eligibel": ["yes"]}])


@pytest.mark.parametrize(("answers", "failed"), [
    ({"adult": "yes", "age": 30}, None),
    ({"adult": "no", "age": 30}, "adult"),
    ({"adult": "yes", "age": 17}, "age"),
    ({"adult": "yes", "age": 18}, None),          # bounds are inclusive
    ({"adult": "yes", "age": 99.0}, None),
    ({"adult": "yes", "age": 100}, "age"),
    ({"adult": "yes"}, None),                      # unanswered optional: nobody screened out
])
def test_the_first_failed_rule_names_the_question(answers, failed):
    _, rules = parse_intake([{**ADULT, "eligible": ["yes"]},
                             {**AGE, "required": False, "eligible_min": 18,
                              "eligible_max": 99}])
    assert screening_failure(rules, answers) == failed


def test_answers_compare_by_value_whatever_their_shape():
    assert answer_key({"value": "de", "order": ["fr", "de"]}) == "de"
    assert answer_key(3.0) == "3" and answer_key(3) == "3" and answer_key(2.5) == "2.5"
