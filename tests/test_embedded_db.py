"""The embedded PostgreSQL: a throwaway cluster in a temporary folder starts, keeps data, stops."""
import os
import shutil
import sys
import tempfile
from pathlib import Path

import psycopg2
import pytest

from annotate import embedded_db


@pytest.fixture
def pgdata():
    # Not under pytest's tmp_path: each pytest session resets /tmp/pytest-of-<user> to 0700,
    # which locks out the system user pgserver runs PostgreSQL as when we are root. Short,
    # too: a Unix socket's path is limited to about 100 characters.
    folder = Path(tempfile.mkdtemp(prefix="annotate-pg-")) / "data"
    yield folder
    embedded_db.stop(folder)
    shutil.rmtree(folder.parent)


def _count(url_host, sql_setup=None) -> int:
    with psycopg2.connect(host=url_host, user="postgres", dbname=embedded_db.DATABASE) as conn:
        with conn.cursor() as cursor:
            if sql_setup:
                cursor.execute(sql_setup)
            cursor.execute("SELECT count(*) FROM notes")
            return cursor.fetchone()[0]


def test_it_creates_starts_and_stops_a_cluster_whose_data_survives_a_restart(pgdata):
    url = embedded_db.start(pgdata)
    assert url == f"postgres://postgres@/annotate?host={embedded_db.socket_dir(pgdata)}"
    assert embedded_db.is_running(pgdata)
    setup = "CREATE TABLE notes (body text); INSERT INTO notes VALUES ('kept')"
    assert _count(str(embedded_db.socket_dir(pgdata)), setup) == 1

    embedded_db.stop(pgdata)
    assert not embedded_db.is_running(pgdata)
    assert not (pgdata / "postmaster.pid").exists()

    embedded_db.start(pgdata)
    assert _count(str(embedded_db.socket_dir(pgdata))) == 1


def test_the_last_wrapper_to_leave_stops_the_server(pgdata):
    other_wrapper = os.getppid()  # a live process holding a lease, like a second `make demo`
    with embedded_db.running(pgdata):
        with embedded_db._leases(pgdata) as leases:
            leases.add(other_wrapper)
    assert embedded_db.is_running(pgdata), "it stopped the server under another wrapper"
    with embedded_db._leases(pgdata) as leases:
        leases.discard(other_wrapper)
    with embedded_db.running(pgdata):
        pass
    assert not embedded_db.is_running(pgdata)


def test_a_server_started_by_start_outlives_the_wrappers(pgdata):
    embedded_db.start(pgdata, keep=True)
    with embedded_db.running(pgdata):
        pass
    assert embedded_db.is_running(pgdata)


def test_a_dead_wrappers_lease_does_not_keep_the_server_up(pgdata):
    embedded_db.start(pgdata)
    with embedded_db._leases(pgdata) as leases:
        leases.add(2**22 + 12345)  # beyond pid_max's default: no such process
    with embedded_db.running(pgdata):
        pass
    assert not embedded_db.is_running(pgdata)


def test_run_stops_the_server_even_when_the_command_fails(pgdata, monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    script = "import os, sys; print(os.environ['DATABASE_URL']); sys.exit(3)"
    assert embedded_db.run([sys.executable, "-c", script], pgdata=pgdata) == 3
    assert not embedded_db.is_running(pgdata)


def test_a_database_url_wins_and_nothing_embedded_starts(pgdata, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/elsewhere")
    script = "import os, sys; sys.exit(os.environ['DATABASE_URL'].endswith('/elsewhere') and 7)"
    assert embedded_db.run([sys.executable, "-c", script], pgdata=pgdata) == 7
    assert not pgdata.exists()


def test_the_url_names_the_socket_in_the_data_directory_when_nothing_runs(tmp_path):
    assert embedded_db.database_url(tmp_path) == f"postgres://postgres@/annotate?host={tmp_path}"
    assert not embedded_db.is_running(tmp_path)
    assert os.listdir(tmp_path) == []
