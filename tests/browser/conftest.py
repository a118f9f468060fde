"""Headless Chromium (Debian's /usr/bin/chromium) through Playwright against the live server."""
import pytest

from tests.conftest import SHOTS  # noqa: F401 (used by the tests)


@pytest.fixture(autouse=True)
def _no_rate_limits(settings):
    settings.RATELIMIT_ENABLED = False
