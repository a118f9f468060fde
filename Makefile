# The two commands: `make demo` runs the app, `make test` runs the whole suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install demo test test-fast lint bench-import bench-export clean

$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required"'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

install: $(VENV)/.installed

demo: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo_setup
	$(PY) manage.py runserver $(HOST):$(PORT)

test: install
	$(VENV)/bin/ruff check .
	$(PY) manage.py check
	$(PY) manage.py makemigrations --check --dry-run
	$(PY) -m pytest

lint: install
	$(VENV)/bin/ruff check .

bench-import: install
	$(PY) bench/import_items.py

bench-export: install
	$(PY) bench/export.py

# Fault injection (issue 7): throwaway PostgreSQL/Redis on ports 55432/56379, gunicorn on 8401.
.PHONY: test-faults
test-faults: install
	$(PY) -m pytest tests/faults -m faults -p no:cacheprovider

clean:
	rm -rf $(VENV) db.sqlite3 media staticfiles
