"""One module per question kind; REGISTRY maps a kind's name to its question model.

A kind enters REGISTRY only once check_kind() finds it keeps the contract
(campaigns/schema/contract.py): the built-in kinds here at import, any other kind in
campaigns.schema.register_kind() (which also rebuilds the schema model).
"""
from typing import get_args

from ..base import BaseQuestion, MeasurementLevel
from ..contract import CAPABILITIES, REQUIRED, Capability, KindExample, KindIncomplete
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


def _defines(question_class: type[BaseQuestion], name: str) -> bool:
    """Whether the kind (or a mixin of it) gives `name` a value of its own."""
    if name in question_class.model_fields:
        return name not in BaseQuestion.model_fields
    return getattr(question_class, name, None) is not getattr(BaseQuestion, name, None)


def _required_problems(question_class: type[BaseQuestion]) -> list[str]:
    problems = []
    for entry in REQUIRED:
        if entry.key == "kind":
            continue  # kind_name() has checked it
        if not _defines(question_class, entry.key):
            problems.append(f"it does not define {entry.key} (required of every kind)")
    template = question_class.template
    if _defines(question_class, "template") and not (isinstance(template, str) and template):
        problems.append("its template must name a template partial")
    example = question_class.example
    if _defines(question_class, "example") and not isinstance(example, KindExample):
        problems.append("its example must be a campaigns.schema.contract.KindExample")
    return problems


def _capability_problems(question_class: type[BaseQuestion]) -> list[str]:
    declared = question_class.capabilities
    if not isinstance(declared, set | frozenset):
        return ["its capabilities must be a set of campaigns.schema.contract.Capability"]
    problems = [f"it declares {c!r}, which is not a Capability" for c in declared
                if not isinstance(c, Capability)]
    for capability, spec in CAPABILITIES.items():
        if capability in declared:
            problems += [f"it declares {capability.value} but does not define {name}"
                         for name in (*spec.methods, *spec.attributes)
                         if not _defines(question_class, name)]
            problems += [f"{capability.value} needs {need.value}, which it does not declare"
                         for need in spec.needs if need not in declared]
        else:
            problems += [f"it defines {name}, which belongs to {capability.value}, but does "
                         f"not declare {capability.value}"
                         for name in (*spec.methods, *spec.optional, *spec.attributes)
                         if _defines(question_class, name)]
    if Capability.AGREEMENT in declared and question_class.measurement is not None \
            and question_class.measurement not in get_args(MeasurementLevel):
        problems.append(f"its measurement {question_class.measurement!r} is not one of "
                        f"{', '.join(get_args(MeasurementLevel))}")
    return problems


def check_kind(question_class: type) -> str:
    """The kind's name once it keeps the contract; else KindIncomplete naming the kind and
    every method or attribute at fault (TypeError for a class that is no question kind)."""
    if not (isinstance(question_class, type) and issubclass(question_class, BaseQuestion)):
        raise TypeError(f"{getattr(question_class, '__name__', question_class)!r} is not a "
                        "BaseQuestion")
    name = kind_name(question_class)
    problems = _required_problems(question_class) + _capability_problems(question_class)
    if problems:
        raise KindIncomplete(f"question kind {name!r} ({question_class.__name__}) breaks the "
                             "kind contract: " + "; ".join(problems))
    return name


def check_registry() -> None:
    """Hold every registered kind to the contract (at start-up: CampaignsConfig.ready)."""
    for question_class in REGISTRY.values():
        check_kind(question_class)


REGISTRY: dict[str, type[BaseQuestion]] = {
    check_kind(cls): cls
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
    "check_kind",
    "check_registry",
    "kind_name",
]
