"""The analysis selector: the ORM as one tidy long frame, and every statistics table from it.

`annotations_frame` (frames.py) is the only place that reads annotations for analysis; the
statistics themselves are pure functions in campaigns/analysis/. One module per job: frames,
ratings (one question's ratings and agreement), flags (worker quality), judges, answers
(preference, best-worst, spans), statistics (campaign_statistics) and report.
"""
from .answers import (
    best_worst_statistics,
    preference_frame,
    preference_statistics,
    span_answers,
    span_statistics,
)
from .flags import flagged_worker_ids
from .frames import (
    FRAME_COLUMNS,
    annotations_frame,
    fetch_frame,
    item_field_values,
    pairing_field,
    records,
    split_frame,
)
from .judges import item_side_by_side, run_failed_outputs
from .ratings import question_agreement, question_ratings, question_value_counts
from .report import evaluation_report, study_plan
from .statistics import campaign_statistics

__all__ = [
    "FRAME_COLUMNS",
    "annotations_frame",
    "best_worst_statistics",
    "campaign_statistics",
    "evaluation_report",
    "fetch_frame",
    "flagged_worker_ids",
    "item_field_values",
    "item_side_by_side",
    "pairing_field",
    "preference_frame",
    "preference_statistics",
    "question_agreement",
    "question_ratings",
    "question_value_counts",
    "records",
    "run_failed_outputs",
    "span_answers",
    "span_statistics",
    "split_frame",
    "study_plan",
]
