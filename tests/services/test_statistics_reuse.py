"""Recomputing after a few new answers: point estimates from all annotations, exactly as a full
computation's; the intervals and worker reliability reused from the last full computation while
the changed annotations stay within STATISTICS_REFRESH_FRACTION, and said so; a full
recomputation otherwise, after a settings change, when asked for, and for every report."""
import json

import pytest
from django.utils import timezone

from campaigns.models import Annotation
from campaigns.selectors import analysis as selectors
from campaigns.selectors.analysis import report as report_selectors
from campaigns.services import statistics_reuse as reuse
from campaigns.services.judgments import JudgmentRow, judgments_import
from campaigns.services.statistics import Kind, statistics_cached, statistics_request
from tests.analysis.test_realdata import STORY_DIR, story_rating_campaign
from tests.shared_data import require

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]
# Neither resampled nor a point estimate: what the computation itself says about itself.
ABOUT_THE_COMPUTATION = {"computation", "resamples", *reuse.REUSED_TABLES}
RESAMPLES = 20


@pytest.fixture
def story(owner, settings):
    """Three raters' 1-5 ratings of 100 stories (three aspects), one annotation per rater and
    story; the fraction pinned so that the tests count against it. The rule is about which
    computation the intervals come from, not how many resamples it drew: 20 of them."""
    require(STORY_DIR)
    settings.STATISTICS_REFRESH_FRACTION = 0.02
    settings.STATISTICS_RESAMPLES = RESAMPLES
    campaign, _ = story_rating_campaign(owner, "story-reuse")
    return campaign


def _late_rater(campaign, n: int, *, name: str = "late-rater") -> None:
    """`n` new answers by a new rater, on the first `n` stories."""
    judgments_import(campaign=campaign, platform="link", rows=[
        JudgmentRow(k, f"story-{k}", name, repr({"coherence": 1 + k % 5, "naturalness": 5}))
        for k in range(1, n + 1)])


def _recomputed(campaign, **asked) -> dict:
    statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={}, recompute=True,
                       **asked)
    return statistics_cached(campaign=campaign, kind=Kind.STATISTICS, options={}).result


def _first(campaign) -> dict:
    return statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={}).result


def _within(campaign) -> int:
    """How many new answers stay within the fraction of the campaign's annotations."""
    return int(0.02 * Annotation.objects.filter(campaign=campaign).count())


def _split(result, intervals: bool):
    """The interval columns of every table (intervals) or everything else (not intervals),
    leaving out what describes the computation."""
    if isinstance(result, dict):
        return {k: _split(v, intervals) for k, v in result.items()
                if k not in ABOUT_THE_COMPUTATION and reuse.is_interval(k) == intervals
                or isinstance(v, (dict, list)) and k not in ABOUT_THE_COMPUTATION}
    if isinstance(result, list):
        return [_split(v, intervals) for v in result]
    return result


def test_a_few_new_answers_reuse_the_intervals_and_say_so(story):
    first = _first(story)
    assert first["computation"]["intervals"] == "computed"
    assert first["resamples"]["used"] == RESAMPLES  # the setting's, in full
    n = _within(story)
    _late_rater(story, n)
    again = _recomputed(story)

    computation = again["computation"]
    assert computation["intervals"] == "reused"
    before = computation["intervals_basis"]["annotations"]
    assert computation["point_estimates_basis"]["annotations"] == before + n
    assert computation["annotations_changed"] == n
    assert f"from the computation over {before:,} annotations" in computation["note"]
    assert f"point estimates from all {before + n:,}" in computation["note"]
    # The intervals are the first computation's, row by row (the late rater's answers move
    # the point estimates, none of the intervals); a row new since (the late rater's own) has
    # none.
    reused, computed = _intervals_by_row(again), _intervals_by_row(first)
    assert len(set(reused) & set(computed)) >= 20
    assert all(reused[row] == computed[row] for row in set(reused) & set(computed))
    assert all(v is None for row in set(reused) - set(computed) for v in reused[row].values())
    assert again["agreement"][0]["ci_low"] is not None
    assert again["worker_reliability"] == first["worker_reliability"]
    assert again["resamples"] == first["resamples"]


def test_point_estimates_are_exactly_a_full_computations_on_the_same_data(story):
    first = _first(story)
    n = _within(story)
    _late_rater(story, n)
    again = _recomputed(story)
    full = json.loads(json.dumps(selectors.campaign_statistics(campaign=story,
                                                               n_boot=RESAMPLES), default=str))

    assert again["computation"]["intervals"] == "reused"
    assert _split(json.loads(json.dumps(again, default=str)), intervals=False) == _split(
        full, intervals=False)
    assert again["counts"]["annotations"] == first["counts"]["annotations"] + n
    changed = {r["question"]: r["alpha"] for r in again["agreement"] if r["subset"] is None}
    assert changed != {r["question"]: r["alpha"] for r in first["agreement"]
                       if r["subset"] is None}  # the new answers did move the figures


def _intervals_by_row(result: dict) -> dict:
    """{(table, row's identity): its interval columns} of the top-level tables."""
    return {(name, reuse._identity(row)): {k: v for k, v in row.items() if reuse.is_interval(k)}
            for name, rows in result.items() if isinstance(rows, list)
            for row in rows if isinstance(row, dict)
            and any(reuse.is_interval(k) for k in row)}


def test_changes_above_the_fraction_recompute_in_full(story):
    _first(story)
    _late_rater(story, _within(story) + 1)
    assert _recomputed(story)["computation"]["intervals"] == "computed"


def test_the_fraction_counts_against_the_full_computation_not_the_last_reuse(story):
    _first(story)
    half = _within(story) // 2 + 1
    _late_rater(story, half, name="late-1")
    assert _recomputed(story)["computation"]["intervals"] == "reused"
    _late_rater(story, half, name="late-2")  # together over the fraction
    assert _recomputed(story)["computation"]["intervals"] == "computed"


def test_edited_and_deleted_answers_count_as_changes(story):
    _first(story)
    answers = Annotation.objects.filter(campaign=story).order_by("id")
    Annotation.objects.filter(pk__in=list(answers.values_list("pk", flat=True)[:3])).update(
        updated_at=timezone.now())
    Annotation.objects.filter(pk__in=list(answers.values_list("pk", flat=True)[3:5])).delete()
    assert _recomputed(story)["computation"]["annotations_changed"] == 5


def test_a_settings_change_recomputes_in_full(story):
    _first(story)
    _late_rater(story, 1)
    story.name = "Stories, renamed"
    story.save()
    assert _recomputed(story)["computation"]["intervals"] == "computed"


def test_a_full_recomputation_can_be_asked_for(story):
    _first(story)
    _late_rater(story, 1)
    again = _recomputed(story, full=True)
    assert again["computation"]["intervals"] == "computed"
    assert again["computation"]["intervals_basis"]["annotations"] == Annotation.objects.filter(
        campaign=story).count()
    # asked once: the next recomputation may reuse again
    assert _recomputed(story)["computation"]["intervals"] == "reused"


def test_the_report_always_computes_in_full(story, monkeypatch):
    _first(story)
    _late_rater(story, 1)
    asked = []
    original = selectors.campaign_statistics

    def recording(**kwargs):
        asked.append(kwargs)
        return original(**kwargs)

    monkeypatch.setattr(selectors, "campaign_statistics", recording)
    # The report's sample-size plan (power simulations) asks for no statistics: left out here.
    monkeypatch.setattr(report_selectors, "study_plan", lambda **_: [])
    statistics_request(campaign=story, kind=Kind.REPORT, options={})
    # In full: every resample the setting asks for, and the worker reliability models.
    assert asked and all(k["n_boot"] == RESAMPLES and "worker_reliability" not in k
                         for k in asked)
    assert _recomputed(story)["computation"]["intervals"] == "reused"
    assert asked[-1]["n_boot"] == 0  # the statistics recomputation did reuse meanwhile


# --- the splice, on its own ------------------------------------------------------------------


def _basis():
    return {"annotations": 100, "last_annotation_id": 9, "read_at": timezone.now().isoformat(),
            "settings_at": timezone.now().isoformat()}


def test_only_empty_interval_columns_of_the_same_row_are_filled():
    previous = {"agreement": [
        {"question": "q", "part": "", "subset": None, "alpha": 0.5, "ci_low": 0.4, "ci_high": 0.6},
        {"question": "r", "part": "", "subset": None, "alpha": 0.2, "ci_low": 0.1, "ci_high": 0.3},
    ], "worker_reliability": [{"worker": "w", "reliability": 0.9}]}
    fresh = {"agreement": [
        {"question": "q", "part": "", "subset": None, "alpha": 0.55, "ci_low": None,
         "ci_high": None},
        {"question": "r", "part": "", "subset": None, "alpha": None, "ci_low": None,
         "ci_high": None},
        {"question": "new", "part": "", "subset": None, "alpha": 0.1, "ci_low": None,
         "ci_high": None},
    ], "worker_reliability": []}
    out = reuse.with_reused_parts(fresh, previous, _basis(), 1, _basis())
    q, r, new = out["agreement"]
    assert (q["alpha"], q["ci_low"], q["ci_high"]) == (0.55, 0.4, 0.6)
    assert r["alpha"] is None  # a point estimate now undefined is never the old one
    assert new["ci_low"] is None  # a row new since has no interval to reuse
    assert out["worker_reliability"] == previous["worker_reliability"]


def test_rows_not_told_apart_get_no_other_rows_interval():
    previous = {"progress": [{"day": "a", "x_low": 1}, {"day": "b", "x_low": 2}]}
    fresh = {"progress": [{"day": "a", "x_low": None}, {"day": "b", "x_low": None}]}
    out = reuse.with_reused_parts(fresh, previous, _basis(), 0, _basis())
    assert [r["x_low"] for r in out["progress"]] == [None, None]

