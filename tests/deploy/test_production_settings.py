"""Production settings pass `check --deploy`, need a SECRET_KEY, harden cookies and transport."""

from tests.deploy.helpers import run_python

SECRET = "a-production-secret-key-for-the-deploy-check-0123456789-abcdefghijk"


def run_manage(*args: str, **env: str):
    return run_python("manage.py", *args, **env)


def test_check_deploy_has_no_warnings_with_debug_off():
    result = run_manage(
        "check", "--deploy", "--fail-level", "WARNING", DEBUG="false", SECRET_KEY=SECRET
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    result = run_manage("check", DEBUG="false", SECRET_KEY="")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_hardening_settings_with_debug_off():
    code = (
        "from django.conf import settings as s; import django; django.setup(); "
        "print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS >= 31536000,"
        " s.SECURE_SSL_REDIRECT, s.STORAGES['staticfiles']['BACKEND'].startswith('whitenoise'),"
        " 'whitenoise.middleware.WhiteNoiseMiddleware' in s.MIDDLEWARE,"
        " 'annotate.http.csp.CSPMiddleware' in s.MIDDLEWARE)"
    )
    result = run_python("-c", code, timeout=60, DEBUG="false", SECRET_KEY=SECRET)
    assert result.stdout.split() == ["True"] * 7, result.stdout + result.stderr


def test_the_cache_is_a_fail_soft_redis_with_short_timeouts_when_a_url_is_given():
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "c = s.CACHES['default']; o = c['OPTIONS']; "
        "print(c['BACKEND'], o['IGNORE_EXCEPTIONS'], o['SOCKET_CONNECT_TIMEOUT'] <= 1, "
        "o['SOCKET_TIMEOUT'] <= 1)"
    )
    result = run_python("-c", code, timeout=60, REDIS_URL="redis://127.0.0.1:6379/7")
    assert result.stdout.split() == ["django_redis.cache.RedisCache", "True", "True", "True"], (
        result.stdout + result.stderr)
