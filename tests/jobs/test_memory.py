"""The memory limit of a job in a worker process (campaigns/jobs/memory.py): past it an
allocation fails and the job is stopped with the reason; the process's own limit comes back."""
import resource

import pytest

from campaigns.jobs import memory


@pytest.fixture
def in_a_worker(monkeypatch, settings):
    monkeypatch.setitem(memory._state, "enabled", True)
    settings.JOB_MEMORY_LIMIT_MB = 64
    return settings


def test_an_allocation_past_the_limit_stops_the_job_with_the_reason(in_a_worker):
    before = resource.getrlimit(resource.RLIMIT_AS)
    with pytest.raises(memory.MemoryLimitExceeded) as stopped, memory.job_memory_limit():
        bytearray(256 * 1024 * 1024)
    assert "needed more than the 64 MB of memory a job may use (JOB_MEMORY_LIMIT_MB)" in str(
        stopped.value)
    assert resource.getrlimit(resource.RLIMIT_AS) == before
    assert len(bytearray(128 * 1024 * 1024)) > 0  # the process may allocate again


def test_a_job_within_its_limit_runs(in_a_worker):
    with memory.job_memory_limit():
        assert len(bytearray(16 * 1024 * 1024)) == 16 * 1024 * 1024


def test_outside_a_worker_or_with_no_limit_nothing_is_limited(settings, monkeypatch):
    before = resource.getrlimit(resource.RLIMIT_AS)
    settings.JOB_MEMORY_LIMIT_MB = 1
    with memory.job_memory_limit():  # not a worker: a web process or a test's eager job
        assert resource.getrlimit(resource.RLIMIT_AS) == before
    monkeypatch.setitem(memory._state, "enabled", True)
    settings.JOB_MEMORY_LIMIT_MB = 0
    with memory.job_memory_limit():
        assert resource.getrlimit(resource.RLIMIT_AS) == before
