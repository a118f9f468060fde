"""GET /healthz reports database and broker reachability as JSON."""
import pytest

pytestmark = pytest.mark.django_db


def test_healthz_reports_the_database_and_the_broker(client, settings):
    settings.CELERY_BROKER_URL = ""
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True
    assert body["database"]["ok"] is True
    assert body["broker"] == {"ok": True, "mode": "eager",
                              "detail": "no broker configured; tasks run in-process"}


def test_healthz_says_503_when_the_broker_is_unreachable(client, settings):
    from annotate.celery import app

    closed_port = "redis://127.0.0.1:1/0"
    settings.CELERY_BROKER_URL = closed_port
    # Celery copies a broker URL from the environment into broker_write_url too (CI sets one).
    previous = app.conf.broker_url, app.conf.broker_write_url
    app.conf.broker_url = app.conf.broker_write_url = closed_port
    try:
        response = client.get("/healthz")
    finally:
        app.conf.broker_url, app.conf.broker_write_url = previous
    assert response.status_code == 503
    assert response.json()["broker"]["ok"] is False
