"""Test-only routes: views that fail the way a lost database connection does."""
from django.db.utils import InterfaceError, OperationalError
from django.urls import path


def lost_connection(request):
    raise OperationalError("server closed the connection unexpectedly")


def closed_connection(request):
    raise InterfaceError("connection already closed")


def other_error(request):
    raise RuntimeError("a real bug")


urlpatterns = [
    path("a/tok/1/", lost_connection),
    path("closed/", closed_connection),
    path("bug/", other_error),
]
