"""Reachability of the database and the broker, for /healthz and deploy checks."""

import time

from django.conf import settings
from django.db import connection
from django.db.utils import DatabaseError


def _check_database() -> dict:
    started = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        return {"ok": False, "error": str(exc).strip()[:200]}
    return {
        "ok": True,
        "vendor": connection.vendor,
        "ms": round(1000 * (time.perf_counter() - started), 1),
    }


def _check_broker() -> dict:
    from annotate.celery import app

    started = time.perf_counter()
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:  # noqa: BLE001 - any transport error means "unreachable"
        return {"ok": False, "transport": _transport(), "error": str(exc)[:200]}
    return {"ok": True, "transport": _transport(),
            "ms": round(1000 * (time.perf_counter() - started), 1)}


def _transport() -> str:
    """The broker's kind (redis, or postgresql: a database's tables), never its URL."""
    return settings.CELERY_BROKER_URL.partition("://")[0].partition("+")[0]


def health_report() -> dict:
    database = _check_database()
    broker = _check_broker()
    return {"ok": database["ok"] and broker["ok"], "database": database, "broker": broker}
