"""GET /healthz reports database and broker reachability as JSON."""
import os

import pytest

pytestmark = pytest.mark.django_db


def test_healthz_reports_the_database_and_the_broker(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True
    assert body["database"]["ok"] is True
    assert body["broker"]["ok"] is True
    # Nothing configured: the broker is the project's PostgreSQL (CI sets Redis).
    assert body["broker"]["transport"] == ("redis" if os.environ.get("CELERY_BROKER_URL")
                                           else "postgresql")


def test_healthz_says_503_when_the_broker_is_unreachable(client, settings):
    from annotate.celery import app

    closed_port = "redis://127.0.0.1:1/0"
    settings.CELERY_BROKER_URL = closed_port
    # Celery copies a broker URL from the environment into broker_write_url too (CI sets one);
    # without one the transport is named (the database's), and it would win over the URL.
    previous = app.conf.broker_url, app.conf.broker_write_url, app.conf.broker_transport
    app.conf.broker_url = app.conf.broker_write_url = closed_port
    app.conf.broker_transport = None
    try:
        response = client.get("/healthz")
    finally:
        app.conf.broker_url, app.conf.broker_write_url, app.conf.broker_transport = previous
    assert response.status_code == 503
    assert response.json()["broker"]["ok"] is False
