"""Simulated workers for admin tests: claim assignments and answer every item plausibly."""
from __future__ import annotations

import random
from typing import Any

from campaigns.models import Assignment, Campaign, Worker
from campaigns.schema import parse_schema
from campaigns.work import annotation_submit, assignment_claim, assignment_submit


def random_answer(question, item_data: dict, rng: random.Random) -> Any:
    kind = question.kind
    if kind == "likert":
        return rng.choice(question.points).value
    if kind == "choice":
        return rng.choice(question.options).value
    if kind == "slider":
        steps = int((question.max - question.min) / question.step)
        return question.min + question.step * rng.randint(0, steps)
    if kind == "text":
        return "ok"
    if kind == "flags":
        return {"selected": [rng.choice(question.options).value], "other": ""}
    if kind == "rubric":
        return {c.id: rng.randint(c.min, c.max) for c in question.criteria}
    if kind == "lines":
        out = []
        for _ in question.segments(item_data):
            label = rng.choice(question.options).value
            entry = {"label": label}
            if question.followup and label in question.followup.when:
                entry[question.followup.id] = "a rewrite"
            out.append(entry)
        return out
    raise ValueError(kind)


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
