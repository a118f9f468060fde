"""A gunicorn worker killed (SIGKILL) under load: no acknowledged submit is lost."""
import os
import signal
import time

import pytest

from . import client, stack

pytestmark = pytest.mark.faults


def test_killing_gunicorn_workers_under_load_loses_no_acknowledged_submit(web, pg, make_study):
    study = make_study(assignments=48, per_assignment=8)
    tokens, per = study["tokens"], study["per_assignment"]
    keys = client.form_keys(tokens)
    outcome, thread = client.in_background(tokens, per, keys=keys, threads=6, deadline_s=60,
                                           pause_s=0.03)

    killed = []
    for _ in range(2):  # two kills, a second apart, each while requests are in flight
        stack.wait_until(lambda: len(outcome.acknowledged) >= 40 * (len(killed) + 1), 30,
                         "submits to flow")
        victim = web.children()[0]
        os.kill(victim, signal.SIGKILL)
        killed.append(victim)
        time.sleep(1)
    thread.join(90)

    print(outcome.summary())
    assert not outcome.server_errors, outcome.server_errors[:3]
    assert len(outcome.acknowledged) == len(tokens) * per, "some workers could not finish"
    client.assert_no_acknowledged_submit_lost(outcome, pg, tokens)
    # The master replaced the killed workers.
    stack.wait_until(lambda: len(web.children()) == 3 and not set(killed) & set(web.children()),
                     20, "gunicorn to replace its workers")
