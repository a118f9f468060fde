"""The question-kind contract: what every kind defines, and the capabilities it may declare.

A kind (a BaseQuestion subclass) must define the REQUIRED entries. Everything else is optional:
the HOOKS have a default that suits most kinds, and each CAPABILITY groups the methods of one
thing a kind may do ("can be judged by an LLM", "has atomic parts"). A kind lists what it does
in `capabilities`; the shared code asks `question.supports(Capability.X)` before it uses a
capability, and a kind without it gets the stated absence (a default, or a clear refusal)
instead of a NotImplementedError in the middle of a request.

campaigns.schema.kinds.check_kind() holds a kind to this table when it is registered (the
built-in kinds at import, others in register_kind()); docs/schema.md lists the same table and
tests/schema/test_kinds.py checks that the two agree.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Capability(StrEnum):
    ATOMIC_PARTS = "atomic_parts"
    SIZED_BY_ANSWERS = "sized_by_answers"
    AGREEMENT = "agreement"
    TALLIED = "tallied"
    JUDGES_OUTPUTS = "judges_outputs"
    SHUFFLES_OPTIONS = "shuffles_options"
    LLM_JUDGE = "llm_judge"
    JUDGED_BY_PARTS = "judged_by_parts"
    OPTION_VALUES = "option_values"
    DASHBOARD = "dashboard"
    PREFERENCES = "preferences"
    BEST_WORST = "best_worst"
    ERROR_SPANS = "error_spans"


@dataclass(frozen=True)
class Entry:
    """One method or class attribute of the contract: what it does and, when optional, what a
    kind that leaves it out gets."""

    name: str
    does: str
    default: str = ""

    @property
    def key(self) -> str:
        """The attribute's name (`validate_answer` of `validate_answer(raw, item_data)`)."""
        return self.name.split("(", 1)[0]


@dataclass(frozen=True)
class CapabilitySpec:
    """One optional capability: the methods (and class attributes) a kind that declares it
    must define, those it may define, and what a kind without it gets."""

    capability: Capability
    does: str
    absence: str
    methods: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    attributes: tuple[str, ...] = ()
    needs: tuple[Capability, ...] = ()


@dataclass(frozen=True)
class KindExample:
    """A kind's worked example: the settings of one question of it (besides id, kind and text),
    the item data it reads, raw answers it accepts and raw answers it refuses. The test
    factories build schemas and items from it, and the kind test matrix runs every kind's
    example through the shared code."""

    settings: dict[str, Any]
    valid: list[Any]
    invalid: list[Any]
    item: dict[str, Any] = field(default_factory=dict)


class KindIncomplete(TypeError):
    """A kind breaks the contract (raised at registration, so at start-up)."""


class CapabilityMissing(NotImplementedError):
    """A capability's method was called on a kind that does not declare the capability."""

    def __init__(self, question: Any, capability: Capability):
        self.capability = capability
        super().__init__(f"question kind {question.kind!r} does not declare the capability "
                         f"{capability.value!r}; check question.supports() first")


REQUIRED: tuple[Entry, ...] = (
    Entry("kind", "`Literal[\"<kind>\"]`: the name a schema gives the kind"),
    Entry("template", "the widget's template partial (given the question field as `f`)"),
    Entry("example", "a KindExample: settings, item data, valid and invalid answers"),
    Entry("validate_answer(raw, item_data)", "the cleaned answer, or AnswerInvalid"),
    Entry("example_answer(item_data, rng)",
          "a valid answer drawn with rng (simulated workers, benchmarks)"),
)

HOOKS: tuple[Entry, ...] = (
    Entry("script", "a static script loaded once per page that has the kind", "none"),
    Entry("is_empty(raw)", "whether a raw answer counts as unanswered",
          "None, \"\", [] and {} are empty"),
    Entry("form_value(post, prefix)", "the raw answer read from a submitted form",
          "the single field named prefix"),
    Entry("widget(value, item_data, errors)", "what the partial shows besides the question",
          "{\"value\": the value as text}"),
    Entry("widget_reads_item", "the unanswered widget depends on the item",
          "False: the blank widget is cached"),
    Entry("rates_one_text", "a question of it rates one text, so `for_each_output` may ask "
          "it once per output (campaigns/schema/per_output.py)", "False: refused"),
    Entry("answer_reads_item", "validate_answer() needs the item's data",
          "False: stored answers are rechecked per distinct answer"),
    Entry("part_errors", "errors sit next to their part, with a summary on the fieldset",
          "False: one error under the question"),
    Entry("item_fields()", "item data keys every imported item must carry", "none"),
    Entry("prepare_item(data)", "normalise an imported item; problems keyed by field",
          "the item as it is"),
    Entry("is_low_reference(part, value)",
          "a gold atom marks a deliberately degraded reference", "False"),
)

CAPABILITIES: dict[Capability, CapabilitySpec] = {spec.capability: spec for spec in (
    CapabilitySpec(
        Capability.ATOMIC_PARTS,
        "an answer splits into atomic parts: export columns `<id>.<part>`, csv-long rows, "
        "agreement units; sql_parts()/sql_atoms() let the COPY path write them, path_parts() "
        "names those the database reads as plain JSON lookups",
        "the whole answer is one part \"\" (column `<id>`), written by the COPY path and read "
        "as one JSON lookup",
        methods=("atoms", "parts"),
        optional=("sql_parts", "sql_atoms", "path_parts", "part_texts")),
    CapabilitySpec(
        Capability.SIZED_BY_ANSWERS,
        "its export columns depend on the longest exported answer (one set per line)",
        "the columns are parts()",
        methods=("parts_for",), needs=(Capability.ATOMIC_PARTS,)),
    CapabilitySpec(
        Capability.AGREEMENT,
        "its parts have a level of measurement (`measurement`, or part_measurement() per "
        "part): the statistics compute Krippendorff's alpha on them, except on parts "
        "is_free_text() names",
        "every part is free text: no agreement, no gold comparison",
        optional=("part_measurement", "is_free_text"), attributes=("measurement",)),
    CapabilitySpec(
        Capability.TALLIED,
        "a fixed scale with few values: agreement on its numeric parts reads the per-item "
        "tallies the database keeps",
        "agreement reads the answers",
        needs=(Capability.AGREEMENT,)),
    CapabilitySpec(
        Capability.JUDGES_OUTPUTS,
        "judges an item's several outputs: the page shows them in the assignment's order "
        "and record_order() stores that order in the answer",
        "the answer is stored as posted",
        methods=("record_order",)),
    CapabilitySpec(
        Capability.SHUFFLES_OPTIONS,
        "may show its options in a per-assignment order (shuffles_options() says whether "
        "this question does): the widget is reordered and the answer records the order",
        "options in the schema's order",
        methods=("shuffles_options", "shown_widget", "record_shown")),
    CapabilitySpec(
        Capability.LLM_JUDGE,
        "can be judged by an LLM: its section of the prompt, the line saying what value to "
        "give, and the JSON Schema of the answer (never the fields the server sets)",
        "a campaign with such a question cannot be judged: the prompt preview, the estimate "
        "and starting a run refuse it, naming the question",
        methods=("prompt_section", "prompt_answer", "json_schema")),
    CapabilitySpec(
        Capability.JUDGED_BY_PARTS,
        "an imported judge's dictionary may be keyed by this question's parts (a rubric's "
        "criteria); from_judge_parts() maps it to an answer",
        "a judge's keys must be question ids",
        methods=("from_judge_parts",), needs=(Capability.ATOMIC_PARTS,)),
    CapabilitySpec(
        Capability.OPTION_VALUES,
        "has option values a recorded migration can rename, in the schema and in every "
        "stored answer",
        "renaming an option value is refused (\"no option values\")",
        methods=("rename_value",), optional=("schema_with_value_renamed",)),
    CapabilitySpec(
        Capability.DASHBOARD,
        "the admin dashboard charts how its answers spread per system: rows read through "
        "the AnswerReader, counted by dashboard_count(), charted by dashboard_charts()",
        "no chart",
        methods=("dashboard_rows", "dashboard_charts"), optional=("dashboard_count",)),
    CapabilitySpec(
        Capability.PREFERENCES,
        "its answers are paired comparisons of systems: the statistics' pairwise_preference "
        "tables (win rates, Bradley-Terry)",
        "not in those tables",
        methods=("preferences",)),
    CapabilitySpec(
        Capability.BEST_WORST,
        "its answers pick the best and the worst of the systems shown: the statistics' "
        "best_worst tables",
        "not in those tables",
        methods=("best_worst",)),
    CapabilitySpec(
        Capability.ERROR_SPANS,
        "its answers mark error spans with a severity (and maybe a category): the "
        "statistics' error_spans tables (MQM, span agreement); weight() gives an error's "
        "MQM weight, source_field the field whose words normalise it",
        "not in those tables",
        methods=("error_spans", "span_labels", "weight"), attributes=("source_field",)),
)}


def capability_of(method: str) -> Capability | None:
    """The capability a method or class attribute belongs to (None: required or a hook)."""
    for spec in CAPABILITIES.values():
        if method in spec.methods or method in spec.optional or method in spec.attributes:
            return spec.capability
    return None
