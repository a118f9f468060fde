"""The question-kind interface: BaseQuestion (the contract's defaults and absences), the errors
a kind raises and the helpers kinds share."""
from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .contract import Capability, CapabilityMissing, KindExample

ID_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"
FIELD_PREFIX = "q-"
MeasurementLevel = Literal["nominal", "ordinal", "interval", "ratio"]


class AnswerInvalid(Exception):
    """A worker's (or judge's) answers break the schema; `errors` maps a path to a message.

    Paths are the question id, or the question id and a part (`lines.3.rewrite`,
    `rubric.C7`), so a page can show each message next to the control at fault.
    """

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


class JudgeOutputInvalid(ValueError):
    """An LLM judge's dictionary does not fit the question it is mapped to."""


@dataclass(frozen=True)
class ChartSpec:
    """One dashboard distribution of a question.

    `categories` are (counter key, axis label) pairs; `suffix` is appended to the question id
    (a second chart of the same question); with `mean_of`, each bar is the counter's value
    divided by counter[mean_of] (an average score) instead of a count.
    """

    title: str
    categories: list[tuple[Any, str]]
    suffix: str = ""
    mean_of: str | None = None


class AnswerReader(Protocol):
    """What the dashboard offers a kind to read its answers: rows (system, value, how many)."""

    def values(self, question_id: str, part: str = "") -> list[tuple[str, Any, int]]:
        """The database counts each distinct value of the answer (or of one key of it)."""

    def sums(self, question_id: str, parts: list[str]) -> list[tuple[str, dict, int]]:
        """Per system, the sum of each numeric key ({part: sum}) and the number of answers."""

    def answers(self, question_id: str) -> Any:
        """Every answer, streamed, each with n = 1."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Option(Strict):
    value: str = Field(min_length=1, max_length=100)
    label: str = Field(min_length=1)
    description: str = ""


class Point(Strict):
    value: int
    label: str = Field(min_length=1)
    description: str = ""


class BaseQuestion(Strict):
    """Fields every question kind has; a kind subclasses it with its own settings.

    The contract (campaigns/schema/contract.py): a kind must define `kind`, `template`,
    `example`, validate_answer() and example_answer(); the hooks below have defaults; every
    other method belongs to one capability, which the kind lists in `capabilities` and the
    shared code asks about with supports(). A capability's methods here give its absence.
    """

    id: str = Field(pattern=ID_PATTERN)
    kind: str
    text: str = Field(min_length=1)
    required: bool = True
    help: str = ""
    # Asked once per output of the item, each under its output (campaigns/schema/per_output.py),
    # or once per turn of one role of a conversation (campaigns/schema/per_turn.py): the item
    # field `chat_field` holds [{"role", "content"}, ...]; `turn: "last"` asks of the final
    # assistant turn only.
    for_each_output: bool = False
    for_each_turn: Literal["assistant", "user"] | None = None
    turn: Literal["last"] | None = None
    chat_field: str = Field(default="messages", min_length=1)

    # --- required of every kind (checked when the kind is registered) ----------------------
    # The widget partial (given the QuestionField as `f`).
    template: ClassVar[str] = ""
    # The worked example the test factories and the kind test matrix use.
    example: ClassVar[KindExample | None] = None
    # What the kind can do beyond the required (see contract.CAPABILITIES).
    capabilities: ClassVar[frozenset[Capability]] = frozenset()

    @classmethod
    def supports(cls, capability: Capability) -> bool:
        """Whether this kind declares `capability` (then its methods are defined)."""
        return capability in cls.capabilities

    def validate_answer(self, raw: Any, item_data: dict | None) -> Any:
        """Return the cleaned answer or raise AnswerInvalid. `raw` is never None here."""
        raise NotImplementedError  # every kind defines it (checked at registration)

    def example_answer(self, item_data: dict | None, rng: random.Random) -> Any:
        """A valid answer, drawn with `rng` (simulated workers in tests and benchmarks)."""
        raise NotImplementedError  # every kind defines it (checked at registration)

    # --- hooks: defaults most kinds keep ------------------------------------------------------
    # The widget's static script, if any.
    script: ClassVar[str] = ""
    # Whether the unanswered widget depends on the item (then it is never cached blank).
    widget_reads_item: ClassVar[bool] = False
    # Whether errors of parts sit next to their part, with a summary on the fieldset.
    part_errors: ClassVar[bool] = False
    # Whether validate_answer() needs the item's data (then stored answers are rechecked per
    # item when an answered question changes, not per distinct answer).
    answer_reads_item: ClassVar[bool] = False
    # Whether a question of the kind rates one text, so it can be asked once per output.
    rates_one_text: ClassVar[bool] = False

    @model_validator(mode="after")
    def _per_output_allowed(self):
        if self.turn == "last" and self.for_each_turn in (None, "assistant"):
            object.__setattr__(self, "for_each_turn", "assistant")
        elif self.turn == "last":
            raise ValueError('turn "last" asks about the final assistant turn: for_each_turn '
                             'must be "assistant"')
        repeated = [s for s in ("for_each_output", "for_each_turn") if getattr(self, s)]
        if len(repeated) > 1:
            raise ValueError("a question is asked per output or per turn, not both")
        if repeated and not self.rates_one_text:
            raise ValueError(f"{repeated[0]} needs a question that rates one text; a "
                             f"{self.kind} question does not")
        if repeated and self.shuffles_options():
            raise ValueError(f"{repeated[0]} cannot be combined with shuffle_options")
        return self

    def is_empty(self, raw: Any) -> bool:
        """Whether `raw` counts as 'not answered' (then `required` decides)."""
        return raw is None or raw == "" or raw == [] or raw == {}

    def form_value(self, post: Any, prefix: str) -> Any:
        """Read this question's raw answer from a submitted form (a QueryDict)."""
        value = post.get(prefix)
        return None if value in (None, "") else value

    def free_text_input(self, suffix: str) -> bool:
        """Is the form field `field_name(id) + suffix` a text a person writes (an answer, a
        rewrite, a reason), whose provenance the page records (pages/answer_provenance.py)?"""
        return False

    def widget(self, value: Any, item_data: dict | None, errors: dict[str, str]) -> dict:
        """What the template shows besides the question: choices, current value, rows."""
        return {"value": as_text(value)}

    def item_fields(self) -> list[str]:
        """Item data keys this question needs on every imported item."""
        return []

    def prepare_item(self, data: dict) -> dict[str, str]:
        """Normalise an imported item's data for this question; problems keyed by field."""
        return {}

    def is_low_reference(self, part: str, value: Any) -> bool:
        """Whether a gold atom marks a deliberately degraded reference (WMT's bad references)."""
        return False

    # --- ATOMIC_PARTS (absent: the whole answer is one part "") ------------------------------

    def atoms(self, answer: Any) -> list[tuple[str, Any]]:
        """The answer as atomic (part, value) pairs; part "" means the whole answer.

        Export columns are `<id>` for part "" and `<id>.<part>` otherwise.
        """
        return [("", answer)]

    def parts(self, item_data: dict | None = None) -> list[str]:
        """The atomic parts this question can produce (stable export column order)."""
        return [""]

    def sql_parts(self, answer_sql: str, parts: list[str]) -> list[tuple[str, str]] | None:
        """PostgreSQL expressions for the export's parts, mirroring atoms(): (part, jsonb SQL).

        `answer_sql` is the answer as jsonb (SQL NULL when absent). Each expression gives the
        jsonb value atoms() would give for that part, or SQL_UNSUPPORTED where atoms() would
        give something else; campaigns/exporting/sql.py renders the values as the csv writer
        does. None: this kind's answers are exported by the Python path.
        """
        if not self.supports(Capability.ATOMIC_PARTS):
            return [("", answer_sql)]
        return None

    def sql_atoms(self, answer_sql: str) -> str | None:
        """A PostgreSQL query of atoms(answer) as rows (part text, value jsonb, ord int).

        For csv-long. Evaluated only for an answer present and not JSON null. SQL_UNSUPPORTED
        where atoms() would fail (the Python path then writes the answer as JSON text). None:
        this kind's answers are exported by the Python path.
        """
        if not self.supports(Capability.ATOMIC_PARTS):
            return f"SELECT ''::text, {answer_sql}, 0"
        return None

    def path_parts(self) -> list[str] | None:
        """Parts whose atom is a plain JSON lookup (the answer, or one key of it), which the
        database can extract; None when only atoms() can split an answer."""
        return None if self.supports(Capability.ATOMIC_PARTS) else [""]

    def part_texts(self) -> dict[str, str]:
        """What each rated part asks, for the statistics tables."""
        return {"": self.text}

    # --- SIZED_BY_ANSWERS ---------------------------------------------------------------------

    def parts_for(self, n: int) -> list[str]:
        """The export's parts when the longest exported answer has n entries."""
        raise CapabilityMissing(self, Capability.SIZED_BY_ANSWERS)

    # --- AGREEMENT (absent: every part is free text) -----------------------------------------
    measurement: ClassVar[MeasurementLevel | None] = None

    def part_measurement(self, part: str) -> MeasurementLevel | None:
        """The level of measurement of one atomic part (for agreement statistics)."""
        return self.measurement

    def is_free_text(self, part: str) -> bool:
        """Free-text atoms (comments, rewrites, 'other' reasons) carry no rating to agree on."""
        return not self.supports(Capability.AGREEMENT)

    # --- JUDGES_OUTPUTS (campaigns/schema/outputs.py) -----------------------------------------

    def record_order(self, raw: Any, systems: list[str]) -> Any:
        """The raw answer with the systems in the order the worker was shown them."""
        raise CapabilityMissing(self, Capability.JUDGES_OUTPUTS)

    # --- SHUFFLES_OPTIONS (absent: the schema's order) ---------------------------------------

    def shuffles_options(self) -> bool:
        """Whether each assignment shows this question's options in its own order (then the
        page asks shown_widget() for that order and record_shown() stores it in the answer)."""
        return False

    def shown_widget(self, extra: dict, seed: str) -> dict:
        """The widget's context with the options in the order `seed` draws."""
        raise CapabilityMissing(self, Capability.SHUFFLES_OPTIONS)

    def record_shown(self, raw: Any, seed: str) -> Any:
        """The raw answer with the options' order that `seed` showed the worker."""
        raise CapabilityMissing(self, Capability.SHUFFLES_OPTIONS)

    # --- LLM_JUDGE: the prompt section and the answer's JSON Schema --------------------------

    def prompt_section(self, item_data: dict | None) -> str:
        """What a judge reads about this question: the question, its help and its scale
        (points, levels, anchors, options), plus anything it needs from the item."""
        raise CapabilityMissing(self, Capability.LLM_JUDGE)

    def prompt_answer(self, item_data: dict | None) -> str:
        """One line telling a judge what value to give under this question's key."""
        raise CapabilityMissing(self, Capability.LLM_JUDGE)

    def json_schema(self, item_data: dict | None) -> dict:
        """The JSON Schema of the answer a judge gives: the stored answer (what validate_answer
        returns) without the fields the server sets (the shown order of outputs or options:
        a judge's order is the one its prompt showed). Item-dependent parts (the number of
        lines) are fixed only when `item_data` is given."""
        raise CapabilityMissing(self, Capability.LLM_JUDGE)

    # --- JUDGED_BY_PARTS ----------------------------------------------------------------------

    def from_judge_parts(self, parsed: dict) -> Any:
        """The answer from a judge's dict keyed by this question's parts."""
        raise CapabilityMissing(self, Capability.JUDGED_BY_PARTS)

    # --- OPTION_VALUES ------------------------------------------------------------------------

    def rename_value(self, answer: Any, old: str, new: str) -> Any:
        """A stored answer with the option value `old` renamed `new` (a recorded migration of
        the answers)."""
        raise CapabilityMissing(self, Capability.OPTION_VALUES)

    def schema_with_value_renamed(self, question: dict, old: str, new: str) -> dict:
        """This question's schema JSON with the option value `old` renamed `new`."""
        return {**question, "options": [{**o, "value": new} if o.get("value") == old else o
                                        for o in question.get("options", [])]}

    # --- DASHBOARD (absent: no chart) ---------------------------------------------------------

    def dashboard_rows(self, reader: AnswerReader) -> Any:
        """Rows (system, value, how many) for dashboard_count()."""
        raise CapabilityMissing(self, Capability.DASHBOARD)

    def dashboard_count(self, value: Any, counter: Counter, n: int) -> None:
        """Add n answers of one row to the counter (keys as in dashboard_charts())."""
        counter[str(value)] += n

    def dashboard_charts(self) -> list[ChartSpec]:
        """The dashboard's distributions of this question."""
        raise CapabilityMissing(self, Capability.DASHBOARD)

    # --- PREFERENCES, BEST_WORST, ERROR_SPANS: the statistics' per-kind tables ---------------

    def preferences(self, answer: Any) -> list[tuple[str, str, float]]:
        """A stored answer as paired comparisons (system shown first, system shown second,
        the first one's result: 1 win, 0.5 tie, 0 loss); [] when it compares no systems."""
        raise CapabilityMissing(self, Capability.PREFERENCES)

    def best_worst(self, answer: Any) -> tuple[list[str], str, str] | None:
        """A stored answer as (systems shown, system chosen best, system chosen worst) for the
        best-worst scores; None when it is not such a choice."""
        raise CapabilityMissing(self, Capability.BEST_WORST)

    def error_spans(self, answer: Any) -> list[dict] | None:
        """A stored answer as error spans ({start, end, severity, category}) for the span
        statistics; None when it is not a list of spans."""
        raise CapabilityMissing(self, Capability.ERROR_SPANS)

    def span_labels(self) -> dict[str, list[str]]:
        """{"severity": [...], "category": [...]} as the schema lists them (for tables)."""
        raise CapabilityMissing(self, Capability.ERROR_SPANS)

    def weight(self, severity: str, category: str | None) -> float:
        """The MQM weight of one error of this severity and category."""
        raise CapabilityMissing(self, Capability.ERROR_SPANS)


def prompt_heading(question: BaseQuestion) -> str:
    """The common head of a question's prompt section: key, question text and help."""
    head = f'### "{question.id}": {question.text}'
    if question.help:
        head += f"\n{question.help}"
    if not question.required:
        head += "\n(Optional: leave the key out if it does not apply.)"
    return head


def described(value: Any, label: str, description: str = "") -> str:
    """A scale entry as a judge reads it: `- 3 = okay: description`."""
    value = str(value)
    if label.startswith(value):  # "5 (high)" reads "- 5 (high)", not "- 5 = 5 (high)"
        label = label[len(value):].strip()
    text = f"- {value}"
    if label:
        text += f" {label}" if label.startswith("(") else f" = {label}"
    return text + (f": {description}" if description else "")


def require_distinct(values: list, what: str) -> None:
    """Raise ValueError naming the repeated values (options, points, criteria must be unique)."""
    repeated = sorted({str(v) for v in values if values.count(v) > 1})
    if repeated:
        raise ValueError(f"{what} must be distinct; repeated: {', '.join(repeated)}")


def as_text(value: Any) -> str:
    """A value as a form field shows it (None as "", 3.0 as "3")."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def choices(options: list, current: Any, attr: str = "value") -> list[dict]:
    """Radio or checkbox choices for a template, the one equal to `current` checked."""
    current = as_text(current)
    values = [(o, as_text(getattr(o, attr))) for o in options]
    return [{"option": o, "value": value, "checked": value == current} for o, value in values]


def field_name(question_id: str) -> str:
    """The form field of a question (its parts add `.<part>`)."""
    return f"{FIELD_PREFIX}{question_id}"


def dom_id(*parts: Any) -> str:
    """A safe HTML id from question ids and parts (`lines.3.rewrite` -> `f-lines-3-rewrite`)."""
    return "f-" + re.sub(r"[^A-Za-z0-9_-]", "-", "-".join(str(p) for p in parts))


def as_int(raw: Any) -> int | None:
    """Accept 3, 3.0, "3" and "3.0" as the integer 3; anything else is None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if isinstance(raw, str) and re.fullmatch(r"\s*-?\d{1,18}(\.0+)?\s*", raw):
        return int(raw.strip().split(".")[0])  # never through float: 400 digits overflow it
    return None


def as_number(raw: Any) -> float | None:
    """Accept ints, floats and numeric strings (finite); anything else is None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        value = float(raw)
    elif isinstance(raw, str):
        try:
            value = float(raw.strip())
        except ValueError:
            return None
    else:
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return value


# In a sql_parts() expression: the export falls back to the Python path for the rows at hand.
SQL_UNSUPPORTED = "(pg_temp.export_sql_unsupported()::jsonb)"


def sql_text(value: str) -> str:
    """A PostgreSQL string literal (for names taken from a schema in sql_parts())."""
    return "'" + value.replace("'", "''") + "'"
