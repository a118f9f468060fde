"""Headless Chromium (Debian's /usr/bin/chromium) through Playwright against the live server."""
import os
import shutil

import pytest

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


@pytest.fixture(autouse=True)
def _no_rate_limits(settings):
    settings.RATELIMIT_ENABLED = False
