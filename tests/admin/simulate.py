"""Simulated workers for admin tests: claim assignments and answer every item plausibly."""
from __future__ import annotations

import random
from typing import Any

from campaigns.models import Assignment, Campaign, Worker
from campaigns.schema import parse_schema
from campaigns.work import annotation_submit, assignment_claim, assignment_submit


def random_answer(question, item_data: dict, rng: random.Random) -> Any:
    """A valid answer to any question, as its kind draws one."""
    return question.example_answer(item_data, rng)


def simulate(campaign: Campaign, *, workers: int, rng: random.Random | None = None,
             submit: bool = True, prefix: str = "sim") -> list[Assignment]:
    """Each worker claims one assignment and answers all of it, which hands it in.

    With `submit=False` the assignment is left active with every answer saved (as work saved
    before the last save handed an assignment in): an open assignment with answers.
    """
    rng = rng or random.Random(7)
    schema = parse_schema(campaign.schema)
    done = []
    for n in range(workers):
        worker = Worker.objects.create(campaign=campaign, platform="prolific",
                                       platform_id=f"{prefix}-{campaign.pk}-{n}")
        assignment = assignment_claim(campaign=campaign, worker=worker)
        for slot in assignment.slots.select_related("item").order_by("position"):
            answers = {q.id: random_answer(q, slot.item.data, rng) for q in schema.questions}
            annotation_submit(assignment=assignment, position=slot.position, answers=answers,
                              seconds_spent=rng.uniform(5, 60))
        if submit:
            assignment = assignment_submit(assignment=assignment)  # idempotent: handed in
        else:
            Assignment.objects.filter(pk=assignment.pk).update(
                status=Assignment.Status.ACTIVE, submitted_at=None, completion_code="")
            assignment.refresh_from_db()
        done.append(assignment)
    return done
