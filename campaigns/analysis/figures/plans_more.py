"""Plans (see plans.py) for error spans, agreement, judges, workers and progress."""
from __future__ import annotations

from .plans import _fmt, _forest, _interval_text, _label


def error_span_plans(statistics: dict) -> list[dict]:
    """Per spans question: MQM score per system with its interval, and the error counts per
    system stacked by severity and by category."""
    plans = []
    for e in statistics.get("error_spans", []):
        q = e["question"]
        rows = [{**r, "_label": r["system"], "estimate": r["mqm"]} for r in e.get("mqm", [])]
        if rows:
            plans.append(_forest(
                f"mqm:{q}", f"{q}: MQM penalty per answer (95% CI; lower is better)",
                f"MQM penalties of {q} per system with 95% intervals, best first: "
                f"{_interval_text(rows)}.", rows, xlabel="MQM penalty per answer",
                columns=["System", "Items", "Errors", "MQM", "95% CI low", "95% CI high"],
                table=[[r["system"], r["items"], r["errors"], _fmt(r["mqm"]),
                        _fmt(r["ci_low"]), _fmt(r["ci_high"])] for r in rows]))
        for by in ("severity", "category"):
            counted = e.get(f"errors_by_{by}", [])
            if counted:
                plans.append(_stacked(q, by, counted))
    return plans


MAX_STACKED = 8  # more categories than colours: their top level ("accuracy/omission": accuracy)


def _stacked(question: str, by: str, counted: list[dict]) -> dict:
    if len({r[by] for r in counted}) > MAX_STACKED:
        top: dict = {}
        for r in counted:
            key = (r["system"], str(r[by]).split("/")[0])
            top[key] = top.get(key, 0) + r["errors"]
        counted = [{"system": s, by: c, "errors": n} for (s, c), n in top.items()]
    systems = sorted({r["system"] for r in counted}, key=str)
    names = []
    for r in counted:
        if r[by] not in names:
            names.append(r[by])
    cells = {(r["system"], r[by]): r["errors"] for r in counted}
    series = [{"name": str(n), "counts": [cells.get((s, n), 0) for s in systems]}
              for n in names]
    return {"key": f"errors_by_{by}:{question}", "kind": "stacked",
            "title": f"{question}: errors per system by {by}",
            "alt": f"Error counts of {question} per system, stacked by {by}: " + "; ".join(
                f"{s}: " + ", ".join(f"{x['name']} {x['counts'][i]}" for x in series)
                for i, s in enumerate(systems)) + ".",
            "columns": ["System", *[x["name"] for x in series]],
            "rows": [[s, *[x["counts"][i] for x in series]] for i, s in enumerate(systems)],
            "values": {"labels": systems, "series": series, "xlabel": "errors"}}


def agreement_plans(statistics: dict) -> list[dict]:
    """Krippendorff's alpha per question part (pooled, then per subset) with its interval."""
    pooled, subsets = [], []
    for r in statistics.get("agreement", []):
        if r.get("alpha") is None:
            continue
        subset = r.get("subset")
        where = "" if not subset else " (" + ", ".join(f"{k}={v}" for k, v in subset.items()) + ")"
        (subsets if subset else pooled).append(
            {**r, "_label": _label(r["question"], r["part"]) + where, "estimate": r["alpha"]})
    return [_agreement(key, title, rows) for key, title, rows in (
        ("agreement", "Inter-annotator agreement (Krippendorff's alpha, 95% CI)", pooled),
        ("agreement_subsets", "Agreement per subset (Krippendorff's alpha, 95% CI)", subsets),
    ) if rows]


def _agreement(key: str, title: str, rows: list[dict]) -> dict:
    return _forest(
        key, title, f"Krippendorff's alpha per question part with 95% bootstrap intervals: "
        f"{_interval_text(rows)}.", rows, xlabel="Krippendorff's alpha",
        columns=["Question part", "Level", "alpha", "95% CI low", "95% CI high", "Items",
                 "Raters"],
        table=[[r["_label"], r["level"], _fmt(r["alpha"]), _fmt(r["ci_low"]),
                _fmt(r["ci_high"]), r["n_items"], r["n_raters"]] for r in rows])


def judge_plans(statistics: dict) -> list[dict]:
    """Per judge and numeric question part: system means of the judge against the humans'
    with the Pearson correlation and its interval (items resampled within systems, else
    Fisher's z); per judge and part the confusion matrix of the judge's values against the
    human consensus."""
    plans = []
    for r in statistics.get("judges", []):
        means = r.get("system_means") or []
        if len(means) < 2:
            continue
        label = _label(r["question"], r["part"])
        pearson = r.get("system_pearson")
        low, high = r.get("system_pearson_boot_ci_low"), r.get("system_pearson_boot_ci_high")
        if low is None:
            low, high = r.get("system_pearson_ci_low"), r.get("system_pearson_ci_high")
        note = ("r not defined" if pearson is None else f"r = {pearson:.2f}"
                + ("" if low is None else f" [{low:.2f}, {high:.2f}]"))
        plans.append({
            "key": f"judge_systems:{r['judge']}:{label}", "kind": "scatter",
            "title": f"{r['judge']} vs humans: {label}, system means",
            "alt": f"System means of {label} by the judge {r['judge']} against the human "
                   f"raters', {note}: " + "; ".join(
                       f"{m['system']} human {m['human']:.2f}, judge {m['judge']:.2f}"
                       for m in means) + ".",
            "columns": ["System", "Human mean", "Judge mean"],
            "rows": [[m["system"], _fmt(m["human"]), _fmt(m["judge"])] for m in means],
            "values": {"labels": [m["system"] for m in means],
                       "x": [m["human"] for m in means], "y": [m["judge"] for m in means],
                       "xlabel": "human mean", "ylabel": f"{r['judge']} mean", "note": note}})
    for m in statistics.get("confusion", []):
        label = _label(m["question"], m["part"])
        plans.append({
            "key": f"confusion:{m['judge']}:{label}", "kind": "heatmap",
            "title": f"{m['judge']} vs human consensus: {label}",
            "alt": f"Confusion matrix of {label}: human consensus values in rows, the judge "
                   f"{m['judge']}'s in columns; {sum(map(sum, m['matrix']))} items.",
            "columns": ["Human \\ judge", *m["labels"]],
            "rows": [[lab, *row] for lab, row in zip(m["labels"], m["matrix"], strict=True)],
            "values": {"rows": m["labels"], "columns": m["labels"],
                       "matrix": [[float(v) for v in row] for row in m["matrix"]],
                       "text": [[str(v) for v in row] for row in m["matrix"]],
                       "colorbar": "items", "vmin": 0.0, "vmax": None,
                       "xlabel": "judge", "ylabel": "human consensus"}})
    return plans


def worker_plans(statistics: dict) -> list[dict]:
    """Each worker's reliability (Dawid-Skene) and median seconds per item, flagged workers
    marked."""
    flagged = set(statistics.get("flagged_workers", []))
    panels = []
    # Dawid-Skene's figure, for the workers with enough labels to show one.
    reliability = [r for r in statistics.get("worker_reliability") or []
                   if r.get("model", "dawid_skene") == "dawid_skene"
                   and r.get("reliability") is not None]
    if reliability:
        panels.append({"name": "reliability (Dawid-Skene)",
                       "workers": [r["worker"] for r in reliability],
                       "values": [r["reliability"] for r in reliability],
                       "flagged": [r["worker"] in flagged for r in reliability]})
    speed = [r for r in statistics.get("quality", []) if r.get("median_seconds") is not None]
    if speed:
        panels.append({"name": "median seconds per item",
                       "workers": [r["worker"] for r in speed],
                       "values": [r["median_seconds"] for r in speed],
                       "flagged": [r["worker"] in flagged for r in speed]})
    if not panels:
        return []
    table = {}
    for p in panels:
        for w, v, f in zip(p["workers"], p["values"], p["flagged"], strict=True):
            table.setdefault(w, {"flagged": f})[p["name"]] = _fmt(v)
    names = [p["name"] for p in panels]
    return [{"key": "workers", "kind": "strip", "title": "Workers: reliability and speed",
             "alt": f"{len(table)} workers' " + " and ".join(names) + f"; {len(flagged)} "
                    "flagged by quality control, drawn as crosses.",
             "columns": ["Worker", *names, "Flagged"],
             "rows": [[w, *[t.get(n) for n in names], "yes" if t["flagged"] else "no"]
                      for w, t in sorted(table.items())],
             "values": {"panels": panels}}]


def progress_plans(statistics: dict) -> list[dict]:
    days = statistics.get("progress") or []
    if not days:
        return []
    return [{"key": "progress", "kind": "line", "title": "Progress: annotations over time",
             "alt": f"Cumulative annotations per day from {days[0]['day']} to "
                    f"{days[-1]['day']}, {days[-1]['cumulative']} in all.",
             "columns": ["Day", "Annotations", "Cumulative"],
             "rows": [[d["day"], d["annotations"], d["cumulative"]] for d in days],
             "values": {"x": [str(d["day"]) for d in days],
                        "y": [d["cumulative"] for d in days], "ylabel": "annotations"}}]
