"""The free-text answers' provenance flags of a campaign (analysis/answer_provenance.py rules),
counted per submission or per worker, and one worker's free-text answers for review."""
from __future__ import annotations

from collections import Counter
from typing import Literal

from ..analysis.answer_provenance import FLAGS, answer_flags, flag_counts
from ..models import Annotation, Campaign, QualificationAnswer, Worker

__all__ = ["provenance_flag_counts", "worker_free_text"]


def provenance_flag_counts(*, campaign: Campaign, by: Literal["assignment", "worker"]
                           ) -> dict[int, Counter]:
    """{assignment or worker id: Counter(flag -> free-text answers raising it)}."""
    rows = (Annotation.objects.filter(campaign=campaign).exclude(provenance={}).order_by()
            .values_list(f"{by}_id", "provenance"))
    return flag_counts(rows.iterator(chunk_size=2000))


def worker_free_text(*, worker: Worker) -> list[dict]:
    """Each recorded free-text answer of the worker, their qualification test's first (it came
    first), then their annotations', oldest first: the annotation (None for a test answer), the
    item, the answer's path, its record, the seconds from focus to save, and the flags it
    raises (their words)."""
    tests = (QualificationAnswer.objects.filter(qualification__worker=worker)
             .exclude(provenance={}).select_related("item").order_by("created_at", "id"))
    annotations = (Annotation.objects.filter(worker=worker).exclude(provenance={})
                   .select_related("item").order_by("created_at", "id"))
    return ([row for answer in tests for row in _rows(answer, None)]
            + [row for annotation in annotations for row in _rows(annotation, annotation)])


def _rows(answer: Annotation | QualificationAnswer, annotation: Annotation | None) -> list[dict]:
    return [{"annotation": annotation, "item": answer.item, "path": path, "record": record,
             "seconds": round(record.get("ms", 0) / 1000, 1),
             "flags": [FLAGS[f] for f in answer_flags(record)]}
            for path, record in sorted(answer.provenance.items()) if isinstance(record, dict)]
