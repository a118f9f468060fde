"""`make demo` as a newcomer runs it (no DATABASE_URL, no CELERY_BROKER_URL, PORT given): the
embedded PostgreSQL, a real Celery worker with beat and the web server start; the links it
prints answer 200 on that port; Ctrl-C to make's process group leaves no process behind."""
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest

from annotate import embedded_db

pytestmark = pytest.mark.broker  # starts a worker, a server and a cluster of its own

ROOT = Path(__file__).resolve().parents[1]
NOT_A_NEWCOMERS = ("DATABASE_URL", "CELERY_BROKER_URL", "SITE_URL", "ALLOWED_HOSTS",
                   "DJANGO_SETTINGS_MODULE", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def pgdata():
    # Not under tmp_path, short: see tests/test_embedded_db.py.
    folder = Path(tempfile.mkdtemp(prefix="annotate-pg-")) / "data"
    yield folder
    embedded_db.stop(folder)
    shutil.rmtree(folder.parent)


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 - our server
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_make_demo_serves_its_links_with_a_worker_and_ctrl_c_leaves_nothing_behind(pgdata):
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in NOT_A_NEWCOMERS}
    env["ANNOTATE_PGDATA"] = str(pgdata)
    venv = Path(os.environ.get("VIRTUAL_ENV") or ROOT / ".venv")
    argv = [shutil.which("make") or "make", "--no-print-directory", "-o", f"{venv}/.installed",
            "demo", f"PORT={port}", f"VENV={venv}"]
    make = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE,  # noqa: S603
                            stderr=subprocess.STDOUT, start_new_session=True)
    lines: list[str] = []
    processes: list[psutil.Process] = []
    reader = threading.Thread(target=lambda: lines.extend(
        line.decode(errors="replace") for line in make.stdout), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 180
        while not (any(" ready." in x for x in lines)
                   and any("Quit the server" in x for x in lines)):
            assert make.poll() is None and time.monotonic() < deadline, "".join(lines)
            time.sleep(0.2)
        out = "".join(lines)
        links = re.findall(r"(?:Admin|Try it):\s+(\S+)", out)
        assert len(links) == 7, out  # the admin and six campaigns
        assert all(link.startswith(f"http://127.0.0.1:{port}/") for link in links)
        for link in links:
            assert _status(link) == 200, link
        assert re.search(rf"Prolific:\s+http://127\.0\.0\.1:{port}/c/", out)

        processes = psutil.Process(make.pid).children(recursive=True)
        commands = [" ".join(p.cmdline()) for p in processes]
        assert any("celery" in c and "worker" in c and "--beat" in c for c in commands)
        for queue in ("statistics", "exports", "judges", "periodic"):  # one worker each
            assert any("celery" in c and f"-Q {queue} " in c for c in commands), commands
        assert any("runserver" in c for c in commands)
        assert embedded_db.is_running(pgdata)
    finally:
        os.killpg(make.pid, signal.SIGINT)  # Ctrl-C at the terminal
        try:
            make.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(make.pid, signal.SIGKILL)
            raise
    gone, alive = psutil.wait_procs(processes, timeout=5)
    assert not alive, [p.cmdline() for p in alive]
    assert not embedded_db.is_running(pgdata)
    left = [p.info["cmdline"] for p in psutil.process_iter(["cmdline"])
            if str(pgdata) in " ".join(p.info["cmdline"] or [])]
    assert not left
