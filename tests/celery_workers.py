"""Celery in the tests: a real `celery worker` process on the test database, or eager tasks.

Nothing is configured on a fresh clone, so the broker is the test database itself (kombu's
SQLAlchemy transport, as `make demo` runs it); CELERY_BROKER_URL (Redis in CI) wins. Tasks are
queued, not run, unless a test starts a worker (`start_worker`, `celery_worker`) or asks for
them to run in its own process (`celery_eager`). The fixtures are imported by tests/conftest.py.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from django.conf import settings
from django.db import connection

from annotate.celery import QUEUES, app
from annotate.embedded_db import sqla_broker_url

ROOT = Path(__file__).resolve().parents[1]


def child_database_url() -> str:
    """DATABASE_URL of pytest-django's test database (test_<name>), for a child process."""
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    if db["HOST"].startswith("/"):  # a socket directory (the embedded server)
        return f"postgres://{auth}@/{db['NAME']}?host={db['HOST']}"
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def use_test_broker() -> None:
    """Point this process's Celery at the test database when no broker is configured: a task
    queued by a test never lands in the development database's queue."""
    if os.environ.get("CELERY_BROKER_URL"):
        return
    db = settings.DATABASES["default"]
    name = (db.get("TEST") or {}).get("NAME") or f"test_{db['NAME']}"
    url = sqla_broker_url({**db, "NAME": name})
    settings.CELERY_BROKER_URL = url
    app.conf.broker_url = url
    # No idle pooled connection: pytest-django drops the test database at the end of the run.
    from sqlalchemy.pool import NullPool

    app.conf.broker_transport_options = {"poolclass": NullPool}


class CeleryWorker:
    """`celery -A annotate worker` in its own process group, killed for sure at teardown."""

    def __init__(self, env: dict, log: Path, name: str, *, beat: bool = False,
                 queues: tuple[str, ...] = QUEUES, concurrency: int = 1):
        self.log = log
        self.handle = log.open("ab")
        argv = [sys.executable, "-m", "celery", "-A", "annotate", "worker", "--loglevel=INFO",
                "--pool=prefork", f"--concurrency={concurrency}", "-n", f"{name}@%h",
                "-Q", ",".join(queues),
                "--without-gossip", "--without-mingle", "--without-heartbeat"]
        if beat:
            argv += ["--beat", "--schedule", str(log.with_suffix(".beat"))]
        self.proc = subprocess.Popen(  # noqa: S603 - fixed argv, our own worker
            argv, cwd=ROOT, env=env, stdout=self.handle, stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"the worker exited ({self.proc.returncode}):\n{self.log.read_text()}")
            if b" ready." in self.log.read_bytes():
                return
            time.sleep(0.1)
        pytest.fail(f"the worker did not start in {timeout}s:\n{self.log.read_text()}")

    def pool_children(self) -> list[psutil.Process]:
        return psutil.Process(self.proc.pid).children(recursive=True)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        self.handle.close()


def drop_queued_messages() -> None:
    """Messages of earlier tests (queued, or a killed worker's unacked one) must not reach this
    test's worker."""
    app.control.purge()
    with app.connection_for_write() as conn:
        channel = conn.default_channel
        if getattr(settings, "CELERY_BROKER_TRANSPORT", None):  # the database's tables
            # Delivered messages stay in the table, invisible; a killed worker's never return.
            channel.session.query(channel.message_cls).delete(synchronize_session=False)
            channel.session.commit()
        else:
            channel.client.delete("unacked", "unacked_index", "unacked_mutex")


@pytest.fixture
def start_worker(tmp_path, settings):
    """start_worker(name, beat=False, queues=QUEUES, concurrency=1, extra_env=None) -> a ready
    worker sharing this
    test's database, broker and storage, consuming those queues (every one by default); every
    one it started is killed at the end of the test."""
    media = tmp_path / "media"
    settings.STORAGES = {**settings.STORAGES, "exports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(media / "exports")}}}
    env = {**os.environ, "DATABASE_URL": child_database_url(), "MEDIA_ROOT": str(media),
           "CELERY_BROKER_URL": settings.CELERY_BROKER_URL, "EXPORT_CHUNK_SIZE": "5",
           "EXPORT_SQL_CHUNK_SIZE": "5", "PYTHONUNBUFFERED": "1"}
    drop_queued_messages()
    previous, app.conf.task_always_eager = app.conf.task_always_eager, False
    workers: list[CeleryWorker] = []

    def start(name: str, *, beat: bool = False, queues: tuple[str, ...] = QUEUES,
              concurrency: int = 1, extra_env: dict | None = None) -> CeleryWorker:
        # The providers as the test declared them by then (a stand-in is one).
        providers = json.dumps(settings.LLM_PROVIDERS)
        worker = CeleryWorker({**env, "LLM_PROVIDERS": providers, **(extra_env or {})},
                              tmp_path / f"{name}.log", name, beat=beat, queues=queues,
                              concurrency=concurrency)
        workers.append(worker)
        worker.wait_ready()
        return worker

    yield start
    for worker in workers:
        worker.kill()
    app.conf.task_always_eager = previous
    drop_queued_messages()


@pytest.fixture
def celery_worker(start_worker):
    """One ready `celery worker` process for this test."""
    return start_worker("worker")


@pytest.fixture
def celery_eager():
    """Tasks run in this process as they are sent: for tests of a job's effect, not its queue."""
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous
