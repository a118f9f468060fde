"""The "analysis" export: every table of the statistics page, as one CSV or one JSON document.

analysis-json: campaign_statistics() as it is (the API's stats body), plus `report`, the
evaluation report built from those same figures. The service that runs the export job reads
both (services/exports.py, write_analysis); this module only writes them.
analysis-md: that report as Markdown.
analysis-csv: one CSV whose first column `table` names the table each row belongs to
(agreement, system_scores, ranking, pairwise, quality, judges, confusion, progress, changes_*,
pairwise_preference_bradley_terry, best_worst_scores, error_spans_mqm, ...); the other columns
are the union of all tables' columns, empty where a table has none.
In pandas: `df[df.table == "agreement"].dropna(axis=1, how="all")`. Confusion matrices are
flattened to one row per cell (judge, question, part, human, judge_value, count).
soft-labels: each rated unit's label distribution, one row per unit, question part and label
received (selectors/analysis/disagreement.py, SOFT_LABEL_COLUMNS; docs/exports.md).
"""
from __future__ import annotations

import csv
import json
from typing import TextIO

from ..models import ExportJob
from .cells import csv_cell

SCALARS = ("campaign", "exclude_flagged", "figures_from")
# Statistics holding one entry per question, each with its own tables.
PER_QUESTION = ("pairwise_preference", "best_worst", "error_spans")
# A per-question scalar given another column name in its flat table: (statistic, key) -> column
# (`ties` is the tie model there, and a count of ties in every other table).
RENAMED = {("pairwise_preference", "ties"): "tie_model"}


def write_statistics(statistics: dict, report: dict, *, fmt: str, stream: TextIO) -> None:
    """Write a campaign's statistics and evaluation report to a text stream in an analysis
    format (ExportJob.Format)."""
    if fmt == ExportJob.Format.ANALYSIS_MD:
        stream.write(report["markdown"])
    elif fmt == ExportJob.Format.ANALYSIS_JSON:
        report = {key: value for key, value in report.items() if key != "markdown"}
        json.dump({**statistics, "report": report}, stream, ensure_ascii=False, indent=1)
        stream.write("\n")
    else:
        write_tables_csv(statistics, stream)


def write_soft_labels(rows: list[dict], columns: list[str], stream: TextIO) -> None:
    """The soft-labels CSV: a header of `columns`, then the rows."""
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in columns])


def statistics_tables(statistics: dict) -> dict[str, list[dict]]:
    """Every table of a statistics dict as a list of flat rows, keyed by table name."""
    tables: dict[str, list[dict]] = {
        "summary": [{"campaign": statistics["campaign"],
                     "exclude_flagged": statistics["exclude_flagged"],
                     "figures_from": statistics.get("figures_from"),
                     **{k: v for k, v in statistics["counts"].items() if k != "judges"},
                     **statistics.get("options", {}),
                     **{f"resamples_{k}": v for k, v in statistics.get("resamples", {}).items()},
                     "judges_list": "; ".join(statistics["counts"]["judges"])}],
    }
    for name, value in statistics.items():
        if name in SCALARS or name in ("counts", "confusion", "changes", "judged_items",
                                       "flagged_workers", "options", "resamples"):
            continue
        tables.update(per_question_tables(name, value) if name in PER_QUESTION
                      else {name: value})
    tables["confusion"] = [
        {"judge": m["judge"], "question": m["question"], "part": m["part"], "human": h,
         "judge_value": j, "count": m["matrix"][a][b]}
        for m in statistics["confusion"]
        for a, h in enumerate(m["labels"]) for b, j in enumerate(m["labels"])]
    for name, rows in (statistics.get("changes") or {}).items():
        tables[f"changes_{name}"] = rows
    return tables


def per_question_tables(name: str, entries: list[dict]) -> dict[str, list[dict]]:
    """Entries of a per-question statistic as flat tables: `<name>` with each entry's
    scalars, and `<name>_<table>` with the rows of each of its tables (a list of rows, or one
    row for a dict such as the position bias), the question first."""
    tables: dict[str, list[dict]] = {name: []}
    for entry in entries:
        scalars = {}
        for key, value in entry.items():
            rows = [value] if isinstance(value, dict) else value
            if isinstance(rows, list) and all(isinstance(row, dict) for row in rows):
                tables.setdefault(f"{name}_{key}", []).extend(
                    {"question": entry["question"], **row} for row in rows)
            else:
                scalars[RENAMED.get((name, key), key)] = value
        tables[name].append(scalars)
    return tables


def write_tables_csv(statistics: dict, stream: TextIO) -> None:
    tables = statistics_tables(statistics)
    columns: list[str] = []
    for rows in tables.values():
        for row in rows:
            columns += [c for c in row if c not in columns]
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(["table", *columns])
    for name, rows in tables.items():
        for row in rows:
            writer.writerow([name, *(_cell(row.get(c)) for c in columns)])


def _cell(value):
    if isinstance(value, list):
        value = "; ".join(str(v) for v in value)
    return csv_cell(value)
