"""Span statistics of a campaign: in campaign_statistics, the stats API, the statistics page
and the analysis export, from stored answers of an ESA campaign (spans, then a 0-100 score)."""
import csv
import io
import json

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from campaigns.models import ExportJob
from campaigns.selectors.analysis import campaign_statistics
from campaigns.services.exports import write_analysis
from campaigns.services.items import items_import
from campaigns.services.judgments import JudgmentRow, judgments_import
from tests.factories import ESA_SCHEMA, make_campaign

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]

TARGET = "Das ist ein Test."  # "ist" 4-7, "ist ein" 4-11, "Test" 12-16
BETA = "<b>beta</b>"  # a system name the pages must escape


def _span(start, end, severity):
    return {"start": start, "end": end, "text": TARGET[start:end], "severity": severity}


# (item, worker, spans, score): two workers on each item.
ANSWERS = [
    ("a1", "w1", [_span(4, 7, "minor")], 70), ("a1", "w2", [_span(4, 11, "major")], 60),
    ("a2", "w1", [], 90), ("a2", "w2", [], 95),
    ("b1", "w1", [_span(12, 16, "major")], 30), ("b1", "w2", [_span(12, 16, "major")], 20),
    ("b2", "w1", [_span(0, 3, "minor")], 50), ("b2", "w2", [_span(0, 3, "minor")], 40),
]


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


@pytest.fixture
def esa(owner):
    campaign = make_campaign(owner=owner, schema=ESA_SCHEMA, slug="esa-study")
    items = [{"id": i, "system": "alpha" if i[0] == "a" else BETA,
              "source": "This is a test .", "target": TARGET} for i in ("a1", "a2", "b1", "b2")]
    items_import(campaign=campaign, content="\n".join(json.dumps(i) for i in items).encode(),
                 filename="items.jsonl")
    rows = [JudgmentRow(n, item, worker, repr({"errors": spans, "score": score}))
            for n, (item, worker, spans, score) in enumerate(ANSWERS, start=1)]
    judgments_import(campaign=campaign, rows=rows, platform="account")
    return campaign


def test_the_statistics_carry_mqm_error_counts_agreement_and_the_esa_score(esa):
    [entry] = campaign_statistics(campaign=esa, n_boot=50)["error_spans"]
    assert (entry["question"], entry["answers"], entry["source_field"]) == ("errors", 8, "source")
    mqm = {r["system"]: r for r in entry["mqm"]}
    assert mqm["alpha"]["mqm"] == pytest.approx(((1 + 5) / 2 + 0) / 2)  # minor 1, major 5
    assert mqm[BETA]["mqm"] == pytest.approx((5 + 1) / 2)
    assert mqm["alpha"]["mqm_per_100_words"] == pytest.approx(100 * 3 / (5 + 5))
    assert (mqm["alpha"]["rank"], mqm[BETA]["rank"]) == (1, 2)
    assert {(r["system"], r["severity"]): r["errors"] for r in entry["errors_by_severity"]} == {
        ("alpha", "minor"): 1, ("alpha", "major"): 1, (BETA, "minor"): 2, (BETA, "major"): 2}
    overall = next(r for r in entry["agreement"] if r["severity"] is None)
    assert overall["f1"] == pytest.approx(2 * (3 + 4 + 3) / (10 + 8 + 6))
    assert (overall["pairs"], overall["pairs_both_empty"]) == (4, 1)
    assert entry["score_question"] == "score"
    scores = {r["system"]: r["mean"] for r in entry["scores"]}
    assert scores == {"alpha": pytest.approx(78.75), BETA: pytest.approx(35)}
    assert entry["errors_by_category"] == []  # the schema asks for no category


def test_the_stats_api_returns_the_span_tables(esa, owner, other_owner):
    body = token_client(owner).get(f"/api/campaigns/{esa.slug}/stats/").json()
    assert body["error_spans"][0]["mqm"][0]["system"] == "alpha"
    assert token_client(other_owner).get(f"/api/campaigns/{esa.slug}/stats/").status_code == 404


def test_the_statistics_page_shows_the_span_section_escaped(esa, admin_client):
    page = admin_client.get(reverse("admin:campaigns_campaign_statistics",
                                    args=[esa.pk])).content.decode()
    for text in ("Error spans: errors", "MQM per system", "Errors per system by severity",
                 "character-level F1", "score: the score given after marking the spans"):
        assert text in page
    assert BETA not in page and "&lt;b&gt;beta&lt;/b&gt;" in page
    # Counts pivoted: a row per system, a column per severity, "errors (per answer)".
    assert "<td>alpha</td><td>4</td><td>1 (0.25)</td><td>1 (0.25)</td>" in page
    assert "by category" not in page  # the schema asks for no category
    # Severities in the schema's order (minor, then major), not the alphabet's.
    assert ('<th scope="col">Answers</th><th scope="col">minor</th><th scope="col">major</th>'
            in page)


def test_the_analysis_csv_flattens_each_span_table_with_its_question(esa):
    job = ExportJob.objects.create(campaign=esa, format="analysis-csv", options={})
    stream = io.StringIO()
    write_analysis(job=job, stream=stream)
    rows = list(csv.DictReader(io.StringIO(stream.getvalue())))
    tables = {r["table"] for r in rows}
    assert {"error_spans", "error_spans_mqm", "error_spans_errors_by_severity",
            "error_spans_agreement", "error_spans_scores"} <= tables
    alpha = next(r for r in rows if r["table"] == "error_spans_mqm" and r["system"] == "alpha")
    assert alpha["question"] == "errors" and float(alpha["mqm"]) == pytest.approx(1.5)


def test_the_evaluation_report_has_an_error_span_section_escaped(esa):
    job = ExportJob.objects.create(campaign=esa, format="analysis-md", options={})
    stream = io.StringIO()
    write_analysis(job=job, stream=stream)
    text = stream.getvalue()
    assert "## Error spans: errors (MQM penalties, lower is better)" in text
    assert "| 1 | alpha | 2 | 2 | 1.500 " in text
    assert "all spans 0.833" in text  # 2 x (3 + 4 + 3) / (10 + 8 + 6)
    assert BETA not in text and r"\<b\>beta\</b\>" in text


def test_a_spans_campaign_without_answers_gets_empty_tables_and_a_page(owner, admin_client):
    campaign = make_campaign(owner=owner, schema=ESA_SCHEMA, slug="esa-empty")
    [entry] = campaign_statistics(campaign=campaign, n_boot=10)["error_spans"]
    assert (entry["answers"], entry["mqm"], entry["errors_by_severity"], entry["agreement"],
            entry["scores"]) == (0, [], [], [], [])
    page = admin_client.get(reverse("admin:campaigns_campaign_statistics",
                                    args=[campaign.pk]))
    assert page.status_code == 200 and "No answers yet." in page.content.decode()
