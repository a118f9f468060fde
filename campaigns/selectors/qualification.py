"""The qualification step as the researcher reads it: counts, and the test's answers, kept apart
from the main annotations (never in the statistics or the annotation exports)."""
from __future__ import annotations

import csv
import io
import json

from django.db.models import Count

from ..exporting.cells import neutralise
from ..models import Campaign, Qualification, QualificationAnswer

__all__ = ["QUALIFICATION_COLUMNS", "qualification_counts", "qualification_csv",
           "qualification_rows", "qualification_summary"]

QUALIFICATION_COLUMNS = [
    "qualification", "platform", "participant_id", "status", "correct", "total", "score",
    "pass_mark", "group", "carried_from_campaign", "started_at", "finished_at", "position",
    "item", "answer_correct", "seconds_spent", "answers", "provenance",
]


def qualification_counts(*, campaign: Campaign) -> dict[str, int]:
    """Participants by their test's status: passed, failed, active (taking it now); the
    outcomes carried over from another campaign of the group are counted too."""
    counts = dict(Qualification.objects.filter(campaign=campaign).values_list("status")
                  .annotate(n=Count("id")).order_by())
    return {s.value: counts.get(s.value, 0) for s in Qualification.Status}


def qualification_summary(counts: dict[str, int]) -> str:
    return (f"{counts['passed']} qualified, {counts['failed']} failed, "
            f"{counts['active']} taking the test now")


def _iso(value) -> str | None:
    return value.isoformat() if value else None


def qualification_rows(*, campaign: Campaign) -> list[dict]:
    """One row per answer given in the campaign's tests (QUALIFICATION_COLUMNS), in the order
    the tests started; a test without answers here (carried over, or just begun) is one row
    with empty answer columns. `provenance` is how each free-text answer was written, as on an
    annotation (None when the page recorded nothing)."""
    tests = list(Qualification.objects.filter(campaign=campaign)
                 .select_related("worker", "carried_from__campaign").order_by("started_at", "id"))
    answers: dict[int, list[QualificationAnswer]] = {}
    for answer in (QualificationAnswer.objects.filter(qualification__campaign=campaign)
                   .select_related("item").order_by("qualification_id", "position")):
        answers.setdefault(answer.qualification_id, []).append(answer)
    rows = []
    for test in tests:
        head = {
            "qualification": test.pk, "platform": test.worker.platform,
            "participant_id": test.worker.platform_id, "status": test.status,
            "correct": test.correct, "total": test.total, "score": test.score,
            "pass_mark": test.pass_mark, "group": test.group,
            "carried_from_campaign": (test.carried_from.campaign.slug
                                      if test.carried_from else None),
            "started_at": _iso(test.started_at), "finished_at": _iso(test.finished_at)}
        empty = {"position": None, "item": None, "answer_correct": None,
                 "seconds_spent": None, "answers": None, "provenance": None}
        rows += [{**head, "position": a.position, "item": a.item.external_id,
                  "answer_correct": a.correct, "seconds_spent": a.seconds_spent,
                  "answers": a.answers, "provenance": a.provenance or None}
                 for a in answers.get(test.pk, [])] or [{**head, **empty}]
    return rows


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return neutralise(json.dumps(value, ensure_ascii=False, sort_keys=True))
    return neutralise(value) if isinstance(value, str) else value


def qualification_csv(rows: list[dict]) -> str:
    """The rows as CSV under a header; text that a spreadsheet would run as a formula is
    neutralised, as in every export."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(QUALIFICATION_COLUMNS)
    writer.writerows([_cell(row[c]) for c in QUALIFICATION_COLUMNS] for row in rows)
    return out.getvalue()
