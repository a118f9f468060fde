"""`text`: free text with length limits (no agreement: nothing to agree on)."""
import random
from typing import Any, ClassVar, Literal

from django.utils.translation import gettext
from pydantic import Field, model_validator

from ..base import AnswerInvalid, BaseQuestion, prompt_heading
from ..contract import Capability, KindExample


class TextQuestion(BaseQuestion):
    kind: Literal["text"]
    max_length: int = Field(default=2000, ge=1, le=100_000)
    min_length: int = Field(default=0, ge=0)
    multiline: bool = True
    placeholder: str = ""

    template: ClassVar[str] = "campaigns/questions/text.html"
    rates_one_text: ClassVar[bool] = True
    capabilities: ClassVar[frozenset[Capability]] = frozenset({
        Capability.LLM_JUDGE})
    example: ClassVar[KindExample] = KindExample(
        settings={"max_length": 20}, valid=["Fine.", "  padded  "], invalid=[5, "x" * 21])

    @model_validator(mode="after")
    def _lengths(self):
        if self.min_length > self.max_length:
            raise ValueError("min_length must not exceed max_length")
        return self

    def free_text_input(self, suffix: str) -> bool:
        return suffix == ""

    def is_empty(self, raw: Any) -> bool:
        return raw is None or (isinstance(raw, str) and not raw.strip())

    def validate_answer(self, raw: Any, item_data: dict | None) -> str:
        if not isinstance(raw, str):
            raise AnswerInvalid({self.id: "Expected text."})
        value = raw.strip()
        if len(value) > self.max_length:
            raise AnswerInvalid(
                {self.id: gettext("At most %(max)s characters, please (%(given)s given).") % {
                    "max": self.max_length, "given": len(value)}}
            )
        if len(value) < self.min_length:
            raise AnswerInvalid({self.id: gettext("At least %(min)s characters, please.") % {
                "min": self.min_length}})
        return value

    def example_answer(self, item_data: dict | None, rng: random.Random) -> str:
        return ("ok" + "." * max(0, self.min_length - 2))[: self.max_length]

    def prompt_section(self, item_data: dict | None) -> str:
        return f"{prompt_heading(self)}\nWrite free text of at most {self.max_length} characters."

    def prompt_answer(self, item_data: dict | None) -> str:
        least = f"at least {self.min_length}, " if self.min_length else ""
        return f"a string ({least}at most {self.max_length} characters)"

    def json_schema(self, item_data: dict | None) -> dict:
        schema: dict = {"type": "string", "maxLength": self.max_length}
        if self.min_length:
            schema["minLength"] = self.min_length
        return schema
