"""manage.py export_results: the same service, run synchronously, written to a path."""
import gzip
import json

import pytest
from django.core.management import CommandError, call_command

from campaigns.models import ExportJob

from .conftest import make_annotation

pytestmark = pytest.mark.django_db


def test_it_writes_the_export_to_the_given_path(campaign, tmp_path):
    make_annotation(campaign, answers={"coherence": 2, "sentiment": 3})
    out = tmp_path / "results.jsonl.gz"
    call_command("export_results", campaign.slug, "--format", "jsonl", "--gzip", "-o", str(out))
    record = json.loads(gzip.decompress(out.read_bytes()))
    assert record["answers"] == {"coherence": 2, "sentiment": 3}
    job = ExportJob.objects.get()
    assert (job.status, job.requested_by, job.rows_written) == ("done", None, 1)


def test_it_names_an_unknown_campaign(tmp_path):
    with pytest.raises(CommandError, match="No campaign with slug 'nope'"):
        call_command("export_results", "nope", "--format", "csv", "-o", str(tmp_path / "x"))


def test_it_reports_a_failed_export(campaign, tmp_path, monkeypatch):
    from campaigns.services import exports

    def broken(**kwargs):
        raise RuntimeError("the statistics could not be computed")

    monkeypatch.setattr(exports, "write_analysis", broken)
    with pytest.raises(CommandError, match="failed: .*the statistics could not be computed"):
        call_command("export_results", campaign.slug, "--format", "analysis-json",
                     "-o", str(tmp_path / "x"))
