"""Putting a task on the queue by its name, so that services never import campaigns.tasks
(the tasks import the services, inside their bodies).

With eager Celery (a test that asks for it) the task runs here, in this process; otherwise it
is published and a worker runs it. A broker that cannot be reached within a second or two is
QueueUnreachable: the caller then records why on its job and answers 503.
"""
from __future__ import annotations

from typing import Any

from kombu.exceptions import KombuError

from annotate.celery import app

# Publishing gives up quickly when the broker is down: someone is waiting on a page.
ENQUEUE_RETRY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}


class QueueUnreachable(Exception):
    """The task could not be published: the broker is down or refuses the connection."""


def runs_in_process() -> bool:
    """Whether a sent task runs at once in this process (eager Celery, in tests)."""
    return bool(app.conf.task_always_eager)


def send(task_name: str, **kwargs: Any) -> None:
    """Queue the task named `task_name` with these keyword arguments (or run it, eagerly)."""
    task = _task(task_name)
    if runs_in_process():
        task.apply_async(kwargs=kwargs)  # errors of the task itself are the task's, not ours
        return
    try:
        task.apply_async(kwargs=kwargs, retry=True, retry_policy=ENQUEUE_RETRY)
    except (KombuError, OSError) as exc:
        raise QueueUnreachable(str(exc) or type(exc).__name__) from None


def _task(name: str):
    if name not in app.tasks:
        # Celery's autodiscovery imports each installed app's tasks module on this signal
        # (a worker sends it at start; a web process, here, the first time it sends).
        app.loader.import_default_modules()
    return app.tasks[name]
