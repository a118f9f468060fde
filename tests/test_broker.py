"""The broker when CELERY_BROKER_URL is unset (annotate/broker.py): kombu's SQLAlchemy transport
on PostgreSQL, safe when several processes meet a fresh database at once."""
import subprocess
import sys
import time
import uuid

import psycopg2
import pytest
from django.db import connection

from annotate.embedded_db import sqla_broker_url

from .celery_workers import ROOT

# Each process waits for the same instant, then opens the broker and sends to the same new
# queue: on a fresh database they all create the tables and the queue's row together.
CHILD = """
import sys, time
from kombu import Connection
url, start = sys.argv[1], float(sys.argv[2])
time.sleep(max(0, start - time.time()))
with Connection(url, transport="annotate.broker:Transport") as conn:
    queue = conn.SimpleQueue("race")
    queue.put({"from": sys.argv[3]})
    queue.close()
"""


@pytest.fixture
def fresh_database():
    db = connection.settings_dict
    name = f"broker_race_{uuid.uuid4().hex[:8]}"
    admin = psycopg2.connect(dbname="postgres", user=db["USER"], password=db["PASSWORD"],
                             host=db["HOST"], port=db["PORT"] or None)
    admin.autocommit = True
    admin.cursor().execute(f'CREATE DATABASE "{name}"')
    try:
        yield sqla_broker_url({**db, "NAME": name})
    finally:
        admin.cursor().execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def test_processes_starting_together_on_a_fresh_database_all_get_the_broker(fresh_database):
    start = time.time() + 3.0
    children = [subprocess.Popen([sys.executable, "-c", CHILD, fresh_database, str(start),  # noqa: S603
                                  str(n)], cwd=ROOT, stderr=subprocess.PIPE)
                for n in range(5)]
    failures = [child.stderr.read().decode()[-600:] for child in children
                if child.wait(timeout=60) != 0]
    assert not failures, failures[0]
    with psycopg2.connect(fresh_database) as check, check.cursor() as cur:
        cur.execute("SELECT count(*) FROM kombu_queue WHERE name = 'race'")
        assert cur.fetchone()[0] == 1
        cur.execute("SELECT count(*) FROM kombu_message")
        assert cur.fetchone()[0] == 5
