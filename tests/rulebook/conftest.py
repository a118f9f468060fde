"""Rulebook fixtures: a preference campaign whose questions and options have stored answers."""
import pytest

from campaigns.models import Campaign
from tests.api.conftest import api, make_annotation, make_items  # noqa: F401 - fixtures reused
from tests.factories import make_campaign

PREFERENCE_SCHEMA = {
    "display": [{"field": "prompt", "label": "Prompt"}, {"field": "completion", "label": "Text"}],
    "questions": [
        {"id": "preference", "kind": "choice", "text": "Which is better?",
         "options": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"},
                     {"value": "tie", "label": "Tie"}, {"value": "skip", "label": "Skip"}]},
        {"id": "fluency", "kind": "likert", "text": "Fluent?",
         "points": [{"value": v, "label": str(v)} for v in range(1, 4)]},
    ],
}
ANSWERS = [{"preference": "a", "fluency": 3}, {"preference": "tie", "fluency": 2},
           {"preference": "b", "fluency": 1}, {"preference": "tie", "fluency": 3}]


@pytest.fixture
def answered(owner):
    """A live campaign with 4 items and 4 stored annotations (2 of them "tie")."""
    campaign = make_campaign(owner=owner, schema=PREFERENCE_SCHEMA, status=Campaign.Status.LIVE)
    items = make_items(campaign, 4)
    for n, (item, answers) in enumerate(zip(items, ANSWERS, strict=True)):
        make_annotation(campaign, item, worker_id=f"W{n}", answers=answers)
    return campaign


def with_question(schema: dict, question_id: str, **changes) -> dict:
    return {**schema, "questions": [{**q, **changes} if q["id"] == question_id else q
                                    for q in schema["questions"]]}
