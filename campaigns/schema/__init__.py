"""The task-schema engine: parse and validate schemas, validate answers against them.

Every entry point that accepts answers (worker pages, API, LLM-judge import, gold answers in
item import) calls `validate_answers`; every place that accepts a schema calls `parse_schema`.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Literal, Union

from django.utils.translation import gettext
from pydantic import Field, TypeAdapter, ValidationError, field_validator
from pydantic.fields import FieldInfo

from .base import AnswerInvalid, BaseQuestion, Strict
from .contract import Capability
from .kinds import REGISTRY, check_kind
from .per_output import PerOutput, repeated_class
from .per_turn import PerTurn
from .screening import ScreeningRule, parse_rule, split_screening

__all__ = [
    "AnswerInvalid",
    "BaseQuestion",
    "Capability",
    "DisplayField",
    "RoleLabels",
    "SchemaIssue",
    "SchemaInvalid",
    "TaskSchema",
    "parse_intake",
    "parse_questions",
    "parse_schema",
    "parse_schema_cached",
    "campaign_schema",
    "register_kind",
    "unregister_kind",
    "validate_answers",
    "validate_schema",
    "REGISTRY",
]



def _question_type() -> Any:
    """A question of any registered kind, told apart by its `kind`."""
    return Annotated[Union[tuple(REGISTRY.values())], Field(discriminator="kind")]  # noqa: UP007


Question = _question_type()


class DisplayField(Strict):
    field: str = Field(min_length=1)
    label: str = ""
    format: Literal["text", "markdown", "chat", "lines", "pre", "image"] = "text"
    # With format "image": the item field holding the image's text alternative (else the label).
    alt_field: str = ""
    prefix: str = ""
    suffix: str = ""
    help: str = ""
    split: Literal["list", "sentences", "newlines"] = "sentences"


def _repeated(question: BaseQuestion) -> BaseQuestion:
    """The question as parsed, wrapped when it is asked per output or per turn."""
    if isinstance(question, PerOutput):
        return question
    wrapper = PerTurn if question.for_each_turn else PerOutput if question.for_each_output \
        else None
    if wrapper is None:
        return question
    return repeated_class(type(question), wrapper).model_validate(question.model_dump())


def _check_unique_ids(questions: list[BaseQuestion]) -> None:
    ids = [q.id for q in questions]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"question ids must be unique; repeated: {', '.join(duplicates)}")


class RoleLabels(Strict):
    """What the page calls each role of a conversation (a `chat` field, chat outputs)."""

    system: str = Field(default="System", min_length=1, max_length=60)
    user: str = Field(default="User", min_length=1, max_length=60)
    assistant: str = Field(default="Assistant", min_length=1, max_length=60)
    tool: str = Field(default="Tool", min_length=1, max_length=60)


class TaskSchema(Strict):
    display: list[DisplayField] = Field(default_factory=list)
    questions: list[Question] = Field(min_length=1)
    # How the questions that judge an item's outputs show them.
    outputs_format: Literal["text", "markdown", "chat"] = "text"
    role_labels: RoleLabels = Field(default_factory=RoleLabels)
    # The writing direction of every displayed text: "auto" (from its first strong letter).
    text_direction: Literal["auto", "ltr", "rtl"] = "auto"

    @field_validator("questions")
    @classmethod
    def _unique_ids(cls, questions):
        _check_unique_ids(questions)
        return [_repeated(q) for q in questions]

    def question(self, question_id: str) -> BaseQuestion:
        for q in self.questions:
            if q.id == question_id:
                return q
        raise KeyError(question_id)

    @property
    def item_fields(self) -> list[str]:
        """Item data keys every imported row must carry (shown or segmented)."""
        fields = [d.field for d in self.display] + [d.alt_field for d in self.display
                                                    if d.alt_field]
        fields += [name for q in self.questions for name in q.item_fields()]
        return list(dict.fromkeys(fields))


_QUESTION_LIST = TypeAdapter(list[Question])


@dataclass(frozen=True)
class SchemaIssue:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class SchemaInvalid(Exception):
    def __init__(self, issues: list[SchemaIssue]):
        self.issues = issues
        super().__init__("; ".join(str(i) for i in issues))


def _path(loc: tuple) -> str:
    """Render a pydantic location as a JSON path, dropping the discriminator tags."""
    out = ""
    for i, part in enumerate(loc):
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in REGISTRY and i > 0 and isinstance(loc[i - 1], int):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out


def _issues(exc: ValidationError, prefix: str = "") -> list[SchemaIssue]:
    issues = []
    for err in exc.errors(include_url=False):
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown setting"
        path = _path(tuple(err["loc"]))
        issues.append(SchemaIssue(f"{prefix}{path}" if prefix else path, message))
    return issues


def parse_schema(data: Any) -> TaskSchema:
    """Parse a schema; raise SchemaInvalid listing every problem with its JSON path."""
    if not isinstance(data, dict):
        raise SchemaInvalid([SchemaIssue("", "the schema must be a JSON object")])
    try:
        return TaskSchema.model_validate(data)
    except ValidationError as exc:
        raise SchemaInvalid(_issues(exc)) from None


def validate_schema(data: Any) -> list[SchemaIssue]:
    """Every problem of a schema, with its JSON path; [] when it is valid."""
    try:
        parse_schema(data)
    except SchemaInvalid as exc:
        return exc.issues
    return []


def parse_questions(data: Any, *, path: str = "") -> list[BaseQuestion]:
    """Parse a bare list of questions (a campaign's intake questions, screening rules checked
    and set aside: parse_intake returns them)."""
    return parse_intake(data, path=path)[0]


def parse_intake(data: Any, *, path: str = "") -> tuple[list[BaseQuestion], list[ScreeningRule]]:
    """Parse intake questions and their screening rules (campaigns/schema/screening.py);
    raise SchemaInvalid listing every problem of either with its JSON path."""
    if not isinstance(data, list):
        raise SchemaInvalid([SchemaIssue(path, "expected a list of questions")])
    plain, settings = split_screening(data)
    try:
        questions = _QUESTION_LIST.validate_python(plain)
        _check_unique_ids(questions)
    except ValidationError as exc:
        raise SchemaInvalid(_issues(exc, prefix=path)) from None
    except ValueError as exc:
        raise SchemaInvalid([SchemaIssue(path, str(exc))]) from None
    rules, issues = [], []
    for i, rule_settings in settings.items():
        rule, problems = parse_rule(questions[i], rule_settings, f"{path}[{i}]")
        issues += [SchemaIssue(p, m) for p, m in problems]
        if rule is not None:
            rules.append(rule)
    if issues:
        raise SchemaInvalid(issues)
    return questions, rules


@lru_cache(maxsize=256)
def _parse_json(text: str) -> TaskSchema:
    return parse_schema(json.loads(text))


def parse_schema_cached(data: dict) -> TaskSchema:
    """parse_schema for hot paths (worker pages): the parsed schema is reused per content."""
    return _parse_json(json.dumps(data, sort_keys=True))


_BY_VERSION: dict[tuple, tuple[dict, TaskSchema]] = {}  # (campaign id, updated_at) -> kept
_BY_VERSION_LIMIT = 256


def campaign_schema(campaign) -> TaskSchema:
    """The campaign's parsed schema for the worker's pages and saves, found without turning the
    schema into JSON text again on every request.

    Kept per saved version of the campaign row (its id and updated_at, which every save moves),
    with a copy of the schema it was parsed from: a kept parse is served only while the
    campaign's schema still equals that copy, so a schema changed in memory or by an update()
    that leaves updated_at alone is looked up by its content again (parse_schema_cached).
    Equality does not tell 1 from 1.0 or true: only a change of that kind alone, written
    without moving updated_at, would still find the kept parse.
    """
    key = (campaign.pk, campaign.updated_at)
    kept = _BY_VERSION.get(key)
    if kept is not None and key[0] is not None and kept[0] == campaign.schema:
        return kept[1]
    parsed = parse_schema_cached(campaign.schema)
    if key[0] is not None:
        if len(_BY_VERSION) >= _BY_VERSION_LIMIT:
            _BY_VERSION.clear()
        _BY_VERSION[key] = (copy.deepcopy(campaign.schema), parsed)
    return parsed


def _rebuild() -> None:
    """Make TaskSchema and parse_questions take exactly the registered kinds."""
    global _QUESTION_LIST
    question = _question_type()
    TaskSchema.model_fields["questions"] = FieldInfo.from_annotated_attribute(
        list[question], Field(min_length=1))
    TaskSchema.model_rebuild(force=True)
    _QUESTION_LIST = TypeAdapter(list[question])
    _parse_json.cache_clear()  # schemas parsed before may now read differently
    _BY_VERSION.clear()


def register_kind(question_class: type[BaseQuestion]) -> type[BaseQuestion]:
    """Add a question kind (a BaseQuestion subclass with `kind: Literal["name"]`).

    Usable as a class decorator. The kind must keep the contract (KindIncomplete names what
    it misses); a name already taken by another class is refused.
    """
    name = check_kind(question_class)
    if REGISTRY.get(name, question_class) is not question_class:
        raise ValueError(f"question kind {name!r} is already registered")
    REGISTRY[name] = question_class
    _rebuild()
    return question_class


def unregister_kind(name: str) -> None:
    """Remove a kind added by register_kind() (tests add toy kinds and take them away)."""
    REGISTRY.pop(name)
    _rebuild()


def validate_answers(
    questions: TaskSchema | list[BaseQuestion],
    answers: Any,
    item_data: dict | None = None,
    *,
    partial: bool = False,
) -> dict[str, Any]:
    """Check answers against the questions (and the item, for per-line questions).

    Returns the cleaned answers (normalised types, rubric totals computed; unanswered optional
    questions left out). Raises AnswerInvalid with every problem keyed by question path; with
    `partial`, only the questions present are checked (gold answers name a subset).
    """
    question_list = questions.questions if isinstance(questions, TaskSchema) else questions
    if not isinstance(answers, dict):
        raise AnswerInvalid({"": "Answers must be an object keyed by question id."})
    errors: dict[str, str] = {}
    known = {q.id for q in question_list}
    for key in sorted(set(answers) - known):
        errors[str(key)] = f"Unknown question {key!r}."
    cleaned: dict[str, Any] = {}
    for q in question_list:
        raw = answers.get(q.id)
        if q.is_empty(raw):
            if q.required and not partial:
                errors[q.id] = gettext("Please answer this question.")
            continue
        try:
            cleaned[q.id] = q.validate_answer(raw, item_data)
        except AnswerInvalid as exc:
            errors.update(exc.errors)
    if errors:
        raise AnswerInvalid(errors)
    return cleaned
