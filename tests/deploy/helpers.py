"""Run this project's Python in a subprocess with a production-like environment."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Variables a test run may carry that would change what the subprocess checks: the deploy
# settings under test, a cache URL, and the async guard the browser tests lift (async.E001).
_NOT_INHERITED = ("SECRET_KEY", "DEBUG", "CACHE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE")


def run_python(*args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    """`python <args>` in the repository with os.environ, less _NOT_INHERITED, plus `env`."""
    environment = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
    environment["DJANGO_SETTINGS_MODULE"] = "annotate.settings"
    environment.update(env)
    return subprocess.run(  # noqa: S603 - our own code
        [sys.executable, *args], cwd=ROOT, env=environment, capture_output=True, text=True,
        timeout=timeout, check=False,
    )
