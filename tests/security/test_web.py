"""Against a real gunicorn (docker/gunicorn.conf.py): the API throttle holds under concurrent
token requests, and assignment tokens never reach the access log or Django's request log."""
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from rest_framework.authtoken.models import Token

from .gunicorn import gunicorn

pytestmark = pytest.mark.django_db(transaction=True)
RATE = 40


@pytest.fixture
def web(tmp_path, settings):
    """gunicorn, two workers of eight threads, sharing Redis for its counters."""
    redis = settings.CELERY_BROKER_URL if settings.CELERY_BROKER_URL.startswith("redis") else ""
    if not redis:
        pytest.skip("needs Redis (CELERY_BROKER_URL=redis://...) for counters shared by workers")
    with gunicorn(tmp_path, {
            "GUNICORN_WORKERS": "2", "GUNICORN_THREADS": "8",
            "GUNICORN_ACCESSLOG": str(tmp_path / "access.log"), "CACHE_URL": redis,
            "API_THROTTLE_RATE": f"{RATE}/min"}) as base:
        yield base, tmp_path


def _status(url: str, headers: dict | None = None) -> int:
    request = urllib.request.Request(url, headers=headers or {})  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            response.read()
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_concurrent_token_requests_get_exactly_the_rate(web, owner, settings):
    import redis

    store = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    for key in store.scan_iter("annotate-limits*api-token*"):  # counts of earlier runs
        store.delete(key)
    base, _ = web
    token = Token.objects.get_or_create(user=owner)[0].key
    headers = {"Authorization": f"Token {token}"}
    with ThreadPoolExecutor(16) as pool:
        statuses = list(pool.map(lambda _: _status(f"{base}/api/campaigns/", headers),
                                 range(3 * RATE)))
    assert statuses.count(200) == RATE and statuses.count(429) == 2 * RATE


def test_assignment_tokens_are_masked_in_the_access_log_and_the_request_log(web):
    base, logs = web
    secret = "tok3nSECRETvalue123456"
    for path in (f"/a/{secret}/1/", f"/a/{secret}/finish/", f"/a/{secret}/done/?x=1"):
        assert _status(base + path) == 404
    time.sleep(0.5)
    written = (logs / "access.log").read_text() + (logs / "gunicorn.log").read_text()
    assert "/a/[token]/1/" in written and "Not Found: /a/[token]/1/" in written
    assert secret not in written


def test_gunicorns_error_log_masks_tokens_too(capsys):
    from gunicorn.config import Config

    from annotate.http.access_log import MaskedAccessLogger

    MaskedAccessLogger(Config()).error("Error handling request %s", "/a/tok3nSECRET/1/")
    written = capsys.readouterr().err
    assert "/a/[token]/1/" in written and "tok3nSECRET" not in written


def test_qualification_test_tokens_are_masked_like_assignment_tokens():
    from annotate.http.access_log import mask_tokens

    assert mask_tokens("GET /q/tok3nSECRET/2/ and /a/other/done/") == (
        "GET /q/[token]/2/ and /a/[token]/done/")
