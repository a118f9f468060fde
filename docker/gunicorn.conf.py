"""gunicorn settings for the web service, all from the environment (see .env.example)."""
import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
# Worker processes per container: GUNICORN_WORKERS, else 2 x cores + 1.
workers = int(os.environ.get("GUNICORN_WORKERS") or multiprocessing.cpu_count() * 2 + 1)
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
# gunicorn's own error answers (a request past the timeout) in the API's JSON shape under /api/.
worker_class = ("annotate.http.gunicorn_worker.JsonErrorThreadWorker" if threads > 1
                else "annotate.http.gunicorn_worker.JsonErrorSyncWorker")
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
# A web request's SQL is stopped while there is still time to answer, so a slow statement ends in
# a 503 "took too long" in the page's or the API's shape instead of gunicorn killing the worker
# (read by annotate/settings.py when the app loads).
os.environ.setdefault("DB_STATEMENT_TIMEOUT_SECONDS", str(max(1, timeout - 10)))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "20"))
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "5"))
# Recycle workers now and then (bounded memory); jitter keeps them from restarting together.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "5000"))
max_requests_jitter = int(os.environ.get("GUNICORN_MAX_REQUESTS_JITTER", "500"))
accesslog = os.environ.get("GUNICORN_ACCESSLOG", "-") or None
# Path without the query string and no referrer: crowd platforms put worker ids in the query
# (?PROLIFIC_PID=..., ?workerId=...), and logs are out of reach of a data deletion request.
access_log_format = '%(h)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s %(M)sms'
# An assignment's token (/a/<token>/...) is a worker's credential: logged as /a/[token]/.
logger_class = "annotate.http.access_log.MaskedAccessLogger"
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOGLEVEL", "info")
# The proxy in front terminates TLS and sets X-Forwarded-Proto (SECURE_PROXY_SSL_HEADER).
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "*")
# Heartbeat files in memory, not on the container's overlay disk.
_SHM = "/dev/shm"  # noqa: S108 - gunicorn's documented choice for worker_tmp_dir
worker_tmp_dir = os.environ.get("GUNICORN_WORKER_TMP_DIR") or (
    _SHM if os.path.isdir(_SHM) else None)
