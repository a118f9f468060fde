"""Settings, all from the environment (django-environ), with safe embedded-mode defaults.

Embedded mode (nothing set): the embedded PostgreSQL in .pgdata/ (annotate/embedded_db.py, started
by `make demo` and `make test`), DEBUG on, the Celery broker in that same PostgreSQL.
Production: DEBUG=false, SECRET_KEY required, DATABASE_URL=postgres://..., CELERY_BROKER_URL.
"""
from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from annotate import embedded_db
from campaigns.analysis import N_BOOT

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

# Embedded mode: no SECRET_KEY in the environment means DEBUG defaults on with a fixed dev key.
# env.bool parses "False"/"0"/"no" strictly (never `bool("False")`).
_SECRET_FROM_ENV = env.str("SECRET_KEY", default="")
DEBUG = env.bool("DEBUG", default=not _SECRET_FROM_ENV)
_DEV_SECRET = "dev-insecure-secret-key-only-for-the-embedded-mode-0123456789"  # noqa: S105
SECRET_KEY = _SECRET_FROM_ENV or (_DEV_SECRET if DEBUG else "")
if not SECRET_KEY:
    raise ImproperlyConfigured("SECRET_KEY must be set in the environment when DEBUG is off.")

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
SITE_URL = env.str("SITE_URL", default="http://127.0.0.1:8000").rstrip("/")
# The submissions list's Prolific client: a researcher's own token (never stored in the database).
PROLIFIC_API_URL = env.str("PROLIFIC_API_URL", default="https://api.prolific.com")
PROLIFIC_API_TOKEN = env.str("PROLIFIC_API_TOKEN", default="")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "campaigns",
    "axes",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # django-csp's, each distinct policy built once per process.
    "annotate.http.csp.CSPMiddleware",
    # Inside CSP, outside everything that answers early (rate limits, errors): worker pages,
    # their error pages included, may be framed by MTurk and only by MTurk.
    "annotate.http.frames.WorkerFrameMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Worker pages switch to their campaign's language; every request starts and ends in ours.
    "annotate.http.language.LanguageResetMiddleware",
    # Before sessions: a script hammering the worker endpoints is turned away before any query.
    "annotate.http.ratelimit.RateLimitMiddleware",
    "annotate.http.limits.RequestSizeMiddleware",
    # Sessions, authentication and messages: for the researchers' pages only, worker routes
    # pass them by (annotate/http/researcher_only.py).
    "annotate.http.researcher_only.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "annotate.http.researcher_only.AuthenticationMiddleware",
    "annotate.http.researcher_only.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # After authentication: turns a locked-out login into the lockout answer (django-axes).
    "axes.middleware.AxesMiddleware",
    # Last, so its process_exception sees view errors first: a database outage answers 503.
    "annotate.http.outage.DatabaseOutageMiddleware",
]

# Login throttling (django-axes): a username and client address that failed
# AXES_FAILURE_LIMIT password logins are locked out for AXES_COOLOFF_MINUTES (429 with the
# reason); a success resets the count. The pair, not the username alone, so a stranger cannot
# lock a researcher out from elsewhere. `manage.py axes_reset` lifts every lockout.
AUTHENTICATION_BACKENDS = [
    "annotate.http.login_throttle.ThrottledLoginBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("AXES_COOLOFF_MINUTES", default=15))
AXES_COOLOFF_MESSAGE = (
    "Account locked: too many login attempts for this username from your address. "
    f"Please try again in {int(AXES_COOLOFF_TIME.total_seconds()) // 60} minutes."
)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "annotate.http.login_throttle.login_client_address"
AXES_VERBOSE = False

ROOT_URLCONF = "annotate.urls"
# A failed CSRF check answers in the API's JSON shape under /api/, Django's page elsewhere.
CSRF_FAILURE_VIEW = "annotate.http.errors.csrf_failure"
WSGI_APPLICATION = "annotate.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "campaigns.pages.language.page_language",
            ],
        },
    },
]

# A DATABASE_URL always wins (CI, docker-compose, production). Without one, the embedded server's
# socket: settings only names it; `make demo`/`make test` start it (nothing starts on import).
DATABASES = {"default": env.db_url("DATABASE_URL", default=embedded_db.database_url())}
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured("DATABASE_URL must be a postgres:// URL (the app needs PostgreSQL).")
# A socket directory given as ?host=/path lands in OPTIONS; HOST is where tools look for it.
if not DATABASES["default"]["HOST"] and "host" in DATABASES["default"].get("OPTIONS", {}):
    DATABASES["default"]["HOST"] = DATABASES["default"]["OPTIONS"].pop("host")
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
# A persistent connection is checked before reuse: after a database restart the first request of
# each process reconnects instead of failing on a dead connection.
DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)
# The longest one SQL statement may run in this process (PostgreSQL's statement_timeout; 0: no
# limit). docker/gunicorn.conf.py sets it for the web processes, 10 s inside GUNICORN_TIMEOUT,
# so a heavy request is a clear 503 "took too long" (annotate/http/deadline.py) instead of a
# killed worker; Celery workers and commands keep no limit (exports and imports run long).
DB_STATEMENT_TIMEOUT_SECONDS = env.float("DB_STATEMENT_TIMEOUT_SECONDS", default=0)
if DB_STATEMENT_TIMEOUT_SECONDS > 0:
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _options["options"] = " ".join(filter(None, [
        _options.get("options", ""),
        f"-c statement_timeout={int(DB_STATEMENT_TIMEOUT_SECONDS * 1000)}"]))
# Django's backend with a health check that polls the socket instead of a round trip.
DATABASES["default"]["ENGINE"] = "annotate.postgresql"
# The worker pages' hot SQL runs as server-side prepared statements (campaigns/work/prepared.py);
# false behind a transaction-mode pooler such as PgBouncer.
DB_PREPARED_STATEMENTS = env.bool("DB_PREPARED_STATEMENTS", default=True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Cache (rate-limit counters): Redis when CACHE_URL or REDIS_URL is set, else per-process memory.
# Short socket timeouts: when Redis is down the rate limiter fails open instead of hanging.
_CACHE_URL = env.str("CACHE_URL", default="") or env.str("REDIS_URL", default="")
CACHES = {
    "default": (
        {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": _CACHE_URL,
            "KEY_PREFIX": "annotate",
            "OPTIONS": {
                "SOCKET_CONNECT_TIMEOUT": 0.5,
                "SOCKET_TIMEOUT": 0.5,
                # Reads miss and writes are dropped while Redis is down: the cache only holds
                # rate-limit counters and throttle histories, so pages keep working without it.
                "IGNORE_EXCEPTIONS": True,
            },
        }
        if _CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "annotate"}
    ),
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
# The languages the worker pages ship translations for (locale/); a campaign may name any
# BCP 47 language, whose pages then show the product's strings in English.
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("es", "Español"), ("fr", "Français"),
             ("zh-hans", "简体中文"), ("ja", "日本語"), ("ar", "العربية")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(BASE_DIR / "staticfiles")))
MEDIA_URL = "media/"
MEDIA_ROOT = Path(env.str("MEDIA_ROOT", default=str(BASE_DIR / "media")))

# Exports go through Django's storage API: local MEDIA_ROOT by default, S3 with EXPORT_STORAGE=s3
# (and the django-storages AWS_* variables).
_EXPORT_STORAGE = env.str("EXPORT_STORAGE", default="local")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "exports": (
        {"BACKEND": "storages.backends.s3.S3Storage"}
        if _EXPORT_STORAGE == "s3"
        else {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(MEDIA_ROOT / "exports"), "base_url": None},
        }
    ),
    # Item uploads waiting for their background import (ImportJob); deleted once imported.
    "imports": (
        {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": {"location": "imports"}}
        if _EXPORT_STORAGE == "s3"
        else {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(MEDIA_ROOT / "imports"), "base_url": None},
        }
    ),
    # Images items show (display format "image"), served by the worker pages at /item-images/.
    "item_images": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(MEDIA_ROOT / "item-images"), "base_url": None},
    },
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
AWS_STORAGE_BUCKET_NAME = env.str("AWS_STORAGE_BUCKET_NAME", default="")

# Celery: always a real worker. Without CELERY_BROKER_URL the broker is the project's own
# PostgreSQL (kombu's SQLAlchemy transport, annotate/broker.py; tables kombu_queue and
# kombu_message), so the demo and the tests run jobs in a `celery worker` process with nothing
# else installed; production sets Redis. Eager (in-process) tasks only where a test asks.
# A postgresql:// CELERY_BROKER_URL names that database as the broker.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="")
_BROKER_IS_DATABASE = not CELERY_BROKER_URL or CELERY_BROKER_URL.startswith(
    ("postgres://", "postgresql://"))
if not CELERY_BROKER_URL:
    CELERY_BROKER_URL = embedded_db.sqla_broker_url(DATABASES["default"])
if _BROKER_IS_DATABASE:
    CELERY_BROKER_URL = CELERY_BROKER_URL.replace("postgres://", "postgresql://", 1)
    CELERY_BROKER_TRANSPORT = "annotate.broker:Transport"
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The SQLAlchemy transport passes its options to create_engine: a pooled connection is checked
# before use, so a restarted database costs one reconnect, not a failed publish.
CELERY_BROKER_TRANSPORT_OPTIONS = ({"pool_pre_ping": True} if _BROKER_IS_DATABASE
                                   else {"visibility_timeout": 3600})
CELERY_TASK_IGNORE_RESULT = True
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE = {
    "expire-assignments": {"task": "campaigns.expire_assignments", "schedule": 60.0},
    # Adaptive allocation's priorities and stopping targets (services/allocation.py).
    "update-allocations": {"task": "campaigns.update_allocations",
                           "schedule": env.float("ALLOCATION_SECONDS", default=60.0)},
    # Every kind of background job whose worker stopped: re-queued, or failed (lifecycle.py).
    "sweep-stale-jobs": {"task": "campaigns.sweep_stale_jobs", "schedule": 300.0},
}
# Fair shares of each queue (campaigns/jobs/fairness.py): jobs one researcher may have running
# at once on each of the statistics, exports and judges queues (0: no cap); more wait queued.
JOBS_RUNNING_PER_RESEARCHER = env.int("JOBS_RUNNING_PER_RESEARCHER", default=1)
# Memory one job may allocate in its worker process beyond what the process held (0: no
# limit); past it the job fails with that reason (campaigns/jobs/memory.py). Worker processes
# are replaced once their resident memory passes CELERY_WORKER_MAX_MEMORY_PER_CHILD (KiB).
JOB_MEMORY_LIMIT_MB = env.int("JOB_MEMORY_LIMIT_MB", default=5120)
CELERY_WORKER_MAX_MEMORY_PER_CHILD = env.int("CELERY_WORKER_MAX_MEMORY_PER_CHILD",
                                             default=1_500_000)
# Exports: rows per query/progress update, and when a running job without progress is lost.
EXPORT_CHUNK_SIZE = env.int("EXPORT_CHUNK_SIZE", default=2000)
# csv, csv-long on PostgreSQL: written by COPY (campaigns/exporting/sql.py), N annotations a COPY.
EXPORT_SQL_PATH = env.bool("EXPORT_SQL_PATH", default=True)
EXPORT_SQL_CHUNK_SIZE = env.int("EXPORT_SQL_CHUNK_SIZE", default=50_000)
EXPORT_STALE_SECONDS = env.int("EXPORT_STALE_SECONDS", default=600)
# Exports are written to a file here before they are stored: it holds personal data, so it is
# the application's own directory (mode 0700), cleaned when a Celery worker starts and by the
# stale-export sweep, and purged of a campaign's spools when a worker's data is erased.
EXPORT_SPOOL_DIR = Path(env.str("EXPORT_SPOOL_DIR", default=str(MEDIA_ROOT / "spool")))
# Background imports: a running import whose worker stopped this long ago is queued again.
IMPORT_STALE_SECONDS = env.int("IMPORT_STALE_SECONDS", default=600)
# Cached statistics: a queued or running computation older than this is queued again.
STATISTICS_STALE_SECONDS = env.int("STATISTICS_STALE_SECONDS", default=900)
# A statistics recomputation keeps the intervals and worker reliability of the last full
# computation while new, edited and deleted annotations are at most this share of the ones it
# was computed from (campaigns/services/statistics_reuse.py); 0: only when nothing changed.
STATISTICS_REFRESH_FRACTION = env.float("STATISTICS_REFRESH_FRACTION", default=0.02)
# Bootstrap resamples behind every 95% interval of the cached statistics and the report
# (campaigns/selectors/provenance.py reads it; the report's provenance states it). Fewer make
# the intervals' ends noisier, never wrong in kind; the result records the count used.
STATISTICS_RESAMPLES = env.int("STATISTICS_RESAMPLES", default=N_BOOT)
if STATISTICS_RESAMPLES < 1:
    raise ImproperlyConfigured("STATISTICS_RESAMPLES must be 1 or more.")
# The niceness (0-19) a Celery process computing statistics runs at, below the web processes.
STATISTICS_NICE = env.int("STATISTICS_NICE", default=10)
# The memory a statistics computation may use (MB): a campaign whose estimate is over it is
# refused with a clear message; one that reaches half of it once its data is read gets fewer
# resamples, said in the result (campaigns/selectors/analysis/budget.py). 0: no limit. Keep it
# under JOB_MEMORY_LIMIT_MB, the hard stop of every job.
STATISTICS_MEMORY_LIMIT_MB = env.int("STATISTICS_MEMORY_LIMIT_MB", default=4096)
# LLM judges: the local provider's endpoint (the demo's), unset so nothing is called; a
# request's deadline (connect and every read); the longest backoff honoured.
LLM_JUDGE_LOCAL_URL = env.str("LLM_JUDGE_LOCAL_URL", default="")
LLM_JUDGE_LOCAL_MODEL = env.str("LLM_JUDGE_LOCAL_MODEL", default="llama3.1:8b")
LLM_JUDGE_TIMEOUT_SECONDS = env.float("LLM_JUDGE_TIMEOUT_SECONDS", default=120.0)
LLM_JUDGE_MAX_BACKOFF_SECONDS = env.float("LLM_JUDGE_MAX_BACKOFF_SECONDS", default=60.0)
LLM_JUDGE_REQUEST_RETRIES = env.int("LLM_JUDGE_REQUEST_RETRIES", default=5)
LLM_JUDGE_STALE_SECONDS = env.int("LLM_JUDGE_STALE_SECONDS", default=600)
# The longest prompt a judge's template may render (characters); a longer one is refused.
LLM_JUDGE_MAX_PROMPT_CHARS = env.int("LLM_JUDGE_MAX_PROMPT_CHARS", default=400_000)
# The largest answer read from an endpoint (after decompression); a larger one fails.
LLM_JUDGE_MAX_RESPONSE_BYTES = env.int("LLM_JUDGE_MAX_RESPONSE_BYTES", default=2 * 1024 * 1024)
# The operator's LLM providers (docs/deployment.md): a judge picks one by name and is sent to
# its base URL with the key in the environment variable it names; researchers never see or
# name either. JSON, e.g. {"openai": {"base_url": "https://api.openai.com/v1",
# "key_env": "OPENAI_API_KEY", "models": ["gpt-4o-mini"], "budget_tokens": 5000000}}.
# The default is the demo's local server; a provider "local" without a base_url has
# LLM_JUDGE_LOCAL_URL's (unset: nothing is called).
LLM_PROVIDERS = env.json("LLM_PROVIDERS", default={}) or {"local": {"key_env": "", "models": []}}
# Hosts a researcher may send requests to with a key of their own (https, public addresses).
LLM_OWN_KEY_HOSTS = env.list("LLM_OWN_KEY_HOSTS", default=[
    "api.openai.com", "api.anthropic.com", "generativelanguage.googleapis.com",
    "api.mistral.ai", "api.together.xyz", "api.groq.com", "openrouter.ai",
    "api.deepseek.com", "api.fireworks.ai"])
# Origins (scheme://host:port) the operator allows besides the providers' and Prolific's, for
# http:// or an internal address (a stand-in in tests); researchers' URLs never are.
EGRESS_ALLOWED_ORIGINS = env.list("EGRESS_ALLOWED_ORIGINS", default=[])
# The key that encrypts researchers' own API keys at rest (Fernet, 32 url-safe base64 bytes);
# unset, one is derived from SECRET_KEY (changing either makes stored keys unreadable).
JUDGE_KEY_SECRET = env.str("JUDGE_KEY_SECRET", default="")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # The API speaks JSON only (uploads opt in to multipart); errors have one shape.
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["campaigns.api.parsers.BoundedJSONParser"],
    "EXCEPTION_HANDLER": "campaigns.api.errors.exception_handler",
    # Token-authenticated requests (scripts) are rate-limited per user, e.g. "1000/min".
    "DEFAULT_THROTTLE_CLASSES": ["campaigns.api.throttling.TokenRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"token": env.str("API_THROTTLE_RATE", default="1000/min")},
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Annotate API",
    "DESCRIPTION": "Run human-evaluation campaigns from scripts.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/api/",
    "ENUM_NAME_OVERRIDES": {
        "CampaignStatusEnum": "campaigns.models.Campaign.Status",
        "ExportJobStatusEnum": "campaigns.models.ExportJob.Status",
        "ExportFormatEnum": "campaigns.models.ExportJob.Format",
        "ItemFileFormatEnum": "campaigns.importing.FORMATS",
    },
}

# Production hardening; `manage.py check --deploy` is clean with DEBUG off.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
# HSTS preload is a one-way commitment for the whole domain (and its subdomains) that only the
# operator can make: opt in with SECURE_HSTS_PRELOAD=true. Until then W021 is expected.
SILENCED_SYSTEM_CHECKS = ["security.W021"]

# Hosts item images and instructions' images may come from (https only; exact host names).
# Each one widens the Content-Security-Policy's img-src below; none by default.
IMAGE_HOSTS = [h.strip().lower() for h in env.list("IMAGE_HOSTS", default=[]) if h.strip()]

# Content-Security-Policy (django-csp): same-origin everything, no inline scripts anywhere.
# form-action is left open on purpose: MTurk's externalSubmit form posts to MTurk.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:", *[f"https://{host}" for host in IMAGE_HOSTS]],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        # Nobody frames a page here; the worker pages let MTurk (annotate.http.frames).
        "frame-ancestors": ["'none'"],
    },
}

# Who may frame the worker pages (/c/, /a/, /q/): MTurk's ExternalQuestion hosts. Nobody frames
# any other page (frame-ancestors 'none', X-Frame-Options DENY).
WORKER_FRAME_ANCESTORS = env.list(
    "WORKER_FRAME_ANCESTORS",
    default=["'self'", "https://www.mturk.com", "https://workersandbox.mturk.com"])

# Rate limits on the worker pages (/c/, /a/, /q/), moving windows (annotate/http/ratelimit.py) kept
# in Redis when the cache is Redis, else in process memory; a store that is down limits nobody.
# A real worker submits at most one item every few seconds (a few requests each).
RATELIMIT_ENABLED = env.bool("RATELIMIT_ENABLED", default=True)
RATELIMIT_WINDOW_SECONDS = env.int("RATELIMIT_WINDOW_SECONDS", default=60)
RATELIMIT_PER_TOKEN = env.int("RATELIMIT_PER_TOKEN", default=120)
RATELIMIT_PER_ADDRESS = env.int("RATELIMIT_PER_ADDRESS", default=600)
# Number of reverse proxies in front of gunicorn whose X-Forwarded-For entries to trust (0: none).
RATELIMIT_TRUSTED_PROXIES = env.int("RATELIMIT_TRUSTED_PROXIES", default=0)
# Starts (being handed work) per CLAIM_WINDOW_SECONDS, far below the page limits: newcomers
# (ids a study has not seen) per client address and study, and per study from everywhere;
# every start per worker id (platform id or plain-link cookie) and study.
CLAIM_WINDOW_SECONDS = env.int("CLAIM_WINDOW_SECONDS", default=600)
CLAIM_LIMIT_PER_ADDRESS = env.int("CLAIM_LIMIT_PER_ADDRESS", default=10)
CLAIM_LIMIT_PER_WORKER = env.int("CLAIM_LIMIT_PER_WORKER", default=60)
CLAIM_LIMIT_PER_STUDY = env.int("CLAIM_LIMIT_PER_STUDY", default=2000)
# The newcomer limits adapt to the study's size (annotate/http/ratelimit.py, newcomer_limits):
# one address may start this share of the study's assignments per window, and newcomers from
# addresses that already started one may together start this share (within the limits above).
CLAIM_SHARE_PER_ADDRESS = env.float("CLAIM_SHARE_PER_ADDRESS", default=0.05)
CLAIM_SHARE_REPEAT = env.float("CLAIM_SHARE_REPEAT", default=0.25)
# Minutes a new assignment holds its items until its first answer is saved; that answer extends
# the hold to the campaign's full timeout (0: the full timeout at once). Opening pages does not.
ASSIGNMENT_RESERVATION_MINUTES = env.int("ASSIGNMENT_RESERVATION_MINUTES", default=5)

# Request bodies, one limit per kind of path (annotate/http/limits.py), checked against
# Content-Length before anything reads the body; larger is a 413 (page or JSON).
# Worker pages (/c/, /a/, /q/): answers and start forms, never files.
WORKER_BODY_MAX_BYTES = env.int("WORKER_BODY_MAX_BYTES", default=1024 * 1024)
# Admin pages and other forms (Django's own limit on form data, reused for the whole body).
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=10 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = env.int("FILE_UPLOAD_MAX_MEMORY_SIZE", default=10 * 1024 * 1024)
IMPORT_MAX_BYTES = env.int("IMPORT_MAX_BYTES", default=200 * 1024 * 1024)
# Columns a CSV/TSV header may have: a row of thousands of columns is an attack, not data.
IMPORT_MAX_COLUMNS = env.int("IMPORT_MAX_COLUMNS", default=1000)
# Uploads (admin and API) larger than this are stored and imported by a Celery job, so a
# big file never runs into the web worker's timeout.
IMPORT_BACKGROUND_BYTES = env.int("IMPORT_BACKGROUND_BYTES", default=5 * 1024 * 1024)
# API request bodies other than file uploads (JSON, including a JSON list of items); a larger
# list of items goes as a multipart file upload, which has the import limit (IMPORT_MAX_BYTES).
API_JSON_MAX_BYTES = env.int("API_JSON_MAX_BYTES", default=10 * 1024 * 1024)

# After a login whose ?next= is refused (another host), and with none: the admin, not a 404.
LOGIN_REDIRECT_URL = "admin:index"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # Assignment tokens are workers' credentials: masked in every line written.
    "filters": {"mask_tokens": {"()": "annotate.http.access_log.MaskTokens"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["mask_tokens"]}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # Django's own loggers write through the same filtered handler, not their defaults
    # ("django" propagates to the root's; runserver's lines go to it directly).
    "loggers": {"django": {"handlers": [], "level": "INFO", "propagate": True},
                "django.server": {"handlers": ["console"], "level": "INFO", "propagate": False}},
}
