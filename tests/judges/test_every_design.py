"""A judge on every design: each starter template judged through the stand-in endpoint, then
its statistics, report and every export format. What the judge is sent never holds the fields
the server sets (the shown order), and the order stored for a judge is its prompt's."""
import json
import random
from datetime import timedelta

import pytest
from django.core.files.storage import storages
from django.utils import timezone

from campaigns.models import Annotation, Assignment, ExportJob, Worker
from campaigns.schema import Capability, parse_schema
from campaigns.schema.outputs import item_systems
from campaigns.schema.scoring import answer_values
from campaigns.selectors.analysis import campaign_statistics
from campaigns.selectors.analysis.report import evaluation_report
from campaigns.services.exports import export_job_create, export_job_run
from campaigns.services.judge_runs import judge_run_execute, judge_run_start
from campaigns.services.judges import judge_create
from campaigns.services.starters import campaign_create_from_starter
from campaigns.starters import starter_list

from .standin import Reply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


def _schema_keys(schema) -> set[str]:
    """Every property name anywhere in a JSON Schema."""
    if isinstance(schema, list):
        return set().union(*map(_schema_keys, schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    keys = set(schema.get("properties", {}))
    return keys.union(*(_schema_keys(v) for v in schema.values()))


def _full_answer(schema, rng, key=""):
    """Like the stand-in's usual judge, but every property given (a judge that also writes the
    optional rewrites and reasons), so conditional requirements are met."""
    if "enum" in schema:  # a worst pick differs from the best one
        return schema["enum"][-1] if key == "worst" else rng.choice(schema["enum"][:-1] or
                                                                     schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        return {k: _full_answer(sub, rng, k) for k, sub in schema["properties"].items()}
    if kind == "array":
        return [_full_answer(schema["items"], rng)
                for _ in range(schema.get("minItems", 0))]
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    return "fine"


def _full_reply(body, n):
    import random
    schema = body["response_format"]["json_schema"]["schema"]
    return Reply(json.dumps(_full_answer(schema, random.Random(n))))


def _human_answers(campaign, workers: int = 2) -> None:
    """Workers' answers to every item (each kind's example answers, validated as a page's)."""
    schema = parse_schema(campaign.schema)
    for w in range(workers):
        worker = Worker.objects.create(campaign=campaign, platform="prolific",
                                       platform_id=f"PID-{w}")
        assignment = Assignment.objects.create(
            campaign=campaign, worker=worker, deadline=timezone.now() + timedelta(hours=1),
            status=Assignment.Status.SUBMITTED, submitted_at=timezone.now())
        for item in campaign.items.all():
            rng = random.Random(f"{w}:{item.pk}")
            raw = {q.id: q.example_answer(item.data, rng) for q in schema.questions}
            Annotation.objects.create(
                campaign=campaign, assignment=assignment, item=item, worker=worker,
                **answer_values(schema, item, raw, 10.0))


def _judged(owner, standin, template: str):
    campaign = campaign_create_from_starter(owner=owner, template=template, slug=template,
                                            with_items=True)
    _human_answers(campaign)
    server = standin(_full_reply)
    judge = judge_create(campaign=campaign, name="stand-in", provider=server.provider,
                         model="standin-1", parameters={"temperature": 0}, concurrency=2,
                         requests_per_minute=60_000)
    run = judge_run_start(judge=judge, scope={"scope": "all"}, enqueue=False)
    judge_run_execute(run_id=run.pk)
    run.refresh_from_db()
    return campaign, server, run


def _export(campaign, fmt: str) -> str:
    job = export_job_create(campaign=campaign, requested_by=None, fmt=fmt,
                            options={"worker_platform": "all"}, enqueue=False)
    export_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == ExportJob.Status.DONE, (fmt, job.error)
    with storages["exports"].open(job.file, "rb") as handle:
        return handle.read().decode("utf-8")


@pytest.mark.parametrize("template", [s.name for s in starter_list()])
def test_a_judge_runs_on_every_starter_and_its_statistics_report_and_exports_work(
        owner, standin, template):
    campaign, server, run = _judged(owner, standin, template)
    items = campaign.items.count()
    assert (run.status, run.done, run.failed) == ("done", items, 0), _debug_failed(campaign)
    for body in server.bodies:
        schema = body["response_format"]["json_schema"]["schema"]
        assert "order" not in _schema_keys(schema)
    judge = Worker.objects.get(campaign=campaign, platform="llm")
    questions = parse_schema(campaign.schema).questions
    for annotation in Annotation.objects.filter(worker=judge).select_related("item"):
        for q in questions:
            answer = annotation.answers.get(q.id)
            if q.supports(Capability.JUDGES_OUTPUTS) and isinstance(answer, dict):
                assert answer["order"] == item_systems(annotation.item.data)
    statistics = campaign_statistics(campaign=campaign, n_boot=20)
    assert statistics["counts"]["judges"] == ["stand-in"]
    assert statistics["counts"]["workers"] == 2
    report = evaluation_report(campaign=campaign, statistics=statistics)
    assert report["markdown"].strip()
    for fmt in ExportJob.Format.values:
        text = _export(campaign, fmt)
        assert text.strip(), fmt
        if fmt == "analysis-json":
            json.loads(text)


def _debug_failed(campaign):
    from campaigns.models import JudgeOutput
    return list(JudgeOutput.objects.filter(judge__campaign=campaign, failed=True)
                .values_list("failure_reason", "raw_output")[:3])
