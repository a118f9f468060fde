"""The smallest Celery app for bench/broker.py: one task that records how long after it was
sent it started. Its broker comes from BENCH_BROKER_URL (and BENCH_TRANSPORT_OPTIONS, JSON)."""
import json
import os
import time

from celery import Celery

app = Celery("bench_broker")
app.conf.broker_url = os.environ["BENCH_BROKER_URL"]
app.conf.broker_transport = os.environ.get("BENCH_TRANSPORT") or None
app.conf.broker_transport_options = json.loads(os.environ.get("BENCH_TRANSPORT_OPTIONS", "{}"))
app.conf.task_ignore_result = True
app.conf.worker_prefetch_multiplier = 1
app.conf.task_acks_late = True
app.conf.broker_connection_retry_on_startup = True


@app.task(name="bench.started")
def started(sent_at: float) -> None:
    with open(os.environ["BENCH_LATENCY_FILE"], "a") as handle:
        handle.write(f"{time.time() - sent_at}\n")
