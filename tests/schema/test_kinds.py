"""What every built-in kind tells the shared code: example answers, registry, settings."""
import random

import pytest
from pydantic import BaseModel

from campaigns.schema import REGISTRY, parse_schema, register_kind, validate_answers
from campaigns.schema.kinds import kind_name
from tests.factories import (
    BWS_SCHEMA,
    CONTINUATION_SCHEMA,
    ESA_SCHEMA,
    MQM_SCHEMA,
    PAIRWISE_SCHEMA,
    RUBRIC_SCHEMA,
    SUMMARY_SCHEMA,
    TRANSLATION_SCHEMA,
)

SCHEMAS = [CONTINUATION_SCHEMA, SUMMARY_SCHEMA, RUBRIC_SCHEMA, TRANSLATION_SCHEMA,
           PAIRWISE_SCHEMA, BWS_SCHEMA, ESA_SCHEMA, MQM_SCHEMA]
ITEM = {"summary": "One. Two. Three.", "story": "x", "source": "Eins zwei.",
        "target": "One two, three four.",
        "outputs": [{"system": "a", "text": "One."}, {"system": "b", "text": "Two."}]}
THREE = {**ITEM, "outputs": [*ITEM["outputs"], {"system": "c", "text": "Three."}]}


def test_the_example_schemas_cover_every_built_in_kind():
    kinds = {q["kind"] for schema in SCHEMAS for q in schema["questions"]}
    assert kinds == set(REGISTRY)


@pytest.mark.parametrize("seed", range(20))
def test_every_kinds_example_answer_passes_its_own_validation(seed):
    rng = random.Random(seed)
    for data in SCHEMAS:
        schema, item = parse_schema(data), THREE if data is BWS_SCHEMA else ITEM  # 3+ outputs
        answers = {q.id: q.example_answer(item, rng) for q in schema.questions}
        validate_answers(schema, answers, item)


def test_every_kind_names_a_template_and_its_name_matches_the_registry():
    for name, cls in REGISTRY.items():
        assert kind_name(cls) == name
        assert cls.template == f"campaigns/questions/{name}.html"


def test_only_question_classes_with_one_kind_name_can_be_registered():
    class NotAQuestion(BaseModel):
        kind: str

    with pytest.raises(TypeError):
        register_kind(NotAQuestion)
    with pytest.raises(TypeError, match="Literal of one name"):
        kind_name(REGISTRY["likert"].__base__)
