"""Judge-vs-human figures on hand-computed data."""
import pandas as pd

from campaigns.analysis.judges import (
    confusion_matrices,
    human_consensus,
    side_by_side,
)

LEVELS = {("rubric", "C1"): "ordinal", ("rubric", "total"): "interval", ("label", ""): "nominal"}


def _frame(rows):
    return pd.DataFrame(rows, columns=["item", "worker", "question", "part", "value"])


def test_consensus_is_the_median_the_mean_or_the_mode():
    humans = _frame([
        (1, "a", "rubric", "C1", 0.0), (1, "b", "rubric", "C1", 1.0),
        (1, "a", "rubric", "total", 10.0), (1, "b", "rubric", "total", 13.0),
        (1, "a", "label", "", "yes"), (1, "b", "label", "", "no"), (1, "c", "label", "", "no"),
        (2, "a", "label", "", "yes"), (2, "b", "label", "", "no"),
    ])
    consensus = human_consensus(humans, LEVELS).set_index(["question", "part", "item"])["value"]
    # Two raters: the midpoint, not the lower one (which would bias the consensus down).
    assert consensus[("rubric", "C1", 1)] == 0.5
    assert consensus[("rubric", "total", 1)] == 11.5
    assert consensus[("label", "", 1)] == "no"
    assert consensus[("label", "", 2)] == "no"  # a tie goes to the first in order


def test_confusion_matrix_rows_are_human_values_and_columns_judge_values():
    consensus = pd.DataFrame({"question": "label", "part": "", "item": [1, 2, 3, 4],
                              "value": ["yes", "yes", "no", "no"]})
    judged = _frame([(1, "j", "label", "", "yes"), (2, "j", "label", "", "no"),
                     (3, "j", "label", "", "no"), (4, "j", "label", "", "maybe")])
    (matrix,) = confusion_matrices(consensus, judged)
    assert matrix["labels"] == ["maybe", "no", "yes"]
    assert matrix["matrix"] == [[0, 0, 0], [1, 1, 0], [0, 1, 1]]


def test_side_by_side_lists_each_part_with_judge_and_human_and_marks_differences():
    consensus = pd.DataFrame({"question": "rubric", "part": ["C1", "C2"], "item": 7,
                              "value": [0.0, 1.0]})
    judged = _frame([(7, "llama", "rubric", "C1", 1.0), (7, "llama", "rubric", "C2", 1.0),
                     (8, "llama", "rubric", "C1", 0.0)])
    table = side_by_side(7, consensus, judged, {("rubric", "C1"): "a short introduction"})
    assert table[["part", "text", "llama", "human", "differs"]].values.tolist() == [
        ["C1", "a short introduction", 1.0, 0.0, True],
        ["C2", "C2", 1.0, 1.0, False],
    ]
