"""The analysis export: every statistics table in one CSV (a `table` column) or one JSON."""
import csv
import io
import json

import pytest

from campaigns.exporting.analysis import write_analysis
from campaigns.models import ExportJob
from tests.analysis.test_selector import _study

pytestmark = pytest.mark.django_db


def _write(campaign, fmt, **options):
    job = ExportJob.objects.create(campaign=campaign, format=fmt, options=options)
    stream = io.StringIO()
    write_analysis(job=job, stream=stream)
    return stream.getvalue()


def test_the_json_export_holds_every_table_of_the_statistics(owner):
    data = json.loads(_write(_study(owner), "analysis-json"))
    for table in ("agreement", "system_scores", "ranking", "pairwise", "quality", "judges",
                  "confusion", "progress"):
        assert data[table], table
    assert data["exclude_flagged"] is False and data["changes"] is None


def test_the_csv_export_names_each_rows_table_and_honours_exclude_flagged(owner):
    text = _write(_study(owner), "analysis-csv", exclude_flagged=True)
    rows = list(csv.DictReader(io.StringIO(text)))
    tables = {r["table"] for r in rows}
    assert {"summary", "agreement", "system_scores", "ranking", "pairwise", "quality", "judges",
            "confusion", "progress", "changes_agreement", "changes_ranking"} <= tables
    coherence = next(r for r in rows if r["table"] == "agreement" and r["question"] == "coherence")
    assert float(coherence["alpha"]) == pytest.approx(1.0) and coherence["n_raters"] == "3"
    summary = next(r for r in rows if r["table"] == "summary")
    assert summary["exclude_flagged"] == "true" and summary["judges_list"] == "gpt-4"
    flagged = next(r for r in rows if r["table"] == "quality" and r["flagged"] == "true")
    # The careless worker also rates against the others (1 where they give 5): both reasons.
    assert flagged["reasons"].startswith("failed 2 attention checks; ratings correlate "
                                         "negatively with the other workers'")
    cells = [r for r in rows if r["table"] == "confusion" and r["question"] == "coherence"]
    assert sum(int(r["count"]) for r in cells) == 8
