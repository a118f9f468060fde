"""A memory limit for each job a Celery worker runs: the job may take at most
JOB_MEMORY_LIMIT_MB of address space beyond what its process held when it started (the soft
RLIMIT_AS, lowered for the job and restored after it). Past the limit an allocation fails with
MemoryError, which the lifecycle turns into a failed job with the reason, instead of the
kernel's out-of-memory killer taking the worker, or the machine, down.

Only worker processes apply it (`enable`, at a worker's start): a job run eagerly in a web
process or a test is not limited, since the limit is the whole process's.
"""
from __future__ import annotations

import logging
import os
import resource
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings

logger = logging.getLogger(__name__)
_state = {"enabled": False}


class MemoryLimitExceeded(Exception):
    """The job asked for more memory than its limit."""


def enable() -> None:
    """Apply the limit to the jobs this process runs (called when a Celery worker starts)."""
    _state["enabled"] = True


def limit_megabytes() -> int:
    return int(getattr(settings, "JOB_MEMORY_LIMIT_MB", 0) or 0)


def _address_space_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as fh:  # noqa: PTH123 - Linux's own accounting
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None  # not Linux: no limit


@contextmanager
def job_memory_limit() -> Iterator[None]:
    """Run the block with at most JOB_MEMORY_LIMIT_MB more address space (in a worker)."""
    megabytes = limit_megabytes()
    used = _address_space_bytes() if _state["enabled"] and megabytes > 0 else None
    if used is None:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = used + megabytes * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    except MemoryError:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))  # room to record the failure
        raise MemoryLimitExceeded(
            f"it needed more than the {megabytes} MB of memory a job may use "
            "(JOB_MEMORY_LIMIT_MB) and was stopped; nothing else was affected") from None
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
