"""The analysis export: every statistics table in one CSV (a `table` column) or one JSON."""
import csv
import io
import json

import numpy as np
import pytest

from campaigns.models import ExportJob
from campaigns.selectors.analysis import campaign_statistics
from campaigns.services.exports import write_analysis
from tests.exports.conftest import make_annotation
from tests.factories import BWS_SCHEMA, PAIRWISE_SCHEMA, make_campaign
from tests.selectors.test_analysis import _study

pytestmark = pytest.mark.django_db


def _write(campaign, fmt, **options):
    job = ExportJob.objects.create(campaign=campaign, format=fmt, options=options)
    stream = io.StringIO()
    write_analysis(job=job, stream=stream)
    return stream.getvalue()


def test_the_json_export_holds_every_table_of_the_statistics(owner):
    data = json.loads(_write(_study(owner), "analysis-json"))
    for table in ("agreement", "system_scores", "ranking", "pairwise", "quality", "judges",
                  "confusion", "progress"):
        assert data[table], table
    assert data["exclude_flagged"] is False and data["changes"] is None


def test_the_csv_export_names_each_rows_table_and_honours_exclude_flagged(owner):
    text = _write(_study(owner), "analysis-csv", exclude_flagged=True)
    rows = list(csv.DictReader(io.StringIO(text)))
    tables = {r["table"] for r in rows}
    assert {"summary", "agreement", "system_scores", "ranking", "pairwise", "quality", "judges",
            "confusion", "progress", "changes_agreement", "changes_ranking"} <= tables
    coherence = next(r for r in rows if r["table"] == "agreement" and r["question"] == "coherence")
    assert float(coherence["alpha"]) == pytest.approx(1.0) and coherence["n_raters"] == "3"
    summary = next(r for r in rows if r["table"] == "summary")
    assert summary["exclude_flagged"] == "true" and summary["judges_list"] == "gpt-4"
    flagged = next(r for r in rows if r["table"] == "quality" and r["flagged"] == "true")
    # The careless worker also rates against the others (1 where they give 5): both reasons.
    assert flagged["reasons"].startswith("failed 2 attention checks; ratings correlate "
                                         "negatively with the other workers'")
    cells = [r for r in rows if r["table"] == "confusion" and r["question"] == "coherence"]
    assert sum(int(r["count"]) for r in cells) == 8


# A pairwise campaign: (choice, order shown) per judgment. x beats y 2-1 with a tie, y beats
# Z twice, Z beats x twice (a cycle: every strength finite); every pair shown both ways round.
# Z's name carries Markdown and HTML, which the report must escape.
Z = "<b>z|w</b>"
JUDGED = [("A", ["x", "y"]), ("A", ["y", "x"]), ("B", ["y", "x"]), ("tie", ["x", "y"]),
          ("A", ["y", Z]), ("B", [Z, "y"]), ("A", [Z, "x"]), ("B", ["x", Z])]
# A best-worst campaign: (best, worst, order shown) per answer; P is chosen best every time.
P = "<i>p</i>"
CHOSEN = [("A", "D", [P, "q", "r", "s"]), ("B", "A", ["r", P, "s", "q"]),
          ("A", "C", [P, "s", "q", "r"])]


def pairwise_campaign(owner):
    campaign = make_campaign(owner=owner, schema=PAIRWISE_SCHEMA)
    for n, (choice, order) in enumerate(JUDGED):
        make_annotation(campaign, item=f"i{n}", system="", platform_id=f"W{n % 3}",
                        answers={"preference": {"choice": choice, "order": order}})
    return campaign


def best_worst_campaign(owner):
    campaign = make_campaign(owner=owner, schema=BWS_SCHEMA)
    data = {"prompt": "p", "outputs": [{"system": s, "text": s} for s in (P, "q", "r", "s")]}
    for n, (best, worst, order) in enumerate(CHOSEN):
        make_annotation(campaign, item=f"i{n}", system="", data=data, platform_id=f"W{n}",
                        answers={"bestworst": {"best": best, "worst": worst, "order": order}})
    return campaign


def _csv_tables(campaign) -> dict[str, list[dict]]:
    tables: dict[str, list[dict]] = {}
    for row in csv.DictReader(io.StringIO(_write(campaign, "analysis-csv"))):
        tables.setdefault(row.pop("table"), []).append(row)
    return tables


def _same(cell: str, value) -> bool:
    """Whether a CSV cell holds this statistics value (numbers to the float's precision)."""
    if value is None:
        return cell == ""
    if isinstance(value, bool):
        return cell == str(value).lower()
    if isinstance(value, int | float):
        return float(cell) == pytest.approx(value, abs=1e-12)
    return cell == value


def _assert_rows_equal(rows: list[dict], expected: list[dict], question: str):
    assert len(rows) == len(expected)
    for row, want in zip(rows, expected, strict=True):
        assert row["question"] == question
        for key, value in want.items():
            assert _same(row[key], value), (key, row[key], value)


def test_the_csv_flattens_pairwise_preference_into_one_table_per_kind_of_row(owner):
    campaign = pairwise_campaign(owner)
    tables = _csv_tables(campaign)
    [entry] = campaign_statistics(campaign=campaign)["pairwise_preference"]
    [scalars] = tables["pairwise_preference"]
    assert (scalars["question"], scalars["judgments"], scalars["tie_model"],
            scalars["tie_parameter"], scalars["ties"]) == ("preference", "8", "split", "", "")
    for key in ("pairs", "win_rates", "bradley_terry"):
        _assert_rows_equal(tables[f"pairwise_preference_{key}"], entry[key], "preference")
    _assert_rows_equal(tables["pairwise_preference_position_bias"], [entry["position_bias"]],
                       "preference")
    # The values themselves, counted by hand from JUDGED (systems sorted: Z < x < y).
    pairs = {(r["system_a"], r["system_b"]): (r["wins_a"], r["ties"], r["wins_b"], r["win_rate_a"])
             for r in tables["pairwise_preference_pairs"]}
    assert pairs == {(Z, "x"): ("2", "0", "0", "1.0"), (Z, "y"): ("0", "0", "2", "0.0"),
                     ("x", "y"): ("2", "1", "1", "0.625")}
    rates = {r["system"]: (r["wins"], r["ties"], r["losses"], float(r["win_rate"]))
             for r in tables["pairwise_preference_win_rates"]}
    assert rates == {"x": ("2", "1", "3", pytest.approx(2.5 / 6)), "y": ("3", "1", "2",
                     pytest.approx(3.5 / 6)), Z: ("2", "0", "2", 0.5)}
    [bias] = tables["pairwise_preference_position_bias"]
    assert (bias["first_wins"], bias["second_wins"], bias["ties"], bias["pairs_both_ways"]) == (
        "4", "3", "1", "3")
    # No cell holds a nested table any more.
    assert not any(cell.startswith(("[", "{")) for name, rows in tables.items()
                   if name.startswith("pairwise_preference") for row in rows
                   for cell in row.values())


def test_the_csv_bradley_terry_rows_are_the_maximum_likelihood_fit(owner):
    """Checked against a direct fit with scipy: ties split, log-strengths centred on 0."""
    from scipy.optimize import minimize

    rows = _csv_tables(pairwise_campaign(owner))["pairwise_preference_bradley_terry"]
    systems = sorted([Z, "x", "y"])
    code = {s: n for n, s in enumerate(systems)}
    games = [(code[order[0]], code[order[1]], {"A": 1, "B": 0, "tie": 0.5}[choice])
             for choice, order in JUDGED]

    def loss(theta):
        return -sum(s * (theta[a] - np.logaddexp(theta[a], theta[b]))
                    + (1 - s) * (theta[b] - np.logaddexp(theta[a], theta[b]))
                    for a, b, s in games)

    theta = minimize(loss, np.zeros(3), method="BFGS", options={"gtol": 1e-10}).x
    theta -= theta.mean()
    fitted = {r["system"]: float(r["strength"]) for r in rows}
    assert fitted == {s: pytest.approx(theta[code[s]], abs=1e-5) for s in systems}
    assert [r["rank"] for r in rows] == ["1", "2", "3"]
    assert all(float(r["ci_low"]) <= float(r["strength"]) <= float(r["ci_high"]) for r in rows)


def test_the_csv_flattens_best_worst_scores_with_their_question(owner):
    campaign = best_worst_campaign(owner)
    tables = _csv_tables(campaign)
    [entry] = campaign_statistics(campaign=campaign)["best_worst"]
    assert tables["best_worst"] == [{**{c: "" for c in tables["best_worst"][0]},
                                     "question": "bestworst", "answers": "3"}]
    _assert_rows_equal(tables["best_worst_scores"], entry["scores"], "bestworst")
    scores = {r["system"]: (r["best"], r["worst"], r["appearances"], float(r["score"]), r["rank"])
              for r in tables["best_worst_scores"]}
    assert scores == {P: ("3", "0", "3", 1.0, "1"), "q": ("0", "1", "3", pytest.approx(-1 / 3),
                                                          "2"),
                      "r": ("0", "1", "3", pytest.approx(-1 / 3), "2"),
                      "s": ("0", "1", "3", pytest.approx(-1 / 3), "2")}
    assert "pairwise_preference_pairs" not in tables  # no pairwise question: no rows
