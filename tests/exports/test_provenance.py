"""The free-text answers' provenance in the exports: csv and csv-long carry it as a JSON cell
(empty when nothing was recorded), jsonl as an object."""
import csv
import io
import json

import pytest

from tests.factories import make_campaign

from .conftest import make_annotation

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]

RECORD = {"typed": 3, "pasted": 120, "pastes": 1, "ms": 2100, "chars": 118}


@pytest.fixture
def campaign(owner):
    campaign = make_campaign(owner=owner)
    recorded = make_annotation(campaign, item="i1", platform_id="W1",
                               answers={"coherence": 4, "feedback": "pasted " * 17})
    recorded.provenance = {"feedback": RECORD}
    recorded.save(update_fields=["provenance"])
    make_annotation(campaign, item="i2", platform_id="W2", answers={"coherence": 3})
    return campaign


@pytest.mark.parametrize("fmt", ["csv", "csv-long"])
def test_csv_carries_the_record_as_json_and_nothing_when_none(export, campaign, fmt):
    _, text = export(campaign, fmt)
    rows = list(csv.DictReader(io.StringIO(text)))
    by_item = {r["item_id"]: r["provenance"] for r in rows}
    assert json.loads(by_item["i1"]) == {"feedback": RECORD}
    assert by_item["i2"] == ""


def test_jsonl_carries_the_record_as_an_object(export, campaign):
    _, text = export(campaign, "jsonl")
    records = {r["item_id"]: r for r in map(json.loads, text.splitlines())}
    assert records["i1"]["provenance"] == {"feedback": RECORD}
    assert records["i2"]["provenance"] == {}
