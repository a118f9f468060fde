"""docker-compose.yml runs the real topology (parsed: no container engine runs in tests)."""

import runpy
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.deploy.helpers import run_python

ROOT = Path(__file__).resolve().parents[2]
WORKERS = {"worker-statistics": "statistics", "worker-exports": "exports",
           "worker-judges": "judges", "worker-periodic": "periodic"}
APP_SERVICES = ("web", *WORKERS, "beat")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


@pytest.fixture(scope="module")
def env_example() -> dict[str, str]:
    pairs = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            pairs[key.strip()] = value.strip()
    return pairs


def command(service: dict) -> str:
    cmd = service["command"]
    return " ".join(cmd) if isinstance(cmd, list) else cmd


def test_it_has_the_services_with_the_right_programs(compose):
    services = compose["services"]
    assert {"web", *WORKERS, "beat", "db", "redis"} <= set(services)
    assert command(services["web"]).startswith("gunicorn -c docker/gunicorn.conf.py annotate.wsgi")
    for name in WORKERS:
        assert "celery -A annotate worker" in command(services[name])
    assert "celery -A annotate beat" in command(services["beat"])
    assert services["db"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")
    assert "manage.py migrate" in command(services["migrate"])


def test_each_queue_has_its_own_workers_with_their_own_concurrency(compose):
    from annotate.celery import QUEUES

    assert sorted(WORKERS.values()) == sorted(QUEUES)
    for name, queue in WORKERS.items():
        argv = compose["services"][name]["command"]
        assert argv[argv.index("-Q") + 1] == queue, f"{name} does not consume only {queue}"
        assert argv[argv.index("-n") + 1] == f"{queue}@%h"
        assert "--concurrency" in argv
        health = " ".join(compose["services"][name]["healthcheck"]["test"])
        assert f"-d {queue}@$$HOSTNAME" in health


def test_every_long_running_service_has_a_health_check(compose):
    for name in ("web", *WORKERS, "beat", "db", "redis"):
        check = compose["services"][name].get("healthcheck")
        assert check and check["test"], f"{name} has no health check"
    assert "/healthz" in " ".join(compose["services"]["web"]["healthcheck"]["test"])


def test_app_services_wait_for_a_healthy_database_broker_and_migrations(compose):
    for name in APP_SERVICES:
        depends = compose["services"][name]["depends_on"]
        assert depends["db"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"
        assert depends["migrate"]["condition"] == "service_completed_successfully"


def test_database_and_exports_live_on_named_volumes(compose, env_example):
    assert {"pgdata", "exports"} <= set(compose["volumes"])
    assert "pgdata:/var/lib/postgresql/data" in compose["services"]["db"]["volumes"]
    for name in ("web", "worker-exports"):  # the worker writes export files, web serves them
        assert f"exports:{env_example['MEDIA_ROOT']}" in compose["services"][name]["volumes"]


def test_all_settings_come_from_the_env_file(compose, env_example):
    for name in (*APP_SERVICES, "migrate", "db"):
        assert compose["services"][name]["env_file"] in (".env", [".env"])
    for key in (
        "SECRET_KEY",
        "DEBUG",
        "ALLOWED_HOSTS",
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "REDIS_URL",
        "MEDIA_ROOT",
        "EXPORT_STORAGE",
        "SITE_URL",
        "GUNICORN_WORKERS",
        "CELERY_STATISTICS_CONCURRENCY",
        "CELERY_EXPORTS_CONCURRENCY",
        "CELERY_JUDGES_CONCURRENCY",
        "JOBS_RUNNING_PER_RESEARCHER",
        "JOB_MEMORY_LIMIT_MB",
        "POSTGRES_PASSWORD",
    ):
        assert key in env_example, f".env.example does not document {key}"
    assert "@db:5432/" in env_example["DATABASE_URL"]
    assert env_example["CELERY_BROKER_URL"].startswith("redis://redis:6379/")
    assert env_example["DEBUG"] == "false"


def test_web_is_published_on_port_8000(compose):
    assert any(str(p).endswith(":8000") for p in compose["services"]["web"]["ports"])


def test_the_number_of_gunicorn_workers_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("GUNICORN_WORKERS", "7")
    config = runpy.run_path(str(ROOT / "docker" / "gunicorn.conf.py"))
    assert config["workers"] == 7
    monkeypatch.delenv("GUNICORN_WORKERS")
    assert runpy.run_path(str(ROOT / "docker" / "gunicorn.conf.py"))["workers"] >= 3


def test_access_logs_leave_out_query_strings_that_carry_worker_ids():
    config = runpy.run_path(str(ROOT / "docker" / "gunicorn.conf.py"))
    assert "%(U)s" in config["access_log_format"]
    assert "%(r)s" not in config["access_log_format"] and "%(q)s" not in config["access_log_format"]
    assert "%(f)s" not in config["access_log_format"]


def test_the_image_runs_as_a_user_and_collects_static_files():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "collectstatic --noinput" in dockerfile
    assert "\nUSER app\n" in dockerfile
    assert 'CMD ["gunicorn"' in dockerfile


def deploy_check(env: dict[str, str]):
    return run_python("manage.py", "check", "--deploy", "--fail-level", "WARNING", **env)


def test_the_example_env_with_a_real_secret_passes_the_deploy_check(env_example):
    real = {**env_example, "SECRET_KEY": "kR9vYq2Lw0pXz7NcT4bHs1mJd8fGa6eUiO3yV5tQnWxZlPo_Ck-EA"}
    result = deploy_check(real)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_placeholder_secret_is_refused_by_the_deploy_check(env_example):
    result = deploy_check(env_example)
    assert result.returncode != 0 and "security.W009" in result.stderr


@pytest.mark.skipif(
    not shutil.which("docker-compose"),
    reason="docker-compose not installed (apt-get install docker-compose)",
)
def test_docker_compose_accepts_the_file(tmp_path):
    shutil.copy(ROOT / "docker-compose.yml", tmp_path / "docker-compose.yml")
    shutil.copy(ROOT / ".env.example", tmp_path / ".env")
    result = subprocess.run(  # noqa: S603
        ["docker-compose", "config", "-q"],  # noqa: S607
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
