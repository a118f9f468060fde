"""The csv export through PostgreSQL's COPY writes the same bytes as the Python path, every kind."""
import gzip
import json

import orjson
import pytest
from django.core.files.storage import storages
from django.db import DatabaseError, connection, transaction

from campaigns.exporting.cells import neutralise
from campaigns.exporting.sql import json_cell, select_long_sql, select_sql, text_cell
from campaigns.models import ExportJob
from campaigns.schema import REGISTRY, parse_schema, validate_answers
from tests.factories import (
    CONTINUATION_SCHEMA,
    RUBRIC_SCHEMA,
    SUMMARY_SCHEMA,
    TRANSLATION_SCHEMA,
    kind_item_data,
    kind_schema,
    make_campaign,
)

from .conftest import make_annotation

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]

AWKWARD = ["=1+1", "-3", "+1.5e3", "@x", "\tlead", "\rlead", "a\rb", "a\r\nb", 'say "hi"',
           "a,b", "two\nlines", "héllo ✓ 日本", "-é", "-٣", "", " pad ", "'quoted", "\\.", "-"]
TEXTS = [*AWKWARD, "plain", "=SUM(A1)", "@@", '"=x"', "x\"\r"]


def _meta(n: int) -> dict:
    text = TEXTS[n % len(TEXTS)]
    return {
        "item": f"{text}|{n}" if n % 3 else f"item-{n}",
        "system": text if n % 2 else "sys",
        "control": ["", "attention", "gold"][n % 3],
        "control_passed": [None, True, False][n % 3],
        "platform_id": f"P{n % 4}{text}",
        "seconds": [12.5, 3.0, None, 0.1 + 0.2, 1e-05, 0.0, 123456.75][n % 7],
        "seconds_first": [2.5, None, 0.1 + 0.2, 1e-05][n % 4],
        "study_id": text,
        "session_id": "" if n % 2 else "SE",
        "completion_code": text[::-1],
        "allocation": ["", "uniform", "adaptive_ranking"][n % 3],
        "allocation_epoch": [None, 0, 7][n % 3],
    }


CASES = {
    "continuation": (CONTINUATION_SCHEMA, [
        {"coherence": 4, "sentiment": 2, "feedback": t} for t in TEXTS
    ] + [{"coherence": 1}, {}, {"coherence": 3.0, "sentiment": True, "feedback": None},
         {"coherence": 2, "feedback": {"nested": 1}}, {"coherence": 1e20}, []]),
    "summary": (SUMMARY_SCHEMA, [
        {"lines": [{"label": "consistent"}, {"label": "inconsistent", "rewrite": t}],
         "summary_consistent": "consistent"} for t in TEXTS
    ] + [{"lines": [{"label": "na"}]}, {"lines": ["consistent", {"label": "na"}]},
         {"lines": {"label": "x"}}, {"lines": None}, {"summary_consistent": "=1+1"},
         {"lines": [{"label": "inconsistent"}, {}, {"label": 3}]}]),
    "rubric": (RUBRIC_SCHEMA, [
        {**{f"C{n}": n % 2 for n in range(1, 16)}, "total": 8},
        {"C1": 1, "C2": 0, "total": 1},
        {**{f"C{n}": 1 for n in range(1, 16)}, "total": 15.0},
        {"C1": "-3", "C2": "=1", "C3": 0.5, "total": None},
        [1, 2], "=text", {"C1": [1]},
    ]),
    "translation": (TRANSLATION_SCHEMA, [
        {"acceptability": v, "source_issues": {"selected": sel, "other": t}}
        for v, sel, t in zip(
            [73, 73.0, 73.5, 0, 100, 0.25, 12.75] * 4,
            [["typos"], [], ["nonsense", "typos"], ["typos", "nonsense"]] * 7,
            TEXTS, strict=False)
    ] + [{"acceptability": 50, "source_issues": {"selected": ["typos"]}},
         {"source_issues": {}}, {"source_issues": None}, {"source_issues": ["typos"]},
         {"source_issues": {"selected": "typos"}}, {"source_issues": {"selected": [1]}},
         {"acceptability": -0.0, "source_issues": {"other": "@me"}}]),
}


def _campaign(owner, name):
    schema, answers = CASES[name]
    campaign = make_campaign(owner=owner, schema=schema)
    data = {"summary": "One. Two. Three."}
    for n, answer in enumerate(answers):
        meta = _meta(n)
        annotation = make_annotation(campaign, answers=answer, data=data, **meta)
        if n % 2:  # the free-text answers' provenance goes out alike by both paths
            annotation.provenance = {"q.other": {"typed": n, "pasted": 0, "pastes": 0,
                                                 "ms": 1500 * n, "chars": 20 + n}}
            annotation.save(update_fields=["provenance"])
    return campaign


def _export_bytes(export, settings, campaign, sql: bool, fmt="csv", **options) -> bytes:
    settings.EXPORT_SQL_PATH = sql
    settings.EXPORT_SQL_CHUNK_SIZE = 4  # several COPYs, some falling back to Python
    job, _ = export(campaign, fmt, **options)
    job.refresh_from_db()
    assert job.rows_written == job.rows_total
    with storages["exports"].open(job.file, "rb") as handle:
        content = handle.read()
    # The gzip header names the (random) temporary file: the content is what must match.
    return gzip.decompress(content) if options.get("gzip") else content


@pytest.mark.parametrize("kind", sorted(REGISTRY))
@pytest.mark.parametrize("fmt", ["csv", "csv-long"])
def test_every_registered_kinds_example_answers_export_alike_by_both_paths(
        owner, export, settings, kind, fmt):
    campaign = make_campaign(owner=owner, schema=kind_schema(kind))
    question, item = parse_schema(campaign.schema).questions[0], kind_item_data(kind)
    for n, raw in enumerate(REGISTRY[kind].example.valid):
        make_annotation(campaign, item=f"i{n}", platform_id=f"W{n}", data=item,
                        answers=validate_answers([question], {question.id: raw}, item))
    python = _export_bytes(export, settings, campaign, False, fmt)
    assert python.count(b"\n") > 1
    assert _export_bytes(export, settings, campaign, True, fmt) == python


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("options", [{}, {"gzip": True}, {"raw_worker_ids": True}])
@pytest.mark.parametrize("fmt", ["csv", "csv-long"])
def test_the_sql_path_writes_the_python_paths_bytes(owner, export, settings, name, options, fmt):
    campaign = _campaign(owner, name)
    python = _export_bytes(export, settings, campaign, False, fmt, **options)
    sql = _export_bytes(export, settings, campaign, True, fmt, **options)
    assert sql == python


def test_every_factory_kind_has_sql(owner):
    from campaigns.exporting import plan_columns
    from campaigns.schema import parse_schema

    for schema, _ in CASES.values():
        plan = plan_columns(campaign_id=1, schema=parse_schema(schema),
                            line_counts={"lines": 3}, raw_worker_ids=False)
        assert select_sql(plan, "true") is not None
        assert select_long_sql(plan, "true") is not None


def test_sql_cells_match_python_cells_value_by_value():
    # One value per SELECT, beside the text the csv writer is given for the same value.
    values = [*TEXTS, 0, -3, 73, 73.0, 73.5, 0.1, 1e-05, 0.0001, 123456789.125, -0.0, True,
              False, None, 10**14, 12345678901234.5, 1e15, 2.5e-07]
    unsupported = []
    with connection.cursor() as cursor:
        cursor.execute("CREATE OR REPLACE FUNCTION pg_temp.export_sql_unsupported() RETURNS text "
                       "LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'unsupported'; END $$")
        for value in values:
            cursor.execute("SELECT %s::jsonb::text", [json.dumps(value)])
            python = orjson.loads(cursor.fetchone()[0])  # what the Python path reads
            expected = neutralise(python) if type(python) is str else python
            expected = "" if expected is None else str(expected)
            try:
                with transaction.atomic():
                    cursor.execute(
                        f"SELECT {json_cell('x.v')} FROM (SELECT %s::jsonb AS v) x",  # noqa: S608
                        [json.dumps(value)],
                    )
                    got = cursor.fetchone()[0]
            except DatabaseError:
                unsupported.append(value)
                continue
            assert (got or "") == expected, value
    assert unsupported == ["\rlead", "a\rb", "-é", "-٣", 1e15]
    assert text_cell("x")


def test_plain_values_are_written_by_copy_alone(owner, export, settings, monkeypatch):
    campaign = make_campaign(owner=owner, schema=RUBRIC_SCHEMA)
    for n in range(10):
        make_annotation(campaign, item=f"i{n}", platform_id=f"W{n}", study_id="=S",
                        answers={"C1": 1, "total": 1})
    python = _export_bytes(export, settings, campaign, False)

    def no_python_rows(*args, **kwargs):
        raise AssertionError("a chunk fell back to the Python path")

    monkeypatch.setattr("campaigns.exporting.sql.annotation_chunks", no_python_rows)
    assert _export_bytes(export, settings, campaign, True, exclude_flagged=False) == python
    assert ExportJob.objects.filter(campaign=campaign).count() == 2


def test_excluded_workers_are_left_out_by_both_paths(owner, export, settings, monkeypatch):
    campaign = _campaign(owner, "rubric")
    worker = campaign.annotations.order_by("id").first().worker_id
    monkeypatch.setattr("campaigns.services.exports._flagged_workers", lambda c: {worker})
    python = _export_bytes(export, settings, campaign, False, exclude_flagged=True)
    sql = _export_bytes(export, settings, campaign, True, exclude_flagged=True)
    assert sql == python
    assert python.count(b"\n") < campaign.annotations.count() + 1


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_a_chunk_falls_back_and_the_bytes_still_match(owner, settings):
    # As a Celery worker runs it: autocommit, each COPY in its own transaction.
    from campaigns.services.exports import export_job_create, export_job_run

    campaign = _campaign(owner, "continuation")

    def run(sql: bool) -> bytes:
        settings.EXPORT_SQL_PATH, settings.EXPORT_SQL_CHUNK_SIZE = sql, 5
        job = export_job_create(campaign=campaign, requested_by=None, fmt="csv", enqueue=False)
        export_job_run(job_id=job.pk)
        job.refresh_from_db()
        assert (job.status, job.rows_written) == ("done", job.rows_total), job.error
        with storages["exports"].open(job.file, "rb") as handle:
            return handle.read()

    assert run(True) == run(False)


CLEAN = {
    "continuation": {"coherence": 4, "sentiment": 2, "feedback": "=1+1, \"fine\"\nreally"},
    "summary": {"lines": [{"label": "consistent"}, {"label": "inconsistent", "rewrite": "-x"}],
                "summary_consistent": "consistent"},
    "rubric": {**{f"C{n}": n % 2 for n in range(1, 16)}, "total": 8},
    "translation": {"acceptability": 73.5,
                    "source_issues": {"selected": ["typos"], "other": "@home"}},
}


@pytest.mark.parametrize("name", sorted(CLEAN))
@pytest.mark.parametrize("fmt", ["csv", "csv-long"])
def test_valid_answers_of_every_kind_are_written_by_copy_alone(owner, export, settings,
                                                               monkeypatch, name, fmt):
    campaign = make_campaign(owner=owner, schema=CASES[name][0])
    for n in range(6):
        make_annotation(campaign, item=f"=i{n}", platform_id=f"W{n % 2}", answers=CLEAN[name],
                        system="système ✓",
                        data={"summary": "One. Two."}, control_passed=[None, True][n % 2])
    make_annotation(campaign, item="empty", answers={})
    python = _export_bytes(export, settings, campaign, False, fmt)

    def no_python_rows(*args, **kwargs):
        raise AssertionError("a chunk fell back to the Python path")

    monkeypatch.setattr("campaigns.exporting.sql.annotation_chunks", no_python_rows)
    assert _export_bytes(export, settings, campaign, True, fmt) == python
