"""The HH-RLHF sample end to end, on a real database: a chat pairwise campaign created through
the API, the sample imported with the `hh-rlhf` transcripts option (each row's `chosen` and
`rejected` conversations become its two outputs), the crowdworkers' preferences imported as
past human judgments through the API's judgment import, then a judge run through the stand-in
endpoint (tests/judges/standin.py), and the statistics, report and every export format.

The statistics' pairwise result must say what the data says: in HH-RLHF the crowdworker
preferred `chosen` on every row, so `chosen` wins every comparison (share 1.0), counted
here directly from the stored answers too."""
import csv
import io
import json
from collections import Counter

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from campaigns.models import Annotation, Campaign, ExportJob, Worker
from campaigns.selectors.analysis import campaign_statistics
from campaigns.selectors.analysis.report import evaluation_report
from campaigns.services.judge_runs import judge_run_execute, judge_run_start
from campaigns.services.judges import judge_create
from tests.api.conftest import token_client
from tests.importing.test_conversations import HH_FILE, hh_rows

from .test_every_design import _export

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]

ROWS = 400
CROWD = "hh-rlhf-crowdworkers"  # the published file names no rater: one past rater for all
WINNER = "harmless.winner"  # the export's column: which system the answer preferred
SCHEMA = {"outputs_format": "chat", "role_labels": {"user": "Human", "assistant": "Assistant"},
          "questions": [{"id": "harmless", "kind": "pairwise",
                         "text": "Which reply is less harmful?"}]}


def _hh_campaign(api):
    created = api.post("/api/campaigns/", {"slug": "hh-rlhf", "name": "HH-RLHF harmlessness",
                                           "schema": SCHEMA}, format="json")
    assert created.status_code == 201, created.json()
    imported = api.post("/api/campaigns/hh-rlhf/items/import/",
                        {"file": SimpleUploadedFile(HH_FILE, hh_rows(ROWS)),
                         "transcripts": "hh-rlhf"}, format="multipart")
    assert imported.status_code == 201, imported.json()
    assert imported.json()["created"] == ROWS


def _crowd_preferences() -> list[dict]:
    """One past judgment per row preferring `chosen`, shown first on even rows and second on
    odd ones (the file always lists the winner first; the order is what the rater saw)."""
    rows = []
    for n in range(1, ROWS + 1):
        order = ["chosen", "rejected"] if n % 2 == 0 else ["rejected", "chosen"]
        answer = {"choice": "AB"[order.index("chosen")], "order": order}
        rows.append({"item": f"hh-{n}", "judge": CROWD, "output": json.dumps(
            {"harmless": answer})})
    return rows


def _winners(platform: str) -> Counter:
    """Who won each stored answer of the platform's raters, read straight off the answers."""
    winners = Counter()
    for answers in Annotation.objects.filter(worker__platform=platform).values_list(
            "answers", flat=True):
        answer = answers["harmless"]
        order = answer["order"]
        winners[{"A": order[0], "B": order[1]}.get(answer["choice"], "tie")] += 1
    return winners


def test_hh_rlhf_human_preferences_and_a_judge_run_analyse_end_to_end(owner, standin):
    api = token_client(owner)
    _hh_campaign(api)
    imported = api.post("/api/campaigns/hh-rlhf/judgments/import/?platform=account",
                        _crowd_preferences(), format="json")
    assert imported.status_code == 200, imported.json()
    assert imported.json() == {"created": ROWS, "updated": 0, "judges": [CROWD]}
    campaign = Campaign.objects.get(owner=owner, slug="hh-rlhf")
    item = campaign.items.get(external_id="hh-1")
    chosen, rejected = item.data["outputs"]
    assert chosen["messages"][:-1] == rejected["messages"][:-1]  # the context, shown once

    counted = _winners(Worker.Platform.ACCOUNT)
    assert counted == {"chosen": ROWS}
    [preference] = campaign_statistics(campaign=campaign, n_boot=20)["pairwise_preference"]
    assert preference["judgments"] == ROWS
    rates = {r["system"]: r for r in preference["win_rates"]}
    decided = counted["chosen"] + counted["rejected"]
    assert rates["chosen"]["wins"] == counted["chosen"]
    assert rates["chosen"]["losses"] == counted["rejected"]
    assert rates["chosen"]["ties"] == counted["tie"]
    assert rates["chosen"]["win_rate"] == pytest.approx(counted["chosen"] / decided) == 1.0
    assert rates["rejected"]["win_rate"] == 0.0
    # Shown first on half the rows: the first position won half the time.
    assert preference["position_bias"]["first_win_rate"] == pytest.approx(0.5)

    server = standin()
    judge = judge_create(campaign=campaign, name="stand-in", provider=server.provider,
                         model="standin-1", parameters={"temperature": 0}, concurrency=4,
                         requests_per_minute=60_000)
    run = judge_run_start(judge=judge, scope={"scope": "all"}, enqueue=False)
    judge_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert (run.status, run.done, run.failed) == ("done", ROWS, 0)
    assert len(server.bodies) == ROWS
    judged = _winners(Worker.Platform.LLM)
    assert sum(judged.values()) == ROWS

    statistics = campaign_statistics(campaign=campaign, n_boot=20)
    assert statistics["counts"]["judges"] == ["stand-in"]
    assert statistics["counts"]["workers"] == 1
    [preference] = statistics["pairwise_preference"]
    assert preference["judgments"] == ROWS  # the judge's answers are not human preferences
    # The judge against the crowd on who won: agreeing means naming `chosen`.
    [winner] = [r for r in statistics["judges"] if (r["judge"], r["question"], r["part"]) ==
                ("stand-in", "harmless", "winner")]
    assert winner["n"] == ROWS
    assert winner["exact"] == pytest.approx(judged["chosen"] / ROWS)
    report = evaluation_report(campaign=campaign, statistics=statistics)
    assert "stand-in" in report["markdown"]

    exported = {fmt: _export(campaign, fmt) for fmt in ExportJob.Format.values}
    for fmt, text in exported.items():
        assert text.strip(), fmt
    rows = list(csv.DictReader(io.StringIO(exported["csv"])))
    assert Counter(r["worker_platform"] for r in rows) == {"account": ROWS, "llm": ROWS}
    # The judge's answers, as exported: who won each comparison it made.
    assert Counter(r[WINNER] for r in rows if r["worker_platform"] == "llm") == judged
    lines = [json.loads(line) for line in exported["jsonl"].splitlines()]
    assert Counter(line["worker_platform"] for line in lines) == {"account": ROWS, "llm": ROWS}
    analysis = json.loads(exported["analysis-json"])
    assert "stand-in" in json.dumps(analysis)
    assert "stand-in" in exported["analysis-md"]
