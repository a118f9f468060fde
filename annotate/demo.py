"""What `make demo` and `make shell` run, inside the embedded PostgreSQL's wrapper: the same
processes as production, a `celery worker` for each queue (beat, for the periodic jobs, inside
the periodic queue's) next to the web server or the shell.

    python -m annotate.demo serve HOST PORT  # migrate, demo_setup, then worker + runserver
    python -m annotate.demo shell            # worker + a Django shell on the demo's data

Each child runs in a session of its own, so Ctrl-C reaches this process (and make) only and
the children are stopped here: SIGTERM to each, then SIGKILL to what is left of its process
group (a worker's pool and beat, runserver's reloaded server) once it has gone or STOP_SECONDS
have passed. The wrapper stops PostgreSQL after this process leaves.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from annotate.celery import PERIODIC_QUEUE, QUEUES

BASE_DIR = Path(__file__).resolve().parent.parent
MANAGE = [sys.executable, str(BASE_DIR / "manage.py")]
# A warm shutdown lets a running job reach its next stored step; longer than this and it is
# killed, and the stale-job sweep queues it again on the next start.
STOP_SECONDS = 10
# Hosts every browser on this machine can reach a server listening on all interfaces through.
ANY_INTERFACE = ("0.0.0.0", "::", "")  # noqa: S104 - names the wildcard, binds nothing


def site_environment(host: str, port: str) -> dict[str, str]:
    """SITE_URL (the links the admin, the API and demo_setup print) and ALLOWED_HOSTS for a
    server on host:port, unless they are set; every child process inherits them."""
    public = "127.0.0.1" if host in ANY_INTERFACE else host
    env = {"SITE_URL": os.environ.get("SITE_URL") or f"http://{public}:{port}"}
    if not os.environ.get("ALLOWED_HOSTS"):
        env["ALLOWED_HOSTS"] = ",".join(dict.fromkeys(["127.0.0.1", "localhost", public]))
    return env


def worker_commands(schedule: Path) -> list[list[str]]:
    """One worker per queue (annotate/celery.py), so that a long statistics computation never
    delays an export nor the periodic expiry, as in production. Each runs its jobs in its own
    process (the solo pool: one process a queue, no pool children), and the periodic queue's
    worker has beat inside it (a demo needs one beat)."""
    commands = []
    for queue in QUEUES:
        command = [sys.executable, "-m", "celery", "-A", "annotate", "worker", "-Q", queue,
                   "-n", f"{queue}@%h", "--pool=solo", "--loglevel=INFO",
                   "--without-gossip", "--without-mingle", "--without-heartbeat"]
        if queue == PERIODIC_QUEUE:
            command += ["--beat", "--schedule", str(schedule)]
        commands.append(command)
    return commands


def serve(host: str, port: str) -> int:
    os.environ.update(site_environment(host, port))
    for step in (["migrate", "--noinput"], ["demo_setup"]):
        code = subprocess.call([*MANAGE, *step])  # noqa: S603 - our own manage.py
        if code:
            return code
    with tempfile.TemporaryDirectory(prefix="annotate-beat-") as beat:
        return supervise([*worker_commands(Path(beat) / "schedule"),
                          [*MANAGE, "runserver", f"{host}:{port}"]])


def shell() -> int:
    with tempfile.TemporaryDirectory(prefix="annotate-beat-") as beat:
        workers = [_start(command, quiet=True)
                   for command in worker_commands(Path(beat) / "schedule")]
        try:
            # Ctrl-C belongs to the shell (it cancels a line); the session ends with Ctrl-D.
            # A handler, not SIG_IGN: an ignored signal stays ignored in the child too.
            previous = signal.signal(signal.SIGINT, lambda _signum, _frame: None)
            try:
                return subprocess.call([*MANAGE, "shell"])  # noqa: S603 - our own manage.py
            finally:
                signal.signal(signal.SIGINT, previous)
        finally:
            _stop(workers)


def supervise(commands: list[list[str]]) -> int:
    """Run the commands until Ctrl-C, SIGTERM or one of them ends; then stop them all."""
    stopping: list[int] = []

    def ask_to_stop(signum, _frame) -> None:
        stopping.append(signum)

    previous = {sig: signal.signal(sig, ask_to_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    children = [_start(command) for command in commands]
    try:
        while not stopping and all(child.poll() is None for child in children):
            time.sleep(0.2)
    finally:
        _stop(children)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if stopping:
        return 0
    ended = next(child for child in children if child.returncode not in (None, 0, -15))
    return ended.returncode if ended.returncode > 0 else 128 - ended.returncode


def _start(command: list[str], *, quiet: bool = False) -> subprocess.Popen:
    output = subprocess.DEVNULL if quiet else None
    return subprocess.Popen(command, cwd=BASE_DIR, start_new_session=True,  # noqa: S603
                            stdout=output, stderr=output)


def _stop(children: list[subprocess.Popen]) -> None:
    for child in children:  # the leader: a worker stops its own pool and beat (warm shutdown)
        if child.poll() is None:
            child.terminate()
    deadline = time.monotonic() + STOP_SECONDS
    for child in children:
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        # The group too: a pool process or the reloader's server may outlive its parent.
        _signal_group(child, signal.SIGKILL)
        child.wait()


def _signal_group(child: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(child.pid, signum)
    except ProcessLookupError:
        pass


def main(argv: list[str]) -> int:
    if argv[:1] == ["serve"] and len(argv) == 3:
        return serve(argv[1], argv[2])
    if argv == ["shell"]:
        return shell()
    print("usage: python -m annotate.demo serve HOST PORT | shell", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
