"""What each export format writes: tidy csv-long, valid jsonl/json, gzip, pseudonyms, formulas."""
import csv
import io
import json
from datetime import datetime

import pandas as pd
import pytest

from campaigns.exporting.pseudonyms import worker_pseudonym
from tests.factories import CONTINUATION_SCHEMA, TRANSLATION_SCHEMA, make_campaign

from .conftest import make_annotation

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


@pytest.fixture
def rated(owner):
    """A continuation campaign with two annotations by two workers."""
    campaign = make_campaign(owner=owner, schema=CONTINUATION_SCHEMA)
    make_annotation(campaign, item="i1", answers={"coherence": 4, "sentiment": 2},
                    platform_id="PID-1", study_id="S1", session_id="SE1", completion_code="C0DE",
                    seconds_first=4.25)
    make_annotation(campaign, item="i2", system="sys-b", answers={
        "coherence": 1, "sentiment": 5, "feedback": "=HYPERLINK(\"http://evil\")"},
        platform_id="PID-2", control="attention", control_passed=False, seconds=3.0)
    return campaign


def test_every_csv_row_carries_the_item_system_worker_assignment_and_times(rated, export):
    _, text = export(rated, "csv")
    first, second = csv.DictReader(io.StringIO(text))
    assert first["item_id"] == "i1"
    assert first["system"] == "sys-a"
    assert first["worker"] == worker_pseudonym(
        campaign_id=rated.pk, platform="prolific", platform_id="PID-1")
    assert first["worker_platform"] == "prolific"
    assert "PID-1" not in text
    assert (first["study_id"], first["session_id"], first["completion_code"]) == (
        "S1", "SE1", "C0DE")
    assert first["assignment_id"].isdigit()
    assert first["started_at"].startswith("20") and first["submitted_at"].startswith("20")
    assert first["created_at"] and first["updated_at"]
    assert first["seconds_spent"] == "12.5" and first["seconds_first"] == "4.25"
    assert (first["control"], first["control_passed"]) == ("", "")
    assert (second["control"], second["control_passed"]) == ("attention", "false")


def test_times_are_iso_8601_in_utc_and_exact(owner, export):
    campaign = make_campaign(owner=owner)
    annotation = make_annotation(campaign, answers={"coherence": 1, "sentiment": 1})
    _, text = export(campaign, "jsonl")
    record = json.loads(text)
    assert record["created_at"].endswith("+00:00") and "T" in record["created_at"]
    assert datetime.fromisoformat(record["created_at"]) == annotation.created_at
    assert datetime.fromisoformat(record["submitted_at"]) == annotation.assignment.submitted_at
    assert datetime.fromisoformat(record["started_at"]) == annotation.assignment.started_at


def test_a_formula_in_an_answer_is_neutralised_in_csv_but_kept_as_is_in_json(rated, export):
    _, text = export(rated, "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[1]["feedback"] == "'=HYPERLINK(\"http://evil\")"
    _, jsonl = export(rated, "jsonl")
    assert json.loads(jsonl.splitlines()[1])["answers"]["feedback"].startswith("=HYPERLINK")


def test_csv_neutralises_formulas_in_any_text_cell_and_leaves_look_alikes_alone(owner, export):
    campaign = make_campaign(owner=owner)
    make_annotation(campaign, item="@item", system="+sys", study_id="-x", answers={
        "coherence": 1, "sentiment": 1, "feedback": "a,=b"})
    make_annotation(campaign, item="i2", answers={
        "coherence": 1, "sentiment": 1, "feedback": "\tcmd"}, platform_id="P2")
    make_annotation(campaign, item="i3", answers={
        "coherence": 1, "sentiment": 1, "feedback": "-5"}, platform_id="P3")
    _, text = export(campaign, "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert (rows[0]["item_id"], rows[0]["system"], rows[0]["study_id"]) == (
        "'@item", "'+sys", "'-x")
    assert [r["feedback"] for r in rows] == ["a,=b", "'\tcmd", "-5"]
    _, long_text = export(campaign, "csv-long")
    long_rows = list(csv.DictReader(io.StringIO(long_text)))
    assert {r["item_id"] for r in long_rows} == {"'@item", "i2", "i3"}
    assert "'\tcmd" in {r["value"] for r in long_rows}


def test_a_chunk_without_formulas_is_written_unchanged(owner, export, settings):
    settings.EXPORT_CHUNK_SIZE = 1  # the first chunk has a formula, the second none
    campaign = make_campaign(owner=owner)
    make_annotation(campaign, item="=a", answers={"coherence": 1, "sentiment": 1})
    make_annotation(campaign, item="b", answers={"coherence": 2, "sentiment": 2},
                    platform_id="P2")
    _, text = export(campaign, "csv")
    assert [r["item_id"] for r in csv.DictReader(io.StringIO(text))] == ["'=a", "b"]


def test_negative_numbers_stay_numbers_in_csv(owner, export):
    schema = {"questions": [{"id": "score", "kind": "slider", "text": "Score", "min": -10,
                             "max": 10}]}
    campaign = make_campaign(owner=owner, schema=schema)
    make_annotation(campaign, answers={"score": -3})
    _, text = export(campaign, "csv")
    assert next(csv.DictReader(io.StringIO(text)))["score"] == "-3"


def test_csv_long_has_one_row_per_atomic_judgment(owner, export):
    campaign = make_campaign(owner=owner, schema=TRANSLATION_SCHEMA)
    make_annotation(campaign, answers={"acceptability": 40,
                                       "source_issues": {"selected": ["nonsense"]}})
    _, text = export(campaign, "csv-long")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["question"], r["part"], r["value"]) for r in rows] == [
        ("acceptability", "(whole)", "40"),
        ("source_issues", "(whole)", "nonsense"),
        ("source_issues", "typos", "0"),
        ("source_issues", "nonsense", "1"),
        ("source_issues", "other", ""),
    ]
    assert {r["item_id"] for r in rows} == {"i1"}
    # A whole answer's part is a value, not an empty cell that pandas reads as NaN and
    # groupby drops.
    grouped = pd.read_csv(io.StringIO(text)).groupby(["question", "part"]).size()
    assert grouped.sum() == len(rows)
    assert len({r["annotation_id"] for r in rows}) == 1
    assert list(rows[0])[-3:] == ["question", "part", "value"]


def test_jsonl_has_one_valid_object_per_annotation_with_nested_answers(rated, export):
    job, text = export(rated, "jsonl")
    records = [json.loads(line) for line in text.splitlines()]
    assert len(records) == job.rows_written == job.rows_total == 2
    assert records[0]["answers"] == {"coherence": 4, "sentiment": 2}
    assert records[1]["control_passed"] is False
    assert records[0]["item_id"] == "i1"
    assert list(records[0])[-1] == "answers"


def test_json_is_one_valid_array(rated, export, settings):
    settings.EXPORT_CHUNK_SIZE = 1  # a chunk boundary between the two objects
    _, text = export(rated, "json")
    records = json.loads(text)
    assert [r["item_id"] for r in records] == ["i1", "i2"]


def test_json_of_an_empty_campaign_is_an_empty_array(owner, export):
    _, text = export(make_campaign(owner=owner), "json")
    assert json.loads(text) == []


def test_gzip_compresses_the_file(rated, export):
    job, text = export(rated, "csv", gzip=True)
    assert job.file.endswith(".csv.gz")
    assert text.startswith("annotation_id,")


def test_pseudonyms_are_stable_within_a_campaign_and_differ_across_campaigns(owner, export):
    one, two = make_campaign(owner=owner), make_campaign(owner=owner)
    for campaign in (one, two):
        make_annotation(campaign, item="a", answers={"coherence": 1, "sentiment": 1})
        make_annotation(campaign, item="b", answers={"coherence": 2, "sentiment": 2})
    workers = {}
    for campaign in (one, two):
        _, text = export(campaign, "csv")
        workers[campaign.pk] = {r["worker"] for r in csv.DictReader(io.StringIO(text))}
    assert len(workers[one.pk]) == len(workers[two.pk]) == 1
    assert workers[one.pk] != workers[two.pk]
    _, again = export(one, "jsonl")
    assert {json.loads(line)["worker"] for line in again.splitlines()} == workers[one.pk]


def test_raw_worker_ids_appear_only_when_asked_for(rated, export):
    _, text = export(rated, "csv", raw_worker_ids=True)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["worker_platform_id"] for r in rows] == ["PID-1", "PID-2"]
    assert rows[0]["worker"].startswith("w_")
