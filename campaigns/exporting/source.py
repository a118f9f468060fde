"""Reading annotations for an export: one scope fixed at the start, then keyset-paginated chunks.

Each chunk is one query (`id > last ORDER BY id LIMIT n`, joins to item, worker and assignment)
returning tuples, so memory depends on the chunk size, never on the campaign's size.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.db.models import Count, F, Func, IntegerField, Max, QuerySet, TextField
from django.db.models.functions import Cast

from ..models import Annotation, JudgeOutput
from ..schema import Capability, TaskSchema
from .columns import SOURCE_FIELDS, TIMESTAMP_FIELDS

CHUNK_SIZE = 2000


@dataclass(frozen=True)
class ExportScope:
    """The annotations an export covers: a campaign's, up to the highest id present at start."""

    campaign_id: int
    excluded_workers: frozenset[int]
    top_id: int
    total: int

    def queryset(self) -> QuerySet[Annotation]:
        qs = Annotation.objects.filter(campaign_id=self.campaign_id, id__lte=self.top_id)
        if self.excluded_workers:
            qs = qs.exclude(worker_id__in=self.excluded_workers)
        return qs


def export_scope(*, campaign_id: int, excluded_workers: Iterable[int] = ()) -> ExportScope:
    """Count the rows and pin the upper id, so rows added during the export are left out."""
    excluded = frozenset(excluded_workers)
    qs = Annotation.objects.filter(campaign_id=campaign_id)
    if excluded:
        qs = qs.exclude(worker_id__in=excluded)
    found = qs.aggregate(total=Count("id"), top=Max("id"))
    return ExportScope(campaign_id, excluded, found["top"] or 0, found["total"])


def annotation_chunks(
    scope: ExportScope, *, chunk_size: int = CHUNK_SIZE, start: int = 0
) -> Iterator[list[tuple]]:
    """Lists of SOURCE_FIELDS tuples plus the answers as JSON text, in id order (ids > start).

    Times come as ISO 8601 text and the answers as JSON text, both written by the database:
    that spares parsing them into Python objects only to format them again.
    """
    fields = [IsoUtc(f) if f in TIMESTAMP_FIELDS else ProvenanceText() if f == "provenance"
              else f for f in SOURCE_FIELDS]
    answers = Cast("answers", output_field=TextField())
    base = scope.queryset().order_by("id").values_list(*fields, answers)
    last = start
    while True:
        rows = list(base.filter(id__gt=last)[:chunk_size])
        if rows:
            yield rows
        if len(rows) < chunk_size:
            return
        last = rows[-1][0]


class IsoUtc(Func):
    """A timestamp as ISO 8601 text in UTC (`2026-01-02T03:04:05.123456+00:00`), or NULL.

    Built from the database's own text output, which costs far less than to_char() in
    PostgreSQL or formatting datetimes in Python.
    """

    output_field = TextField()

    def __init__(self, field: str):
        super().__init__(F(field))

    def as_sql(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return f"(replace((({sql}) AT TIME ZONE 'UTC')::text, ' ', 'T') || '+00:00')", params


class ProvenanceText(Func):
    """The free-text answers' provenance as the database's JSON text; NULL when it is empty
    (the same text as the SQL path's: exporting/sql.py, META)."""

    output_field = TextField()

    def __init__(self):
        super().__init__(F("provenance"))

    def as_sql(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return f"NULLIF(({sql})::text, '{{}}')", params


class JsonArrayLength(Func):
    """The length of `answers #> path` when it is a JSON array, else NULL."""

    output_field = IntegerField()

    def __init__(self, field: str, path: list[str]):
        super().__init__(F(field))
        self.path = path

    def as_sql(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        value = f"({sql} #> %s)"
        return (
            f"CASE WHEN jsonb_typeof({value}) = 'array' THEN jsonb_array_length({value}) END",
            [*params, self.path, *params, self.path],
        )


def line_counts(scope: ExportScope, schema: TaskSchema) -> dict[str, int]:
    """Per question sized by its answers (lines: the most segments any exported answer has;
    a question asked per output: the most outputs), the longest list, in one aggregate query."""
    sized = [q for q in schema.questions if q.supports(Capability.SIZED_BY_ANSWERS)]
    if not sized:
        return {}
    ids = [q.id for q in sized]
    paths = [[q.id, q.order_key] if (q.for_each_output or q.for_each_turn) else [q.id]
             for q in sized]
    found = scope.queryset().aggregate(
        **{f"n{i}": Max(JsonArrayLength("answers", path)) for i, path in enumerate(paths)}
    )
    return {qid: found[f"n{i}"] or 0 for i, qid in enumerate(ids)}


def judge_details(annotation_ids: list[int]) -> dict[int, dict]:
    """For LLM-judge annotations made by a judge run: the judge, model, prompt hash and raw
    output of the output that gave the stored answers (the latest valid one)."""
    if not annotation_ids:
        return {}
    rows = (JudgeOutput.objects.filter(annotation_id__in=annotation_ids, failed=False)
            .order_by("annotation_id", "-id").distinct("annotation_id")
            .values_list("annotation_id", "judge__name", "model", "prompt_hash", "raw_output"))
    return {a: {"name": name, "model": model, "prompt_hash": digest, "raw_output": raw}
            for a, name, model, digest, raw in rows}
