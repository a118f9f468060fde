"""What each figure shows, read from the statistics' output (never recomputed): its key, title,
text alternative, data table, and the values it plots.

A plan is a dict: `key` (unique, stable), `kind` (how draw.py draws it), `title`, `alt` (the
text alternative, a sentence or two stating what the figure shows), `columns` and `rows` (the
data table shown under it and written to CSV and LaTeX) and `values` (exactly what is plotted,
kept beside the drawing so that a test can compare it with the statistics).
"""
from __future__ import annotations

from collections import defaultdict

CHART_PARTS = ("", "total")  # a rubric's total stands for its criteria in the score figures


def _label(question: str, part: str) -> str:
    return f"{question}.{part}" if part else question


def _fmt(value, digits: int = 3) -> str | None:
    return None if value is None else round(float(value), digits)


def _forest(key, title, alt, rows, *, estimate="estimate", xlabel, groups=None, notes=None,
            columns=None, table=None) -> dict:
    values = {"labels": [r["_label"] for r in rows], "estimate": [r[estimate] for r in rows],
              "low": [r.get("ci_low") for r in rows], "high": [r.get("ci_high") for r in rows],
              "xlabel": xlabel}
    if groups is not None:
        values["groups"] = groups
    if notes is not None:
        values["notes"] = notes
    return {"key": key, "kind": "forest", "title": title, "alt": alt,
            "columns": columns or ["Label", "Estimate", "95% CI low", "95% CI high"],
            "rows": table or [[r["_label"], _fmt(r[estimate]), _fmt(r.get("ci_low")),
                               _fmt(r.get("ci_high"))] for r in rows],
            "values": values}


def _interval_text(rows, name="estimate") -> str:
    parts = []
    for r in rows:
        low, high = r.get("ci_low"), r.get("ci_high")
        ci = "" if low is None else f" [{low:.2f}, {high:.2f}]"
        parts.append(f"{r['_label']} {r[name]:.2f}{ci}")
    return "; ".join(parts)


def system_score_plans(statistics: dict) -> list[dict]:
    """Per question (its total for a rubric): mean per system with its 95% interval, best
    first, each system's significance group (systems in one group are not distinguishable
    after correction) from the ranking."""
    groups = {(r["question"], r["part"], r["system"]): r.get("cluster")
              for r in statistics.get("ranking", [])}
    by_part = defaultdict(list)
    for r in statistics.get("system_scores", []):
        if r.get("mean") is not None:
            by_part[r["question"], r["part"]].append(r)
    chosen = [k for k in by_part if k[1] in CHART_PARTS]
    chosen += [k for k in by_part if not any(q == k[0] for q, _ in chosen)]
    plans = []
    for question, part in chosen:
        rows = sorted(by_part[question, part], key=lambda r: (-r["mean"], str(r["system"])))
        rows = [{**r, "_label": r["system"] or "(no system)", "estimate": r["mean"]}
                for r in rows]
        cluster = [groups.get((question, part, r["system"])) for r in rows]
        n_groups = len({c for c in cluster if c is not None})
        label = _label(question, part)
        plans.append(_forest(
            f"scores:{label}", f"{label}: mean score per system (95% CI)",
            f"Mean {label} per system with 95% intervals, best first: {_interval_text(rows)}. "
            f"{n_groups or 'No'} significance group(s) after correction.",
            rows, xlabel=f"mean {label}", groups=cluster,
            columns=["System", "Items", "Mean", "95% CI low", "95% CI high", "Group"],
            table=[[r["_label"], r["n_items"], _fmt(r["mean"]), _fmt(r["ci_low"]),
                    _fmt(r["ci_high"]), c] for r, c in zip(rows, cluster, strict=True)]))
    return plans


def preference_plans(statistics: dict) -> list[dict]:
    """Per pairwise question: Bradley-Terry strengths with intervals and rank ranges, and the
    win-rate matrix (row system's wins against the column system) with its counts."""
    plans = []
    for e in statistics.get("pairwise_preference", []):
        q = e["question"]
        strengths = [{**r, "_label": r["system"], "estimate": r["strength"]}
                     for r in e.get("bradley_terry", [])]
        if strengths:
            ranks = [f"rank {r['rank']}" + ("" if r["rank_low"] is None
                                            else f" ({r['rank_low']}-{r['rank_high']})")
                     for r in strengths]
            plans.append(_forest(
                f"bradley_terry:{q}", f"{q}: Bradley-Terry strength (95% CI)",
                f"Bradley-Terry strengths (log scale) of {q} with 95% intervals and rank ranges: "
                + "; ".join(f"{r['_label']} {r['strength']:.2f} ({k})"
                            for r, k in zip(strengths, ranks, strict=True)) + ".",
                strengths, xlabel="log-strength (mean 0)", notes=ranks,
                columns=["System", "Strength", "95% CI low", "95% CI high", "Rank",
                         "Rank low", "Rank high"],
                table=[[r["system"], _fmt(r["strength"]), _fmt(r["ci_low"]),
                        _fmt(r["ci_high"]), r["rank"], r["rank_low"], r["rank_high"]]
                       for r in strengths]))
        if e.get("pairs"):
            plans.append(_win_matrix(q, e))
    return plans


def _win_matrix(question: str, entry: dict) -> dict:
    systems = [r["system"] for r in entry["win_rates"]]
    cells = {}
    for p in entry["pairs"]:
        cells[p["system_a"], p["system_b"]] = (p["wins_a"], p["ties"], p["wins_b"])
        cells[p["system_b"], p["system_a"]] = (p["wins_b"], p["ties"], p["wins_a"])
    matrix, text, table = [], [], []
    for a in systems:
        row, row_text = [], []
        for b in systems:
            won = cells.get((a, b))
            n = sum(won) if won else 0
            row.append((won[0] + won[1] / 2) / n if n else None)
            row_text.append(f"{won[0]}-{won[1]}-{won[2]}" if won else "")
            if won and a < b:
                table.append([a, b, won[0], won[1], won[2], n, _fmt(row[-1])])
        matrix.append(row)
        text.append(row_text)
    return {"key": f"win_rates:{question}", "kind": "heatmap",
            "title": f"{question}: win rate of row over column",
            "alt": f"Win rate of each row system against each column system for {question} "
                   "(a tie counts half), with wins-ties-losses in each cell: "
                   + "; ".join(f"{r[0]} vs {r[1]} {r[2]}-{r[3]}-{r[4]}" for r in table) + ".",
            "columns": ["System A", "System B", "A wins", "Ties", "B wins", "n",
                        "A's win rate"],
            "rows": table,
            "values": {"rows": systems, "columns": systems, "matrix": matrix, "text": text,
                       "colorbar": "win rate", "vmin": 0.0, "vmax": 1.0}}


def best_worst_plans(statistics: dict) -> list[dict]:
    plans = []
    for e in statistics.get("best_worst", []):
        rows = [{**r, "_label": r["system"], "estimate": r["score"]} for r in e["scores"]]
        if not rows:
            continue
        q = e["question"]
        plans.append(_forest(
            f"best_worst:{q}", f"{q}: best-minus-worst score (95% CI)",
            f"Best-minus-worst scores of {q} (from -1 to 1) with 95% intervals: "
            f"{_interval_text(rows)}.", rows, xlabel="(best - worst) / appearances",
            columns=["System", "Best", "Worst", "Appearances", "Score", "95% CI low",
                     "95% CI high"],
            table=[[r["system"], r["best"], r["worst"], r["appearances"], _fmt(r["score"]),
                    _fmt(r["ci_low"]), _fmt(r["ci_high"])] for r in rows]))
    return plans
