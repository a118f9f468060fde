"""Migration 0010 (one lifecycle) keeps every existing job's state: queued, running and
finished rows of each kind keep their status and attempts; the statistics' `requested_at`
becomes `queued_at`; what the new fields need is filled in from what the rows had."""
from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("campaigns", "0009_background_jobs")]
AFTER = [("campaigns", "0010_background_job_lifecycle")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def back_to_the_latest():
    """Whatever the test does, later tests find every migration applied."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("back_to_the_latest")
def test_existing_jobs_keep_their_state_through_the_lifecycle_migration(django_user_model):
    old = _migrate(BEFORE)
    owner = old.get_model("auth", "User").objects.create(username="owner")
    campaign = old.get_model("campaigns", "Campaign").objects.create(
        owner_id=owner.pk, name="c", slug="c")
    started = timezone.now() - timedelta(minutes=5)
    export = old.get_model("campaigns", "ExportJob").objects.create(
        campaign=campaign, status="running", attempts=2, started_at=started,
        heartbeat_at=started, rows_written=10)
    judge = old.get_model("campaigns", "Judge").objects.create(campaign=campaign, name="j",
                                                               model="m")
    run = old.get_model("campaigns", "JudgeRun").objects.create(
        judge=judge, status="cancelled", attempts=4, error="")
    upload = old.get_model("campaigns", "ImportJob").objects.create(
        campaign=campaign, filename="x.csv", status="running")
    stats = old.get_model("campaigns", "StatisticsResult").objects.create(
        campaign=campaign, kind="statistics", options={}, options_key="k", status="running",
        attempts=1, queued_attempts=0, requested_at=started, started_at=started)

    new = _migrate(AFTER)
    export = new.get_model("campaigns", "ExportJob").objects.get(pk=export.pk)
    assert (export.status, export.attempts, export.rows_written) == ("running", 2, 10)
    assert export.queued_at == export.created_at
    run = new.get_model("campaigns", "JudgeRun").objects.get(pk=run.pk)
    assert (run.status, run.attempts, run.queued_attempts) == ("cancelled", 4, 0)
    upload = new.get_model("campaigns", "ImportJob").objects.get(pk=upload.pk)
    assert (upload.status, upload.attempts) == ("running", 1)  # the claim it had
    assert upload.heartbeat_at is not None  # so the sweep can tell when its worker stopped
    stats = new.get_model("campaigns", "StatisticsResult").objects.get(pk=stats.pk)
    assert (stats.status, stats.queued_at, stats.heartbeat_at) == ("running", started, started)
