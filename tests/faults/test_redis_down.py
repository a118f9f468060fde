"""Redis stopped: worker pages keep working; an export fails clearly and its job is marked failed
with the reason; once Redis is back, a new export succeeds."""
import pytest

from . import client, stack

pytestmark = pytest.mark.faults


def test_worker_pages_work_and_exports_fail_clearly_while_redis_is_down(
        web, pg, redis, celery_worker, make_study, api_token):
    study = make_study(assignments=6, per_assignment=4)
    slug, tokens, per = study["slug"], study["tokens"], study["per_assignment"]
    keys = client.form_keys(tokens)

    redis.stop()
    try:
        entry = client.Connection().request(
            "GET", f"/c/{slug}/?PROLIFIC_PID=5e0000000000000000000001&STUDY_ID=s1&SESSION_ID=x1")
        assert entry[0] == 200, entry[2][:500]
        outcome = client.run_workers(tokens, per, keys=keys, threads=2, deadline_s=40)
        print(outcome.summary())
        assert set(outcome.statuses) == {200}, outcome.summary()  # the next page, at once
        assert len(outcome.acknowledged) == len(tokens) * per
        client.assert_no_acknowledged_submit_lost(outcome, pg, tokens)

        status, body = client.api("POST", f"/api/campaigns/{slug}/exports/", api_token,
                                  {"format": "csv"})
        print(status, body)
        assert status == 503, body
        assert "could not be started" in body["message"]
        job = client.latest_export_job(pg, slug)
        assert job["status"] == "failed" and "unreachable" in job["error"], job
    finally:
        redis.start()

    # The web and the Celery worker reconnect by themselves; a new export goes through.
    def export_succeeds():
        status, body = client.api("POST", f"/api/campaigns/{slug}/exports/", api_token,
                                  {"format": "csv"})
        return body["id"] if status == 202 else None

    job_id = stack.wait_until(export_succeeds, 30, "the API to accept an export", interval=1)
    job = client.wait_finished(pg, job_id, 90)
    assert job["status"] == "done" and job["rows_written"] == len(tokens) * per, job
