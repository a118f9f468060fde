"""Shared fixtures: named researchers, campaign factories, and the skip rules for services."""
import os
import shutil

import pytest
from django.conf import settings

from tests.celery_workers import celery_eager, celery_worker, start_worker, use_test_broker
from tests.factories import as_researcher, make_campaign

__all__ = ["celery_eager", "celery_worker", "start_worker"]  # fixtures for every test
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# Every run has PostgreSQL (DATABASE_URL, else the embedded server), so no test skips for it.
SKIP_REASONS = {
    "browser": None if CHROMIUM else "needs Chromium: apt-get install chromium",
}


def pytest_report_header(config):
    db = settings.DATABASES["default"]
    lines = [f"database: PostgreSQL {db['NAME']} on {db['HOST'] or 'localhost'}",
             f"broker: {os.environ.get('CELERY_BROKER_URL') or 'the test database (sqla)'}"]
    lines += [f"SKIPPING {m} tests: {r}" for m, r in SKIP_REASONS.items() if r]
    return lines


def pytest_configure(config):
    use_test_broker()


def pytest_collection_modifyitems(config, items):
    for item in items:
        for marker, reason in SKIP_REASONS.items():
            if reason and item.get_closest_marker(marker):
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    """Rate-limit counters and the cache start empty in each test: every test client is
    127.0.0.1."""
    from django.core.cache import cache

    from annotate.http import ratelimit

    cache.clear()
    ratelimit.reset()


@pytest.fixture
def few_resamples(settings):
    """The cached statistics and report from 50 resamples (STATISTICS_RESAMPLES), for tests of
    what the pages and jobs do with the figures: they show 50 resamples' intervals as they
    show 1,000's."""
    settings.STATISTICS_RESAMPLES = 50


@pytest.fixture
def owner(django_user_model):
    return django_user_model.objects.create_user("alice", "alice@example.org", "pw-alice-123")


@pytest.fixture
def other_owner(django_user_model):
    return django_user_model.objects.create_user("bob", "bob@example.org", "pw-bob-123")


@pytest.fixture
def researcher(owner):
    return as_researcher(owner)


@pytest.fixture
def other_researcher(other_owner):
    return as_researcher(other_owner)


@pytest.fixture
def researcher_client(client, researcher):
    client.force_login(researcher)
    return client


@pytest.fixture
def campaign(owner):
    return make_campaign(owner=owner)


# One Playwright session for the whole run (its sync API allows one per thread): every
# browser test, in any folder, uses these two fixtures.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
SHOTS = os.environ.get("SHOTS_DIR", "/tmp/shots")


@pytest.fixture(scope="session")
def browser():
    # Playwright's sync API runs an event loop in this thread; the ORM calls the tests make
    # between page actions are plain synchronous code, so Django's async guard is lifted.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # A Content-Security-Policy violation (an inline script or style, a foreign request).
    page.on("console", lambda msg: errors.append(msg.text) if "Refused to" in msg.text else None)
    yield page
    context.close()
    assert not errors, f"JavaScript errors or CSP violations: {errors}"
