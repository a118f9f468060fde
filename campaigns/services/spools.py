"""Export spools: the files an export is written to before it is stored, in a directory the
application owns (settings.EXPORT_SPOOL_DIR), so that what a killed export leaves behind (rows
with pseudonyms, platform session ids, codes and answers) can be found and deleted.

A spool is named `export-<campaign>-<job>-<attempt>-<random>`: `spools_clean` (at Celery worker
start and in the stale-export sweep) deletes every spool whose attempt is no longer running,
and `spools_purge` every spool of a campaign (when a worker's data is erased).
"""
from __future__ import annotations

import logging
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from django.conf import settings

from ..models import ExportJob

logger = logging.getLogger(__name__)
NAME = re.compile(r"^export-(?P<campaign>\d+)-(?P<job>\d+)-(?P<attempt>\d+)-")


def spool_dir() -> Path:
    """The spool directory, created readable by the application's user only."""
    path = Path(settings.EXPORT_SPOOL_DIR)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


@contextmanager
def spool_open(*, job: ExportJob) -> Iterator[IO[bytes]]:
    """A new spool file for this attempt of the job, deleted on leaving unless it was moved
    into storage (a rename, when the storage is on the same disk)."""
    prefix = f"export-{job.campaign_id}-{job.pk}-{job.attempts}-"
    raw = tempfile.NamedTemporaryFile(prefix=prefix, dir=spool_dir(), delete=False)  # noqa: SIM115
    try:
        yield raw
    finally:
        raw.close()
        if os.path.exists(raw.name):
            os.unlink(raw.name)


def _delete(path: Path) -> bool:
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        logger.warning("could not delete export spool %s: %s", path, exc)
        return False
    return True


def spools_clean() -> int:
    """Delete every spool but those of attempts still running (another worker on this host may
    be writing one); files the directory should not hold go too. Returns how many."""
    running = set(ExportJob.objects.filter(status=ExportJob.Status.RUNNING)
                  .values_list("pk", "attempts"))
    deleted = 0
    for path in spool_dir().iterdir():
        match = NAME.match(path.name)
        if match and (int(match["job"]), int(match["attempt"])) in running:
            continue
        deleted += _delete(path)
    if deleted:
        logger.info("deleted %d leftover export spools", deleted)
    return deleted


def spools_purge(*, campaign_id: int) -> int:
    """Delete every spool of a campaign, running or not (a running attempt is withdrawn by the
    caller first, so it stops at its next chunk and stores nothing)."""
    deleted = 0
    for path in spool_dir().iterdir():
        match = NAME.match(path.name)
        if match and int(match["campaign"]) == campaign_id:
            deleted += _delete(path)
    return deleted
