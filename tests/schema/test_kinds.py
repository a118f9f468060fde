"""The kind contract, held by every registered kind, and the kind test matrix.

Every test here is parametrized over the registry (plus the test suite's toy kind `hearts`),
reading each kind's worked example (`example`): a new kind enters the matrix by being
registered, with no edit here or in tests/factories.py.
"""
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar, Literal

import jsonschema
import pytest
from django.template.loader import get_template
from pydantic import BaseModel

from campaigns.judging.prompts import NotJudgeable, answer_format, answers_json_schema
from campaigns.schema import (
    REGISTRY,
    AnswerInvalid,
    Capability,
    parse_schema,
    register_kind,
    unregister_kind,
    validate_answers,
    validate_schema,
)
from campaigns.schema.base import BaseQuestion, ChartSpec
from campaigns.schema.contract import (
    CAPABILITIES,
    HOOKS,
    REQUIRED,
    CapabilityMissing,
    KindExample,
    KindIncomplete,
)
from campaigns.schema.kinds import check_registry, kind_name
from tests.factories import kind_item_data, kind_question, kind_schema
from tests.schema.test_toy_kind import hearts  # noqa: F401 (the toy kind's fixture)

BUILT_IN = sorted(REGISTRY)
DOCS = Path(__file__).resolve().parents[2] / "docs" / "schema.md"


@pytest.fixture(params=[*BUILT_IN, "hearts"])
def kind(request) -> str:
    """Each registered kind's name; the toy kind registered for the test."""
    if request.param == "hearts":
        request.getfixturevalue("hearts")
    return request.param


def _question(kind):
    return parse_schema(kind_schema(kind)).questions[0]


def _cleaned_examples(kind) -> list:
    question, item = _question(kind), kind_item_data(kind)
    return [validate_answers([question], {question.id: raw}, item)[question.id]
            for raw in REGISTRY[kind].example.valid]


# --- the matrix: every kind's worked example through the shared code -------------------------

def test_the_kinds_example_settings_make_a_valid_schema(kind):
    assert validate_schema(kind_schema(kind)) == []


def test_the_kinds_valid_examples_pass_and_clean_to_answers_that_pass_again(kind):
    question, item = _question(kind), kind_item_data(kind)
    assert REGISTRY[kind].example.valid
    for cleaned in _cleaned_examples(kind):
        assert validate_answers([question], {question.id: cleaned}, item) == {
            question.id: cleaned}


def test_the_kinds_invalid_examples_are_refused_next_to_the_question(kind):
    question, item = _question(kind), kind_item_data(kind)
    assert REGISTRY[kind].example.invalid
    for raw in REGISTRY[kind].example.invalid:
        with pytest.raises(AnswerInvalid) as refused:
            validate_answers([question], {question.id: raw}, item)
        assert all(path.split(".")[0] == question.id for path in refused.value.errors), raw


def test_the_kinds_drawn_answers_pass_its_own_validation(kind):
    question, item = _question(kind), kind_item_data(kind)
    for seed in range(20):
        answer = question.example_answer(item, random.Random(seed))
        validate_answers([question], {question.id: answer}, item)


def test_the_kind_names_a_template_that_exists(kind):
    get_template(REGISTRY[kind].template)
    if kind in BUILT_IN:
        assert REGISTRY[kind].template == f"campaigns/questions/{kind}.html"
        assert kind_name(REGISTRY[kind]) == kind


def test_a_judgeable_kinds_json_schema_takes_its_answers_and_its_prompt_names_it(kind):
    question, item = _question(kind), kind_item_data(kind)
    schema = parse_schema(kind_schema(kind))
    if not question.supports(Capability.LLM_JUDGE):
        with pytest.raises(NotJudgeable, match=question.id):
            answers_json_schema(schema, item)
        return
    for cleaned in _cleaned_examples(kind):
        # A judge gives the answer without what the server records (the shown order).
        judged = ({k: v for k, v in cleaned.items() if k != "order"}
                  if isinstance(cleaned, dict) else cleaned)
        jsonschema.validate({question.id: judged}, answers_json_schema(schema, item))
        jsonschema.validate({question.id: judged}, answers_json_schema(schema))
        assert "order" not in json.dumps(answers_json_schema(schema, item))
    assert question.text in question.prompt_section(item)
    line = next(line for line in answer_format(schema, item).splitlines()
                if line.startswith(f'- "{question.id}"'))
    assert line.endswith(f": {question.prompt_answer(item)}")


def test_the_kinds_atoms_are_among_its_parts(kind):
    question, item = _question(kind), kind_item_data(kind)
    for cleaned in _cleaned_examples(kind):
        parts = (question.parts_for(len(cleaned))
                 if question.supports(Capability.SIZED_BY_ANSWERS) else question.parts(item))
        assert {part for part, _ in question.atoms(cleaned)} <= set(parts)
    if not question.supports(Capability.ATOMIC_PARTS):
        assert question.parts() == [""] and question.path_parts() == [""]


def test_a_charted_kind_counts_its_answers_into_its_charts(kind):
    question = _question(kind)
    if not question.supports(Capability.DASHBOARD):
        with pytest.raises(CapabilityMissing):
            question.dashboard_charts()
        return
    charts = question.dashboard_charts()
    assert charts and all(isinstance(c, ChartSpec) and c.categories for c in charts)


# --- the contract: checked when a kind is registered -----------------------------------------

class Minimal(BaseQuestion):
    """A kind with the required entries only: every capability absent."""

    kind: Literal["minimal"]
    template: ClassVar[str] = "campaigns/questions/text.html"
    example: ClassVar = KindExample(settings={}, valid=["x"], invalid=[1])

    def validate_answer(self, raw: Any, item_data: dict | None) -> str:
        if not isinstance(raw, str):
            raise AnswerInvalid({self.id: "Expected text."})
        return raw

    def example_answer(self, item_data: dict | None, rng: random.Random) -> str:
        return "x"


def _variant(name: str = "Variant", **body) -> type:
    """A subclass of Minimal under another kind name, with `body` as its class namespace."""
    annotations = {"kind": Literal["variant"]}
    annotations.update({k: ClassVar for k in body if not callable(body[k])})
    return type(name, (Minimal,), {"__annotations__": annotations, "__module__": __name__,
                                   "__qualname__": name, **body})


def _refusal(question_class) -> str:
    with pytest.raises(KindIncomplete) as refused:
        register_kind(question_class)
    assert "variant" not in REGISTRY
    return str(refused.value)


def test_a_kind_with_the_required_entries_only_registers_and_supports_nothing():
    register_kind(Minimal)
    try:
        question = parse_schema(kind_schema("minimal")).questions[0]
        assert not any(question.supports(c) for c in Capability)
        assert question.atoms("x") == [("", "x")] and question.is_free_text("")
        assert not question.shuffles_options()
    finally:
        unregister_kind("minimal")


def test_a_kind_missing_a_required_method_is_refused_naming_the_kind_and_the_method():
    class NoExampleAnswer(BaseQuestion):
        kind: Literal["variant"]
        template: ClassVar[str] = "campaigns/questions/text.html"
        example: ClassVar = Minimal.example

        def validate_answer(self, raw, item_data):
            return raw

    message = _refusal(NoExampleAnswer)
    assert message.startswith("question kind 'variant' (NoExampleAnswer) breaks the kind "
                              "contract")
    assert "example_answer (required of every kind)" in message


def test_a_kind_without_a_template_or_an_example_is_refused():
    class Bare(BaseQuestion):
        kind: Literal["variant"]

        def validate_answer(self, raw, item_data):
            return raw

        def example_answer(self, item_data, rng):
            return "x"

    message = _refusal(Bare)
    assert "template (required" in message and "example (required" in message


def test_a_kind_declaring_a_capability_without_its_methods_is_refused():
    message = _refusal(_variant(capabilities=frozenset({Capability.LLM_JUDGE}),
                                prompt_section=lambda self, item_data: "x"))
    assert "declares llm_judge but does not define prompt_answer" in message
    assert "declares llm_judge but does not define json_schema" in message


def test_a_kind_defining_a_capabilitys_method_without_declaring_it_is_refused():
    message = _refusal(_variant(json_schema=lambda self, item_data: {}))
    assert "defines json_schema, which belongs to llm_judge, but does not declare" in message


def test_a_capability_needing_another_is_refused_without_it():
    message = _refusal(_variant(capabilities=frozenset({Capability.TALLIED})))
    assert "tallied needs agreement" in message
    assert "declares agreement" not in message


def test_agreement_needs_a_level_of_measurement():
    assert "declares agreement but does not define measurement" in _refusal(
        _variant(capabilities=frozenset({Capability.AGREEMENT})))
    assert "is not one of nominal" in _refusal(
        _variant(capabilities=frozenset({Capability.AGREEMENT}), measurement="loud"))


def test_start_up_checks_every_kind_in_the_registry(monkeypatch):
    broken = _variant(capabilities=frozenset({Capability.DASHBOARD}))
    monkeypatch.setitem(REGISTRY, "variant", broken)
    with pytest.raises(KindIncomplete, match="'variant'.*does not define dashboard_rows"):
        check_registry()
    monkeypatch.delitem(REGISTRY, "variant")
    check_registry()  # the built-in kinds keep the contract


def test_only_question_classes_with_one_kind_name_can_be_registered():
    class NotAQuestion(BaseModel):
        kind: str

    with pytest.raises(TypeError):
        register_kind(NotAQuestion)
    with pytest.raises(TypeError, match="Literal of one name"):
        kind_name(REGISTRY["likert"].__base__)


def test_every_capabilitys_methods_give_its_absence_on_the_base_class():
    question = Minimal(id="q", kind="minimal", text="Q")
    for spec in CAPABILITIES.values():
        for name in (*spec.methods, *spec.optional, *spec.attributes):
            assert hasattr(BaseQuestion, name) or name in BaseQuestion.model_fields or \
                name == "source_field", name
    with pytest.raises(CapabilityMissing, match="'minimal' does not declare the capability "
                                                "'llm_judge'"):
        question.prompt_section(None)
    counter = Counter()
    question.dashboard_count("x", counter, 2)
    assert counter == {"x": 2}


def test_the_docs_table_lists_every_required_entry_hook_and_capability():
    section = DOCS.read_text(encoding="utf-8").split("## Adding a question kind", 1)[1]
    for entry in (*REQUIRED, *HOOKS):
        assert f"`{entry.key}" in section, entry.key
    for capability, spec in CAPABILITIES.items():
        assert f"`{capability.value}`" in section, capability
        for name in (*spec.methods, *spec.optional, *spec.attributes):
            assert f"`{name}" in section, name


def test_kind_question_overrides_the_examples_settings():
    assert kind_question("likert", qid="q1", required=False)["required"] is False
