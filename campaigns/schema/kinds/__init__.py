"""One module per question kind; REGISTRY maps a kind's name to its question model."""
from .choice import ChoiceQuestion
from .flags import FlagsQuestion
from .likert import LikertQuestion
from .lines import LinesQuestion
from .rubric import RubricQuestion
from .slider import SliderQuestion
from .text import TextQuestion

REGISTRY = {
    "likert": LikertQuestion,
    "choice": ChoiceQuestion,
    "slider": SliderQuestion,
    "lines": LinesQuestion,
    "rubric": RubricQuestion,
    "text": TextQuestion,
    "flags": FlagsQuestion,
}

__all__ = [
    "REGISTRY",
    "ChoiceQuestion",
    "FlagsQuestion",
    "LikertQuestion",
    "LinesQuestion",
    "RubricQuestion",
    "SliderQuestion",
    "TextQuestion",
]
