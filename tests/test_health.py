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

    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    previous = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:1/0"
    try:
        response = client.get("/healthz")
    finally:
        app.conf.broker_url = previous
    assert response.status_code == 503
    assert response.json()["broker"]["ok"] is False
