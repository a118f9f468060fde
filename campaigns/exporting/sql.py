"""csv and csv-long on PostgreSQL: COPY (SELECT ...) TO STDOUT writes the Python writers' bytes.

Each chunk (CHUNK annotations, keyset on id) is one COPY into a buffer, then appended to the
export's stream. The question kinds give the SQL of their parts (sql_parts, for csv) and atoms
(sql_atoms, for csv-long). The SELECT renders every cell as the Python path does: numbers as
Python prints them, strings neutralised (cells.neutralise), None and "" as an empty unquoted
cell. A value it cannot render identically (an object where a scalar belongs, a bare CR, a
formula-like cell with non-ASCII text, a huge number...) raises `export-sql-unsupported`, and
that chunk is written by the Python path instead. Pseudonyms (Django's salted HMAC) are
computed in Python once per worker and loaded into a temporary table joined in the SELECT.
"""
from __future__ import annotations

import io
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TextIO

from django.conf import settings
from django.db import connection, transaction

from ..models import Annotation, Assignment, Item, Worker
from .columns import WHOLE_PART, ColumnPlan
from .formats import CsvLongWriter, CsvWriter
from .pseudonyms import worker_pseudonym
from .source import ExportScope, annotation_chunks

CHUNK = 50_000
SPOOL_BYTES = 32 << 20
WORKERS = "pg_temp.export_sql_workers"
UNSUPPORTED_MESSAGE = "export-sql-unsupported"
UNSUPPORTED_TEXT = "(pg_temp.export_sql_unsupported())"
TRIGGERS = "(61, 43, 45, 64, 9, 13)"  # = + - @ tab CR
SMALL_INTS = ", ".join(f"'{n}'" for n in range(-10, 101))
PLAIN_NUMBER = r"'^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$'"


def sql_path_enabled() -> bool:
    return getattr(settings, "EXPORT_SQL_PATH", True)


def chunk_size() -> int:
    return int(getattr(settings, "EXPORT_SQL_CHUNK_SIZE", CHUNK))


def text_cell(t: str) -> str:
    """A text value as CsvWriter writes it (neutralised; '' is NULL: an unquoted empty cell).

    PostgreSQL quotes a bare CR, Python's csv module (lineterminator "\\n") does not; Python's
    `\\d` takes non-ASCII digits: both cases go to the Python path.
    """
    return (
        f"(CASE WHEN {t} = '' THEN NULL "
        f"WHEN strpos({t}, E'\\r') > 0 AND {t} !~ '[,\"\\n]' THEN {UNSUPPORTED_TEXT} "
        f"WHEN ascii({t}) IN {TRIGGERS} AND {t} !~ {PLAIN_NUMBER} THEN "
        f"CASE WHEN octet_length({t}) <> char_length({t}) THEN {UNSUPPORTED_TEXT} "
        f"ELSE '''' || {t} END "
        f"ELSE {t} END)"
    )


def float_cell(f: str) -> str:
    """A float8 as Python's str() writes it (73.0, 0.5, 1e-05); NaN, inf, >= 1e15 unsupported."""
    return (
        f"(CASE WHEN {f} <> trunc({f}) THEN ({f})::text "
        f"WHEN abs({f}) < 1e15 THEN ({f})::text || '.0' "
        f"WHEN {f} IS NULL THEN NULL ELSE {UNSUPPORTED_TEXT} END)"
    )


def json_cell(v: str, t: str | None = None) -> str:
    """A jsonb value as the csv writer writes the Python value orjson reads from its text.

    `t`, the value as text (`#>>`), takes a short cut for the common case: digits (at most 15,
    maybe a '-' before small ones) are written as they are, whether a number (an int to Python)
    or a string (a plain number, not neutralised). A hashed IN list first: scores are small.
    """
    if t is not None:
        return (
            f"(CASE WHEN {t} IN ({SMALL_INTS}) THEN {t} "
            f"WHEN octet_length({t}) <= 15 AND {t} ~ '^[0-9]+$' THEN {t} "
            f"ELSE {json_cell(v)} END)"
        )
    t = f"(({v})::text)"
    string = f"(({v}) #>> '{{}}')"
    number = (
        f"(CASE WHEN strpos({t}, '.') = 0 THEN "
        f"CASE WHEN length({t}) <= 15 THEN {t} ELSE {UNSUPPORTED_TEXT} END "
        f"ELSE {float_cell(f'({v})::float8')} END)"
    )
    return (
        f"(CASE coalesce(jsonb_typeof({v}), 'null') "
        f"WHEN 'null' THEN NULL "
        f"WHEN 'number' THEN {number} "
        f"WHEN 'string' THEN {text_cell(string)} "
        f"WHEN 'boolean' THEN CASE WHEN ({v})::boolean THEN 'True' ELSE 'False' END "
        f"ELSE {UNSUPPORTED_TEXT} END)"
    )


# `(x -> 'key')`, as rubric parts are: its text is `x ->> 'key'`, one step less than `#>> '{}'`.
FIELD = re.compile(r"\((.+) -> ('(?:[^']|'')*'|\d+)\)")


def as_text(jsonb_sql: str) -> str:
    """The text of a jsonb value (NULL for JSON null), as `->>` gives it."""
    found = FIELD.fullmatch(jsonb_sql)
    if found:
        return f"({found[1]} ->> {found[2]})"
    return f"(({jsonb_sql}) #>> '{{}}')"


def iso_utc(column: str) -> str:
    # The same text as source.IsoUtc (the Python path reads it from the database too).
    return f"(replace((({column}) AT TIME ZONE 'UTC')::text, ' ', 'T') || '+00:00')"


# The meta columns: (what the innermost SELECT reads, how the outer SELECT writes it).
META = [
    ("a.id", None),
    ("i.external_id", text_cell),
    ("i.system", text_cell),
    ("i.control", text_cell),
    ("p.pseudonym", None),
    ("w.platform", text_cell),
    ("w.platform_id", text_cell),  # only with raw worker ids
    ("a.assignment_id", None),
    ("s.study_id", text_cell),
    ("s.session_id", text_cell),
    ("s.mturk_assignment_id", text_cell),
    ("s.mturk_hit_id", text_cell),
    ("s.completion_code", text_cell),
    (iso_utc("s.started_at"), None),
    (iso_utc("s.submitted_at"), None),
    (iso_utc("a.created_at"), None),
    (iso_utc("a.updated_at"), None),
    ("a.seconds_spent", float_cell),
    ("a.seconds_first", float_cell),
    ("a.control_passed", lambda c: f"(CASE WHEN {c} THEN 'true' WHEN NOT {c} THEN 'false' END)"),
    ("s.allocation", text_cell),
    ("s.allocation_epoch", None),
    ("NULLIF(a.provenance::text, '{}')", text_cell),
]


def select_sql(plan: ColumnPlan, where: str) -> str | None:
    """The csv's SELECT (rows matching `where`, in id order), or None if a kind has no SQL.

    Two levels, the inner kept whole by OFFSET 0, so each value is computed once per row: the
    rows with each part's jsonb value and its text, then the cells rendered from those
    columns (a rendering refers to its value several times).
    """
    meta = [(sql, render) for n, (sql, render) in enumerate(META)
            if n != 6 or plan.raw_worker_ids]
    inner = [f"{sql} AS m{n}" for n, (sql, _) in enumerate(meta)]
    outer = [render(f"x.m{n}") if render else f"x.m{n}" for n, (_, render) in enumerate(meta)]
    inner.append("a.answers AS answers")
    k = 0
    for question in plan.questions:
        parts = plan.question_parts(question)
        # Question ids match ID_PATTERN: no quote to escape.
        exprs = question.sql_parts(f"(a.answers -> '{question.id}')", parts)
        again = question.sql_parts(f"(x.answers -> '{question.id}')", parts)
        if exprs is None or again is None or [p for p, _ in exprs] != parts:
            return None
        for (_, sql), (_, outer_sql) in zip(exprs, again, strict=True):
            inner.append(f"{as_text(sql)} AS t{k}")
            outer.append(json_cell(outer_sql, f"x.t{k}"))
            k += 1
    return (
        f"SELECT {', '.join(outer)} FROM ("  # noqa: S608 (schema names, escaped by sql_text)
        f"{_annotation_rows(inner, where)}) x"
    )


def _annotation_rows(columns: list[str], where: str) -> str:
    """The inner SELECT of both exports: `columns` of each annotation `a` in id order, with
    its item `i`, worker `w`, pseudonym `p` and assignment `s` (OFFSET 0: evaluated once)."""
    return (f"SELECT {', '.join(columns)} FROM {Annotation._meta.db_table} a "  # noqa: S608 (names from the models)
            f"JOIN {Item._meta.db_table} i ON i.id = a.item_id "
            f"JOIN {Worker._meta.db_table} w ON w.id = a.worker_id "
            f"LEFT JOIN {WORKERS} p ON p.id = a.worker_id "
            f"LEFT JOIN {Assignment._meta.db_table} s ON s.id = a.assignment_id "
            f"WHERE {where} ORDER BY a.id OFFSET 0")


def select_long_sql(plan: ColumnPlan, where: str) -> str | None:
    """csv-long's SELECT: the meta cells, then question, part and value per atom, in order."""
    meta = [(sql, render) for n, (sql, render) in enumerate(META)
            if n != 6 or plan.raw_worker_ids]
    inner = [f"{sql} AS m{n}" for n, (sql, _) in enumerate(meta)] + ["a.answers AS answers"]
    outer = [render(f"x.m{n}") if render else f"x.m{n}" for n, (_, render) in enumerate(meta)]
    blocks = []
    for qn, question in enumerate(plan.questions):
        atoms = question.sql_atoms("s.a")
        if atoms is None:
            return None
        blocks.append(
            f"SELECT {qn} AS qn, k.* FROM (SELECT x.answers -> '{question.id}' AS a) s "  # noqa: S608 (ids match ID_PATTERN)
            f"CROSS JOIN LATERAL ({atoms}) k(part, value, ord) "
            "WHERE jsonb_typeof(s.a) <> 'null'"
        )
    if not blocks:
        return None
    ids = ", ".join(f"'{q.id}'" for q in plan.questions)  # ids match ID_PATTERN
    outer += [text_cell(f"((ARRAY[{ids}])[z.qn + 1])"),
              text_cell(f"COALESCE(NULLIF(z.part, ''), '{WHOLE_PART}')"), json_cell("z.value")]
    return (
        f"SELECT {', '.join(outer)} FROM ("  # noqa: S608 (schema names, escaped by sql_text)
        f"{_annotation_rows(inner, where)}) x "
        f"CROSS JOIN LATERAL (SELECT * FROM ({' UNION ALL '.join(blocks)}) u "
        "ORDER BY u.qn, u.ord) z"
    )


SELECTS = {"csv": (select_sql, CsvWriter), "csv-long": (select_long_sql, CsvLongWriter)}


def _load_pseudonyms(cursor, plan: ColumnPlan) -> None:
    cursor.execute(f"DROP TABLE IF EXISTS {WORKERS}")
    cursor.execute(
        "CREATE TEMP TABLE export_sql_workers (id bigint PRIMARY KEY, pseudonym text NOT NULL)"
    )
    cursor.execute(
        "CREATE OR REPLACE FUNCTION pg_temp.export_sql_unsupported() RETURNS text "
        "LANGUAGE plpgsql VOLATILE AS $$ BEGIN "
        f"RAISE EXCEPTION '{UNSUPPORTED_MESSAGE}'; END $$"
    )
    workers = Worker.objects.filter(campaign_id=plan.campaign_id).order_by("id")
    rows = workers.values_list("id", "platform", "platform_id").iterator(chunk_size=CHUNK)
    buffer = io.StringIO()
    for n, (worker_id, platform, platform_id) in enumerate(rows, start=1):
        name = worker_pseudonym(
            campaign_id=plan.campaign_id, platform=platform, platform_id=platform_id
        )
        buffer.write(f"{worker_id}\t{name}\n")
        if n % CHUNK == 0:
            buffer.seek(0)
            cursor.copy_expert(f"COPY {WORKERS} FROM STDIN", buffer)
            buffer = io.StringIO()
    buffer.seek(0)
    cursor.copy_expert(f"COPY {WORKERS} FROM STDIN", buffer)


def _boundaries(scope: ExportScope, chunk: int) -> Iterator[tuple[int, int, int]]:
    """(after id, up to id, rows) per chunk, keyset on the annotation id."""
    ids = scope.queryset().order_by("id").values_list("id", flat=True)
    last, written = 0, 0
    while written < scope.total:
        found = list(ids.filter(id__gt=last)[chunk - 1 : chunk])
        upper = found[0] if found else None
        if upper is None:
            yield last, scope.top_id, scope.total - written
            return
        yield last, upper, chunk
        last, written = upper, written + chunk


def write_csv(
    *, stream: TextIO, plan: ColumnPlan, scope: ExportScope, progress: Callable[[int], None],
    chunk: int | None = None, fmt: str = "csv",
) -> int | None:
    """Write a csv or csv-long export through COPY; None (nothing written) if a kind has no SQL."""
    build, writer = SELECTS[fmt]
    where = f"a.campaign_id = {int(plan.campaign_id)}"
    if scope.excluded_workers:
        ids = ",".join(str(int(w)) for w in sorted(scope.excluded_workers))
        where += f" AND NOT (a.worker_id = ANY('{{{ids}}}'::bigint[]))"
    if build(plan, where) is None:
        return None
    python = writer(stream, plan)
    python.begin()
    stream.flush()
    out = stream.buffer
    written = 0
    # Rolled-over buffers are unnamed files (gone with the process) in the application's spool
    # directory rather than the machine's /tmp.
    os.makedirs(settings.EXPORT_SPOOL_DIR, mode=0o700, exist_ok=True)
    with connection.cursor() as cursor:
        _load_pseudonyms(cursor, plan)
        try:
            for lo, hi, rows in _boundaries(scope, chunk or chunk_size()):
                # Held until the COPY succeeds; past SPOOL_BYTES (csv-long's many rows) on disk.
                buffer = tempfile.SpooledTemporaryFile(  # noqa: SIM115
                    max_size=SPOOL_BYTES, dir=settings.EXPORT_SPOOL_DIR)
                sql = build(plan, f"{where} AND a.id > {int(lo)} AND a.id <= {int(hi)}")
                try:
                    with transaction.atomic():  # a savepoint, so a fallback leaves no trace
                        # Compiling this long SELECT (JIT) costs more than running it; floats
                        # print as Python's repr (shortest round trip); '\.' is a backslash.
                        cursor.execute(
                            "SET LOCAL jit = off; SET LOCAL extra_float_digits = 1; "
                            "SET LOCAL standard_conforming_strings = on"
                        )
                        cursor.copy_expert(f"COPY ({sql}) TO STDOUT WITH (FORMAT csv)", buffer)
                except Exception as exc:
                    if UNSUPPORTED_MESSAGE not in str(exc):
                        raise
                    for batch in annotation_chunks(replace(scope, top_id=hi), start=lo):
                        python.write_chunk(batch)
                    stream.flush()
                else:
                    buffer.seek(0)
                    shutil.copyfileobj(buffer, out, 1 << 20)
                finally:
                    buffer.close()
                written += rows
                progress(written)
        finally:
            cursor.execute(f"DROP TABLE IF EXISTS {WORKERS}")
    return written

