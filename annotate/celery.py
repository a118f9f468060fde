"""The Celery app. Its broker is CELERY_BROKER_URL, else the project's own PostgreSQL (settings):
tasks always run in a `celery worker` process, which `make demo` starts with the web server."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotate.settings")

app = Celery("annotate")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()  # each installed app's tasks module
