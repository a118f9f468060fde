"""Throwaway servers for the fault tests: PostgreSQL, Redis, gunicorn, a Celery worker (127.0.0.1).

Each runs from fixed paths under /tmp on our own ports, so a run that was interrupted is cleaned
up by the next one; none of them is the shared PostgreSQL or Redis that others use.
"""
from __future__ import annotations

import glob
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
PG_PORT = 55432
REDIS_PORT = 56379
WEB_PORT = 8401
WORK = Path("/tmp/annotate-faults")  # noqa: S108 - fixed so that leftovers are found and removed
PG_DATA = WORK / "pg"
DB_NAME = "annotate_faults"


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.3)
        return sock.connect_ex((HOST, port)) == 0


def wait_until(predicate, timeout: float, what: str, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


def pg_bindir() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if found:
        return os.path.dirname(found[-1])
    pg_ctl = shutil.which("pg_ctl")
    return os.path.dirname(pg_ctl) if pg_ctl else None


def missing_tools() -> str | None:
    if not pg_bindir():
        return "PostgreSQL server binaries (initdb, pg_ctl) not found"
    if not shutil.which("redis-server"):
        return "redis-server not found"
    return None


class PostgresCluster:
    """A private PostgreSQL instance (initdb + pg_ctl) on PG_PORT, run as the postgres user."""

    def __init__(self):
        self.bindir = pg_bindir()
        self.as_root = os.geteuid() == 0
        self.log = WORK / "pg.log"

    def _run(self, *args: str, check: bool = True, timeout: float = 60):
        command = [os.path.join(self.bindir, args[0]), *args[1:]]
        if self.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, check=check, capture_output=True, text=True,  # noqa: S603
                              timeout=timeout)

    def create(self) -> None:
        if (PG_DATA / "postmaster.pid").exists():  # left over from an interrupted run
            self._run("pg_ctl", "-D", str(PG_DATA), "stop", "-m", "immediate", check=False)
        shutil.rmtree(PG_DATA, ignore_errors=True)
        PG_DATA.mkdir(parents=True)
        if self.as_root:
            shutil.chown(PG_DATA, "postgres", "postgres")
            shutil.chown(WORK, "postgres")
        self._run("initdb", "-D", str(PG_DATA), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--no-sync")
        if port_open(PG_PORT):
            raise RuntimeError(f"port {PG_PORT} is taken by another program")
        self.start()
        subprocess.run(["psql", "-q", "-h", HOST, "-p", str(PG_PORT), "-U", "postgres",  # noqa: S603, S607
                        "-c", f"CREATE DATABASE {DB_NAME}"], check=True, capture_output=True,
                       timeout=30)

    def start(self) -> None:
        options = (f"-p {PG_PORT} -c listen_addresses={HOST} -k {PG_DATA} "
                   "-c max_connections=60 -c shared_buffers=32MB")
        command = ("pg_ctl", "-D", str(PG_DATA), "-o", options, "-l", str(self.log), "-w",
                   "-t", "30", "start")
        started = self._run(*command, check=False)
        if started.returncode != 0:  # once, on a CI machine, for a reason its output did not keep
            time.sleep(2)
            started = self._run(*command, check=False)
        if started.returncode != 0:
            log = self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""
            raise RuntimeError(f"pg_ctl start failed ({started.returncode}): "
                               f"{started.stdout}{started.stderr}\n{self.log}:\n{log}")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(PG_DATA), "-m", mode, "-w", "-t", "30", "stop",
                  check=False)

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(PG_DATA, ignore_errors=True)

    @property
    def url(self) -> str:
        return f"postgres://postgres@{HOST}:{PG_PORT}/{DB_NAME}"

    def connect(self):
        import psycopg2

        return psycopg2.connect(host=HOST, port=PG_PORT, user="postgres", dbname=DB_NAME,
                                connect_timeout=5)


class RedisServer:
    """A private redis-server on REDIS_PORT that keeps nothing on disk."""

    def __init__(self):
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        if port_open(REDIS_PORT):  # left over from an interrupted run: it is ours (fixed port)
            subprocess.run(  # noqa: S603
                ["redis-cli", "-p", str(REDIS_PORT), "shutdown", "nosave"],  # noqa: S607
                           capture_output=True, timeout=10, check=False)
            wait_until(lambda: not port_open(REDIS_PORT), 10, "the old redis to stop")
        self.process = subprocess.Popen(  # noqa: S603
            ["redis-server", "--port", str(REDIS_PORT), "--bind", HOST, "--save", "",  # noqa: S607
             "--appendonly", "no", "--dir", str(WORK)],
            stdout=open(WORK / "redis.log", "ab"), stderr=subprocess.STDOUT,  # noqa: SIM115
        )
        wait_until(lambda: port_open(REDIS_PORT), 15, "redis to listen")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.process = None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


def server_env(pg: PostgresCluster, **extra: str) -> dict[str, str]:
    """The environment of a production deployment, pointed at the throwaway services."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DATABASE_", "CELERY_", "REDIS_", "CACHE_", "GUNICORN_",
                                "RATELIMIT_", "CLAIM_", "EXPORT_", "SECURE_", "DJANGO_"))}
    env.update({
        "DEBUG": "false",
        "SECRET_KEY": "faults-" + secrets.token_urlsafe(48),
        "ALLOWED_HOSTS": f"{HOST},localhost",
        "DATABASE_URL": pg.url,
        "CELERY_BROKER_URL": f"redis://{HOST}:{REDIS_PORT}/0",
        "REDIS_URL": f"redis://{HOST}:{REDIS_PORT}/1",
        "SECURE_SSL_REDIRECT": "false",  # no TLS proxy in front here
        "STATIC_ROOT": str(WORK / "static"),
        "MEDIA_ROOT": str(WORK / "media"),
        "GUNICORN_BIND": f"{HOST}:{WEB_PORT}",
        "GUNICORN_WORKERS": "3",
        "GUNICORN_ACCESSLOG": "",
        # All simulated workers share 127.0.0.1: only the per-token limit applies here.
        "RATELIMIT_PER_ADDRESS": "1000000",
        "CLAIM_LIMIT_PER_ADDRESS": "1000000",
        "GUNICORN_TIMEOUT": "20",
        "LOG_LEVEL": "WARNING",
        # Exports: small chunks (frequent heartbeats, a kill lands mid-export) and a short
        # staleness limit, so the sweep recovers a job whose worker died within seconds.
        "EXPORT_CHUNK_SIZE": "250",
        "EXPORT_SQL_CHUNK_SIZE": "100",  # csv goes through COPY: many small COPYs, not one
        "EXPORT_STALE_SECONDS": "6",
        "PYTHONUNBUFFERED": "1",
    })
    env.update(extra)
    return env


def manage(env: dict[str, str], *args: str, timeout: float = 180) -> str:
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,  # noqa: S603
                            capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stderr[-3000:]}")
    return result.stdout


def scenario(env: dict[str, str], *args: str, timeout: float = 180) -> str:
    result = subprocess.run(  # noqa: S603
        [sys.executable, str(ROOT / "tests" / "faults" / "scenario.py"), *args], cwd=ROOT,
        env=env, capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode:
        raise RuntimeError(f"scenario {' '.join(args)} failed:\n{result.stderr[-3000:]}")
    return result.stdout


class Service:
    """A long-running child process (gunicorn master, celery worker) in its own process group."""

    def __init__(self, name: str, command: list[str], env: dict[str, str]):
        self.name, self.command, self.env = name, command, env
        self.process: subprocess.Popen | None = None
        self.log = WORK / f"{name}.log"
        self.offset = 0

    def start(self) -> None:
        self.offset = self.log.stat().st_size if self.log.exists() else 0
        self.process = subprocess.Popen(  # noqa: S603
            self.command, cwd=ROOT, env=self.env, start_new_session=True,
            stdout=open(self.log, "ab"), stderr=subprocess.STDOUT,  # noqa: SIM115
        )

    def children(self) -> list[int]:
        import psutil

        if not self.process:
            return []
        try:
            return [c.pid for c in psutil.Process(self.process.pid).children()]
        except psutil.NoSuchProcess:
            return []

    def kill_group(self) -> None:
        if self.process and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait(10)

    def stop(self, timeout: float = 20) -> None:
        if not self.process or self.process.poll() is not None:
            return
        os.kill(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill_group()
        try:  # children that outlived their master
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def log_since_start(self) -> str:
        """What the process wrote since its last start."""
        try:
            with open(self.log, "rb") as handle:
                handle.seek(self.offset)
                return handle.read().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except FileNotFoundError:
            return ""


def gunicorn(env: dict[str, str]) -> Service:
    return Service("gunicorn", [sys.executable, "-m", "gunicorn", "-c", "docker/gunicorn.conf.py",
                                "annotate.wsgi:application"], env)


def celery_worker(env: dict[str, str], name: str = "celery") -> Service:
    return Service(name, [sys.executable, "-m", "celery", "-A", "annotate", "worker",
                          "--loglevel", "INFO", "--concurrency", "1", "-n", f"{name}@faults",
                          "--without-gossip", "--without-mingle"], env)


def web_ready() -> bool:
    try:
        with urllib.request.urlopen(f"http://{HOST}:{WEB_PORT}/healthz", timeout=2):  # noqa: S310
            return True
    except urllib.error.HTTPError:
        return True  # it answers (503 while the broker or database is down)
    except OSError:
        return False
