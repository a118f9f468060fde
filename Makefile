# The two commands: `make demo` runs the app, `make test` runs the whole suite.
# Without DATABASE_URL both run on the embedded PostgreSQL in .pgdata/, started around each
# command and stopped after it (annotate/embedded_db.py); a DATABASE_URL always wins.
# `make demo` and `make shell` run a real Celery worker with beat next to the web server or the
# shell (annotate/demo.py), its broker the same PostgreSQL unless CELERY_BROKER_URL is set;
# Ctrl-C stops the worker, the server and PostgreSQL.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DB := $(PY) -m annotate.embedded_db run --
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install demo test lint shell db-start db-stop bench-import bench-export clean

$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required"'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

install: $(VENV)/.installed

demo: install
	$(DB) $(PY) -m annotate.demo serve $(HOST) $(PORT)

test: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(DB) $(PY) manage.py check
	$(DB) $(PY) manage.py makemigrations --check --dry-run
	$(DB) $(PY) -m pytest

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

# A Django shell on the demo's data (the embedded server and a worker run for the session).
shell: install
	$(DB) $(PY) -m annotate.demo shell

# Keep the embedded server up between commands (e.g. to run pytest by hand); db-stop ends it.
db-start: install
	$(PY) -m annotate.embedded_db start

db-stop: install
	$(PY) -m annotate.embedded_db stop

bench-import: install
	$(DB) $(PY) bench/import_items.py

bench-export: install
	$(DB) $(PY) bench/export.py

# Fault injection: throwaway PostgreSQL/Redis on ports 55432/56379, gunicorn on 8401.
.PHONY: test-faults
test-faults: install
	$(PY) -m pytest tests/faults -m faults -p no:cacheprovider

# Deletes the embedded database too (the demo's campaigns and answers).
clean:
	test ! -x $(PY) || $(PY) -m annotate.embedded_db stop
	rm -rf $(VENV) .pgdata .pgdata.leases media staticfiles
