"""gunicorn as production runs it (docker/gunicorn.conf.py) on a free loopback port, on the test
database, for the attacks that need real worker processes."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.celery_workers import child_database_url

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def gunicorn(tmp_path: Path, env: dict[str, str]):
    """Start it with these settings on top of the environment; yield its base URL once
    /healthz answers; kill its process group afterwards."""
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": child_database_url(),
           "GUNICORN_BIND": f"127.0.0.1:{port}", "MEDIA_ROOT": str(tmp_path),
           "PYTHONUNBUFFERED": "1", **env}
    log = (tmp_path / "gunicorn.log").open("ab")
    proc = subprocess.Popen(  # noqa: S603 - fixed argv, our own server
        [sys.executable, "-m", "gunicorn", "-c", "docker/gunicorn.conf.py",
         "annotate.wsgi:application"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=2).close()  # noqa: S310
                break
            except urllib.error.HTTPError:
                break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail("gunicorn did not start: " + (tmp_path / "gunicorn.log").read_text())
        yield base
    finally:
        os.killpg(proc.pid, 9)
        proc.wait(timeout=10)
        log.close()
