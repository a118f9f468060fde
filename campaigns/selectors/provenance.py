"""What a report was computed from, for the paper bundle: the product version, the statistics'
options and resampling seeds, and a digest of the annotations read."""
from __future__ import annotations

import hashlib
import json
from importlib import metadata

from django.conf import settings

from ..models import Annotation, Campaign

# Every resampling in campaigns/analysis draws from numpy's default_rng(seed) with this seed.
BOOTSTRAP_SEED = 0
CHUNK = 5_000


def statistics_resamples() -> int:
    """The resamples of a full computation of the cached statistics and of the report."""
    return settings.STATISTICS_RESAMPLES


def product_version() -> str:
    try:
        return metadata.version("annotate")
    except metadata.PackageNotFoundError:  # a checkout run without installing it
        return "unknown"


def annotations_digest(*, campaign: Campaign) -> dict:
    """sha256 over every annotation of the campaign (id, worker, item, answers, time spent,
    last change) in id order, read in chunks: the same digest for the same annotations."""
    digest = hashlib.sha256()
    count = 0
    rows = (Annotation.objects.filter(campaign=campaign).order_by("id")
            .values_list("id", "worker_id", "item_id", "answers", "seconds_spent", "updated_at"))
    for pk, worker, item, answers, seconds, updated in rows.iterator(chunk_size=CHUNK):
        digest.update(json.dumps([pk, worker, item, answers, seconds, updated.isoformat()],
                                 sort_keys=True, separators=(",", ":")).encode())
        digest.update(b"\n")
        count += 1
    return {"annotations": count, "sha256": digest.hexdigest()}


def report_provenance(*, campaign: Campaign, options: dict) -> dict:
    return {"product": "annotate", "version": product_version(), "options": options,
            "bootstrap": {"resamples": statistics_resamples(), "seed": BOOTSTRAP_SEED,
                          "generator": "numpy.random.default_rng (PCG64)"},
            "annotations": annotations_digest(campaign=campaign)}
