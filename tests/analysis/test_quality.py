"""Worker quality checks on hand-made frames."""
import pandas as pd

from campaigns.analysis.quality import QualityRules, atom_matches_gold, worker_quality

COLUMNS = ["annotation", "item", "worker", "control", "control_passed", "seconds", "question",
           "part", "value", "gold", "gold_tolerance", "bad_reference", "rated"]


def _rows(worker, start, values, *, control="", passed=None, seconds=10.0, gold=None, tol=None,
          bad=False, question="q"):
    return [(start + n, f"{control or 'i'}{n}", worker, control, passed, seconds, question, "", v,
             gold, tol, bad, True) for n, v in enumerate(values)]


def _quality(rows, **rules):
    table = worker_quality(pd.DataFrame(rows, columns=COLUMNS), QualityRules(**rules))
    return table.set_index("worker")


def test_one_failed_attention_check_is_recorded_but_two_flag_the_worker():
    rows = (_rows("once", 0, [1, 2, 3]) + _rows("once", 10, [5], control="attention",
                                                  passed=False)
            + _rows("twice", 20, [1, 2, 3]) + _rows("twice", 30, [5, 5], control="attention",
                                                      passed=False))
    table = _quality(rows)
    assert table.loc["once", "attention_failures"] == 1 and not table.loc["once", "flagged"]
    assert table.loc["twice", "attention_failures"] == 2 and table.loc["twice", "flagged"]
    assert table.loc["twice", "reasons"] == ["failed 2 attention checks"]


def test_gold_accuracy_uses_the_tolerance_when_no_outcome_was_stored():
    rows = (_rows("w", 0, [1, 2, 3])
            + _rows("w", 10, [70, 95], control="gold", gold=100, tol=10))
    table = _quality(rows)
    assert table.loc["w", "gold_n"] == 2
    assert table.loc["w", "gold_accuracy"] == 0.5
    assert atom_matches_gold("yes", "yes", None) and not atom_matches_gold(3, 4, None)
    assert atom_matches_gold(3.5, 4, 0.5)


def test_a_worker_much_faster_than_the_others_is_flagged():
    rows = (_rows("slow", 0, [1, 2], seconds=30) + _rows("mid", 10, [1, 2], seconds=20)
            + _rows("fast", 20, [1, 2], seconds=2))
    table = _quality(rows)
    assert table.loc["fast", "too_fast"] and table.loc["fast", "median_seconds"] == 2
    assert not table.loc["slow", "too_fast"]


def test_the_same_answer_for_every_item_is_straight_lining():
    rows = _rows("same", 0, [3] * 6) + _rows("varied", 10, [3, 3, 3, 3, 3, 4])
    rows += _rows("short", 20, [3] * 3)
    table = _quality(rows)
    assert table.loc["same", "straight_lining"] and table.loc["same", "flagged"]
    assert not table.loc["varied", "straight_lining"]
    assert not table.loc["short", "straight_lining"]  # too few items to tell


def test_bad_references_must_score_significantly_lower_than_real_items():
    real = [70, 80, 75, 90, 85, 72, 88, 79]
    good = (_rows("good", 0, real) + _rows("good", 100, [5, 10, 0], control="gold", gold=0,
                                            tol=25, bad=True))
    careless = (_rows("careless", 200, real)
                + _rows("careless", 300, [80, 75, 85], control="gold", gold=0, tol=25, bad=True))
    few = _rows("few", 400, [70, 80]) + _rows("few", 500, [0], control="gold", gold=0, bad=True)
    table = _quality(good + careless + few)
    assert table.loc["good", "bad_reference_p"] < 0.05
    assert not table.loc["good", "bad_reference_unreliable"]
    assert table.loc["careless", "bad_reference_unreliable"] and table.loc["careless", "flagged"]
    assert table.loc["few", "bad_reference_p"] is None  # 1 vs 2 items can never reach p < 0.05
    assert not table.loc["few", "bad_reference_unreliable"]


def test_an_empty_frame_gives_an_empty_table():
    assert worker_quality(pd.DataFrame(columns=COLUMNS)).empty
