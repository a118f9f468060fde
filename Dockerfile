# One image for every Python service: web (gunicorn), worker (celery worker), beat, migrate.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MEDIA_ROOT=/data/media \
    STATIC_ROOT=/app/staticfiles

WORKDIR /app
RUN useradd --create-home --uid 1000 app \
    && mkdir -p /data/media/exports \
    && chown -R app:app /data

# Dependencies first (cached while only the code changes).
COPY pyproject.toml README.md ./
RUN pip install .

COPY . .
RUN DEBUG=false SECRET_KEY=collectstatic-only-not-a-secret python manage.py collectstatic --noinput \
    && chmod +x docker/entrypoint.sh

USER app
EXPOSE 8000
ENTRYPOINT ["docker/entrypoint.sh"]
CMD ["gunicorn", "-c", "docker/gunicorn.conf.py", "annotate.wsgi:application"]
