"""PostgreSQL restarted while workers submit: "please retry", no 500, no acknowledged loss."""
import time

import pytest

from . import client, stack

pytestmark = pytest.mark.faults

OUTAGE_SECONDS = 3


def test_a_database_restart_while_workers_submit(web, pg, make_study):
    study = make_study(assignments=48, per_assignment=10)
    tokens, per = study["tokens"], study["per_assignment"]
    keys = client.form_keys(tokens)
    outcome, thread = client.in_background(tokens, per, keys=keys, threads=6, deadline_s=90,
                                           pause_s=0.1, retry_pause_s=0.25)
    stack.wait_until(lambda: len(outcome.acknowledged) >= 40, 30, "submits to flow")

    pg.stop("fast")
    try:
        time.sleep(0.5)
        # Pages shown during the outage ask to retry too (page and JSON), no trace.
        page = client.Connection().request("GET", f"/a/{tokens[-1]}/1/")
        as_json = client.Connection().request("GET", f"/a/{tokens[-1]}/1/",
                                              headers={"Accept": "application/json"})
        time.sleep(OUTAGE_SECONDS)
        during = len(outcome.acknowledged)
    finally:
        pg.start()
    thread.join(120)

    print(outcome.summary(), f"retry answers: {outcome.retry_pages}")
    assert page[0] == 503 and b"try again" in page[2].lower() and b"Traceback" not in page[2]
    assert page[1].get("retry-after") == "5"
    assert as_json[0] == 503 and b'"code": "unavailable"' in as_json[2]
    assert outcome.retry_pages > 0, "no submit met the outage"
    assert not outcome.server_errors, outcome.server_errors[:3]
    assert not outcome.unclear_503, outcome.unclear_503[:3]
    assert len(outcome.acknowledged) == len(tokens) * per, "workers could not finish afterwards"
    assert during < len(tokens) * per
    client.assert_no_acknowledged_submit_lost(outcome, pg, tokens)
