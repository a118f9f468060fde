"""Read-ahead (PostgreSQL, outside a transaction): the same file, and errors still surface."""
import pytest

from campaigns.exporting import readahead
from campaigns.services import exports
from campaigns.services.exports import export_job_create, export_job_run
from tests.factories import make_campaign

from .conftest import make_annotation, read_export

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def campaign_of_ten(owner, settings):
    settings.EXPORT_CHUNK_SIZE = 3
    settings.EXPORT_SQL_PATH = False  # read-ahead is the Python path's (csv here)
    campaign = make_campaign(owner=owner)
    for n in range(10):
        make_annotation(campaign, item=f"i{n}", answers={"coherence": n % 5 + 1, "sentiment": 2},
                        platform_id=f"P{n % 4}")
    return campaign


def run(campaign) -> str:
    job = export_job_create(campaign=campaign, requested_by=None, fmt="csv", enqueue=False)
    export_job_run(job_id=job.pk)
    return read_export(job)


def test_reading_ahead_writes_the_same_file_as_reading_in_turn(campaign_of_ten, monkeypatch):
    used = []
    monkeypatch.setattr(exports, "read_ahead",
                        lambda make: used.append(1) or readahead.read_ahead(make))
    ahead = run(campaign_of_ten)
    assert used
    monkeypatch.setattr(exports, "read_ahead_possible", lambda: False)
    assert run(campaign_of_ten) == ahead
    assert len(ahead.splitlines()) == 11


def test_an_error_while_reading_ahead_fails_the_job_with_its_message(campaign_of_ten,
                                                                      monkeypatch):
    def broken(scope, *, chunk_size):
        yield from []
        raise ValueError("disk on fire")

    monkeypatch.setattr(exports, "annotation_chunks", broken)
    job = export_job_create(campaign=campaign_of_ten, requested_by=None, fmt="csv",
                            enqueue=False)
    export_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "failed" and "disk on fire" in job.error
