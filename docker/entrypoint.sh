#!/bin/sh
# Container entrypoint: wait for PostgreSQL, then run the given command
# (gunicorn, celery worker, celery beat or a manage.py command).
set -eu

if [ -n "${DATABASE_URL:-}" ] && [ "${WAIT_FOR_DB:-1}" = "1" ]; then
  python - <<'PY'
import os, sys, time
import django
from django.db import connection
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotate.settings")
django.setup()
for attempt in range(60):
    try:
        connection.ensure_connection()
        break
    except Exception as exc:  # database not up yet
        print(f"waiting for the database ({exc.__class__.__name__})", file=sys.stderr)
        time.sleep(1)
else:
    sys.exit("the database did not come up in 60 s")
PY
fi

exec "$@"
