"""Export column planning: the meta columns, then a column per atomic answer of each kind."""
import csv
import io
import json

import pytest

from campaigns.exporting import META_COLUMNS
from campaigns.models import Item
from campaigns.services.allocation import campaign_allocate
from campaigns.work import annotation_submit, assignment_claim, worker_get_or_create
from tests.factories import (
    CONTINUATION_SCHEMA,
    RUBRIC_SCHEMA,
    SUMMARY_SCHEMA,
    TRANSLATION_SCHEMA,
    make_campaign,
)

from .conftest import make_annotation

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]

META = [c for c in META_COLUMNS if c != "worker_platform_id"]


def header(text: str) -> list[str]:
    return next(csv.reader(io.StringIO(text)))


def test_likert_and_text_questions_get_one_column_each(owner, export):
    campaign = make_campaign(owner=owner, schema=CONTINUATION_SCHEMA)
    make_annotation(campaign, answers={"coherence": 4, "sentiment": 2})
    _, text = export(campaign, "csv")
    assert header(text) == [*META, "coherence", "sentiment", "feedback"]


def test_lines_questions_get_a_label_and_rewrite_column_per_segment_up_to_the_longest(
    owner, export
):
    campaign = make_campaign(owner=owner, schema=SUMMARY_SCHEMA)
    make_annotation(campaign, item="short", data={"story": "s", "summary": "A. B."},
                    answers={"lines": [{"label": "consistent"}, {"label": "na"}],
                             "summary_consistent": "consistent"})
    make_annotation(campaign, item="long", data={"story": "s", "summary": "A. B. C."},
                    platform_id="PID-2",
                    answers={"lines": [{"label": "consistent"}, {"label": "na"},
                                       {"label": "inconsistent", "rewrite": "Fixed C."}],
                             "summary_consistent": "inconsistent"})
    _, text = export(campaign, "csv")
    assert header(text)[len(META):] == [
        "lines.1.label", "lines.1.rewrite", "lines.2.label", "lines.2.rewrite",
        "lines.3.label", "lines.3.rewrite", "summary_consistent",
    ]
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["lines.3.label"] == ""
    assert rows[1]["lines.3.label"] == "inconsistent"
    assert rows[1]["lines.3.rewrite"] == "Fixed C."


def test_rubric_questions_get_a_column_per_criterion_and_the_total(owner, export):
    campaign = make_campaign(owner=owner, schema=RUBRIC_SCHEMA)
    scores = {f"C{n}": 1 for n in range(1, 16)}
    make_annotation(campaign, answers={"rubric": {**scores, "total": 15}})
    _, text = export(campaign, "csv")
    assert header(text)[len(META):] == [f"rubric.C{n}" for n in range(1, 16)] + ["rubric.total"]
    row = next(csv.DictReader(io.StringIO(text)))
    assert row["rubric.C7"] == "1"
    assert row["rubric.total"] == "15"


def test_slider_and_flags_questions_get_a_column_per_option_and_the_other_text(owner, export):
    campaign = make_campaign(owner=owner, schema=TRANSLATION_SCHEMA)
    make_annotation(campaign, answers={
        "acceptability": 73,
        "source_issues": {"selected": ["typos"], "other": "odd names"},
    })
    _, text = export(campaign, "csv")
    assert header(text)[len(META):] == [
        "acceptability", "source_issues", "source_issues.typos", "source_issues.nonsense",
        "source_issues.other",
    ]
    row = next(csv.DictReader(io.StringIO(text)))
    assert (row["acceptability"], row["source_issues"], row["source_issues.typos"],
            row["source_issues.nonsense"], row["source_issues.other"]) == (
        "73", "typos", "1", "0", "odd names")


def test_a_campaign_without_annotations_exports_just_the_header(owner, export):
    campaign = make_campaign(owner=owner, schema=SUMMARY_SCHEMA)
    job, text = export(campaign, "csv")
    assert text.splitlines() == [",".join([*META, "summary_consistent"])]
    assert (job.rows_total, job.rows_written) == (0, 0)


def test_rubric_answers_with_other_keys_than_the_criteria_still_land_in_their_columns(
    owner, export
):
    campaign = make_campaign(owner=owner, schema=RUBRIC_SCHEMA)
    full = {f"C{n}": 1 for n in range(1, 16)}
    make_annotation(campaign, item="a", answers={"rubric": {**full, "total": 15}})
    make_annotation(campaign, item="b", platform_id="P2",  # stored before C15 was added
                    answers={"rubric": {**{f"C{n}": 0 for n in range(1, 15)}, "total": 0}})
    make_annotation(campaign, item="c", platform_id="P3",
                    answers={"rubric": {**full, "C2": 0, "total": 14}})
    _, text = export(campaign, "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["rubric.C2"], r["rubric.C15"], r["rubric.total"]) for r in rows] == [
        ("1", "1", "15"), ("0", "", "0"), ("0", "1", "14")]


def test_each_annotation_carries_the_allocation_it_was_handed_out_under(owner, export):
    """Through the product's claim and save: the strategy and priority epoch of the claim,
    and after a change of strategy the new ones, in every format."""
    campaign = make_campaign(owner=owner, schema=CONTINUATION_SCHEMA,
                             allocation="adaptive_precision", items_per_assignment=1)
    for n in range(2):
        Item.objects.create(campaign=campaign, external_id=f"i{n}", system="s",
                            data={"prompt": "p", "completion": "c"},
                            slots_wanted=campaign.annotations_per_item)
    campaign_allocate(campaign=campaign)  # epoch 1

    def answer(worker_name):
        worker = worker_get_or_create(campaign=campaign, platform="link",
                                      platform_id=worker_name)
        assignment = assignment_claim(campaign=campaign, worker=worker)
        annotation_submit(assignment=assignment, position=1,
                          answers={"coherence": 4, "sentiment": 2}, seconds_spent=1)

    answer("w1")
    campaign.allocation = "uniform"
    campaign.save(update_fields=["allocation"])
    campaign_allocate(campaign=campaign)  # epoch 2
    answer("w2")
    make_annotation(campaign, item="direct", answers={"coherence": 1})  # made, not claimed

    _, text = export(campaign, "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["allocation"], r["allocation_epoch"]) for r in rows] == [
        ("adaptive_precision", "1"), ("uniform", "2"), ("", "")]
    _, lines = export(campaign, "jsonl")
    records = [json.loads(line) for line in lines.splitlines()]
    assert [(r["allocation"], r["allocation_epoch"]) for r in records] == [
        ("adaptive_precision", 1), ("uniform", 2), ("", None)]
    _, long_text = export(campaign, "csv-long")
    long_rows = list(csv.DictReader(io.StringIO(long_text)))
    assert {(r["allocation"], r["allocation_epoch"]) for r in long_rows} == {
        ("adaptive_precision", "1"), ("uniform", "2"), ("", "")}
