"""One module per question kind; REGISTRY maps a kind's name to its question model.

campaigns.schema.register_kind() adds a kind at run time (and rebuilds the schema model).
"""
from typing import get_args

from ..base import BaseQuestion
from .bws import BestWorstQuestion
from .choice import ChoiceQuestion
from .flags import FlagsQuestion
from .likert import LikertQuestion
from .lines import LinesQuestion
from .pairwise import PairwiseQuestion
from .rubric import RubricQuestion
from .slider import SliderQuestion
from .spans import SpansQuestion
from .text import TextQuestion


def kind_name(question_class: type[BaseQuestion]) -> str:
    """The name a question class answers to: the single value of its `kind` Literal."""
    names = get_args(question_class.model_fields["kind"].annotation)
    if len(names) != 1 or not isinstance(names[0], str):
        raise TypeError(f"{question_class.__name__}.kind must be a Literal of one name")
    return names[0]


REGISTRY: dict[str, type[BaseQuestion]] = {
    kind_name(cls): cls
    for cls in (LikertQuestion, ChoiceQuestion, SliderQuestion, LinesQuestion, RubricQuestion,
                TextQuestion, FlagsQuestion, PairwiseQuestion, BestWorstQuestion,
                SpansQuestion)
}

__all__ = [
    "REGISTRY",
    "BestWorstQuestion",
    "ChoiceQuestion",
    "FlagsQuestion",
    "LikertQuestion",
    "LinesQuestion",
    "PairwiseQuestion",
    "RubricQuestion",
    "SliderQuestion",
    "SpansQuestion",
    "TextQuestion",
    "kind_name",
]
