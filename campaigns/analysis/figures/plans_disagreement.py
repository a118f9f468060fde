"""Plan (see plans.py) for the disagreement figure: per question part with labels, how many
items were unanimous, split with a majority label, or split with none (analysis/disagreement.py)."""
from __future__ import annotations

PATTERNS = ("unanimous", "split, with a majority", "no majority")


def vote_patterns(row: dict) -> list[int]:
    """(unanimous, split with a majority, no majority) item counts of a disagreement row."""
    units, split, none = row["units"], row["share_split"], row["share_no_majority"]
    unanimous, no_majority = round(units * (1 - split)), round(units * none)
    return [unanimous, units - unanimous - no_majority, no_majority]


def disagreement_plans(statistics: dict) -> list[dict]:
    """One stacked bar per label part: its items by vote pattern."""
    rows = [r for r in statistics.get("disagreement", []) if r.get("share_split") is not None]
    if not rows:
        return []
    labels = [f"{r['question']}.{r['part']}" if r["part"] else r["question"] for r in rows]
    counts = [vote_patterns(r) for r in rows]
    series = [{"name": name, "counts": [c[k] for c in counts]}
              for k, name in enumerate(PATTERNS)]
    return [{"key": "disagreement", "kind": "stacked",
             "title": "Disagreement: items by vote pattern",
             "alt": "Items with two or more ratings per question part, by vote pattern: "
                    + "; ".join(f"{label}: {c[0]} unanimous, {c[1]} split with a majority, "
                                f"{c[2]} with no majority (mean entropy "
                                f"{r['mean_entropy']:.2f} bits)"
                                for label, c, r in zip(labels, counts, rows, strict=True)) + ".",
             "columns": ["Question", *PATTERNS, "Mean entropy (bits)"],
             "rows": [[label, *c, round(r["mean_entropy"], 3)]
                      for label, c, r in zip(labels, counts, rows, strict=True)],
             "values": {"labels": labels, "series": series, "xlabel": "items"}}]
