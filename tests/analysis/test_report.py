"""The evaluation report: the page, the Markdown and JSON exports agree with the statistics."""
import json

import pytest
from django.core.files.storage import storages

from campaigns.analysis.report import report_markdown
from campaigns.selectors.analysis import campaign_statistics, evaluation_report
from campaigns.services.exports import export_job_create, export_job_run
from tests.analysis.helpers import add_item, annotate
from tests.factories import make_campaign

pytestmark = pytest.mark.django_db

LIKERT = {"display": [{"field": "prompt"}],
          "questions": [{"id": "q", "kind": "likert", "text": "Good?",
                         "points": [{"value": v, "label": str(v)} for v in range(1, 6)]}]}


@pytest.fixture
def export_storage(settings, tmp_path):
    settings.STORAGES = {**settings.STORAGES, "exports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path)}}}


def _campaign(owner):
    campaign = make_campaign(owner=owner, schema=LIKERT)
    for n in range(24):
        system = "<b>A|x</b>" if n % 2 else "B"
        item = add_item(campaign, f"i{n}", system=system)
        for k, worker in enumerate(("w1", "w2", "w3")):
            annotate(campaign, worker, item, {"q": 1 + (n + k + (2 if n % 2 else 0)) % 5})
    annotate(campaign, "gpt", item, {"q": 3}, platform="llm")
    return campaign


def test_the_report_lays_out_design_agreement_results_comparisons_and_planning(owner):
    campaign = _campaign(owner)
    built = evaluation_report(campaign=campaign, n_boot=100)
    statistics = campaign_statistics(campaign=campaign, n_boot=100)
    design = built["design"]
    assert (design["items"], design["systems"], design["raters"]) == (24, 2, 3)
    assert design["judges"] == ["gpt"]
    assert built["agreement"] == statistics["agreement"]
    assert [r["mean"] for r in built["systems"]] == [r["mean"] for r in statistics[
        "system_scores"]]
    assert built["comparisons"]["n"] == len(statistics["comparisons"])
    (plan,) = built["planning"]
    assert plan["question"] == "q" and plan["items_per_system"] == 12
    text = built["markdown"]
    for heading in ("## Design", "## Design warnings", "## Agreement", "## Results per system",
                    "## Comparisons", "## Quality control", "## Judge alignment",
                    "## Planning"):
        assert heading in text
    # A system name with Markdown and HTML in it is escaped, never markup.
    assert "<b>" not in text and r"\<b\>A\|x\</b\>" in text
    assert report_markdown({k: v for k, v in built.items() if k != "markdown"}) == text


def test_the_markdown_and_json_exports_carry_the_report(owner, export_storage):
    campaign = _campaign(owner)
    job = export_job_create(campaign=campaign, requested_by=owner, fmt="analysis-md",
                            enqueue=False)
    export_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "done" and job.file.endswith(".md")
    with storages["exports"].open(job.file, "rb") as handle:
        assert handle.read().decode().startswith("# Evaluation report: ")
    job = export_job_create(campaign=campaign, requested_by=owner, fmt="analysis-json",
                            enqueue=False)
    export_job_run(job_id=job.pk)
    job.refresh_from_db()
    with storages["exports"].open(job.file, "rb") as handle:
        document = json.loads(handle.read())
    assert document["report"]["design"]["items"] == 24
    assert document["comparisons"] == document["pairwise"]
