"""Test-only routes: a slow SQL statement and a crash, under /api/ and on a page."""
from django.db import connection
from django.urls import path


def slow_query(request):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_sleep(2)")
    raise AssertionError("the statement timeout did not stop the query")


def crash(request):
    raise RuntimeError("a real bug")


handler500 = "annotate.http.outage.server_error"  # as in annotate/urls.py

urlpatterns = [
    path("api/slow/", slow_query),
    path("admin/slow/", slow_query),
    path("api/crash/", crash),
    path("crash/", crash),
]
