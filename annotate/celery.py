"""The Celery app. Its broker is CELERY_BROKER_URL, else the project's own PostgreSQL (settings):
tasks always run in a `celery worker` process, which `make demo` starts with the web server.

Every task goes to one of four queues (TASK_ROUTES, the one place that says which), and each
queue has workers of its own (docker-compose.yml, annotate/demo.py; docs/deployment.md), so
that no kind of job waits behind another: a long statistics computation never delays an
export, a judge run over a slow endpoint never delays the statistics, and the periodic jobs
(expiring assignments, the stale-job sweep) always run on time.
"""
import os

from celery import Celery
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotate.settings")

STATISTICS_QUEUE, EXPORTS_QUEUE, JUDGES_QUEUE, PERIODIC_QUEUE = (
    "statistics", "exports", "judges", "periodic")
QUEUES = (STATISTICS_QUEUE, EXPORTS_QUEUE, JUDGES_QUEUE, PERIODIC_QUEUE)
TASK_ROUTES = {
    "campaigns.statistics_compute": {"queue": STATISTICS_QUEUE},
    "campaigns.export_run": {"queue": EXPORTS_QUEUE},
    "campaigns.import_items": {"queue": EXPORTS_QUEUE},
    "campaigns.judge_run": {"queue": JUDGES_QUEUE},
    "campaigns.expire_assignments": {"queue": PERIODIC_QUEUE},
    "campaigns.sweep_stale_jobs": {"queue": PERIODIC_QUEUE},
    "campaigns.export_sweep_stale": {"queue": PERIODIC_QUEUE},
    "campaigns.judge_sweep_stale": {"queue": PERIODIC_QUEUE},
}


def queue_of(task_name: str) -> str:
    """The queue a task is sent to (a task not routed above goes to the periodic queue)."""
    return TASK_ROUTES.get(task_name, {}).get("queue", PERIODIC_QUEUE)


app = Celery("annotate")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_routes = TASK_ROUTES
# A worker started without -Q consumes every queue (a purge empties them all).
app.conf.task_queues = [Queue(name) for name in QUEUES]
app.conf.task_default_queue = PERIODIC_QUEUE
app.autodiscover_tasks()  # each installed app's tasks module
