"""Fault tests run only by `make test-faults` (-m faults); they start their own servers."""
import itertools
import json
import os

import pytest

from . import stack

_studies = itertools.count(1)
SELECT_HINT = "fault-injection tests run with `make test-faults` (pytest -m faults)"


def pytest_collection_modifyitems(config, items):
    selected = "faults" in (config.getoption("markexpr") or "") or os.environ.get("RUN_FAULTS")
    missing = stack.missing_tools()
    for item in items:
        if not item.get_closest_marker("faults"):
            continue
        if not selected:
            item.add_marker(pytest.mark.skip(reason=SELECT_HINT))
        elif missing:
            item.add_marker(pytest.mark.skip(reason=f"fault tests need {missing}"))


@pytest.fixture(scope="session")
def pg():
    stack.WORK.mkdir(parents=True, exist_ok=True)
    cluster = stack.PostgresCluster()
    cluster.create()
    yield cluster
    cluster.destroy()


@pytest.fixture(scope="session")
def redis():
    server = stack.RedisServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def env(pg, redis):
    environment = stack.server_env(pg)
    stack.manage(environment, "migrate", "--noinput")
    stack.manage(environment, "collectstatic", "--noinput")
    return environment


@pytest.fixture(scope="session")
def web(env):
    server = stack.gunicorn(env)
    server.start()
    try:
        stack.wait_until(stack.web_ready, 40, "gunicorn to answer")
    except TimeoutError:
        server.stop()
        raise AssertionError("gunicorn did not start:\n" + server.log_tail()) from None
    yield server
    server.stop()


@pytest.fixture(scope="session")
def celery_worker(env):
    worker = stack.celery_worker(env)
    worker.start()
    try:
        stack.wait_until(lambda: "ready." in worker.log_since_start(), 60, "the celery worker")
    except TimeoutError:
        worker.stop()
        raise AssertionError("celery worker did not start:\n" + worker.log_tail()) from None
    yield worker
    worker.stop()


@pytest.fixture(scope="session")
def api_token(env) -> str:
    return json.loads(stack.scenario(env, "researcher"))["api_token"]


@pytest.fixture
def make_study(env):
    def make(assignments: int, per_assignment: int) -> dict:
        slug = f"faults-{os.getpid()}-{next(_studies)}-{assignments}"
        return json.loads(stack.scenario(env, "study", slug, str(assignments),
                                         str(per_assignment)))

    return make
