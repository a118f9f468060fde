"""The evaluation report's sections on disagreement between raters (analysis/disagreement.py)
and on style-adjusted pairwise strengths (analysis/preference_style.py); report.py places
them."""
from __future__ import annotations

from .report_cells import _interval, _label, _md, _num, _table


def _counts_text(counts: dict | None) -> str:
    if not counts:
        return "–"
    return _md(", ".join(f"{label}: {n}" for label, n in counts.items()))


def disagreement_markdown(report: dict) -> list[str]:
    """Per question part: mean entropy, the shares of split votes and the spread, then the
    most disputed items with their label counts."""
    rows = report.get("disagreement") or []
    if not rows:
        return []
    out = ["## Disagreement between raters", "",
           "Per item, over items with two or more ratings: Shannon entropy of the labels in "
           "bits (normalised: divided by log2 of the number of labels the part received); "
           "split = not unanimous; no majority = no label with more than half of the item's "
           "ratings; for numbers, the standard deviation of an item's ratings.", ""]
    out += _table(["Question", "Level", "Items", "Ratings/item", "Entropy (bits)",
                   "Normalised", "Split", "No majority", "Mean sd"], [
        [_label(r), _md(r["level"]), str(r["units"]), _num(r["ratings_per_unit"], 1),
         _num(r["mean_entropy"]), _num(r["mean_normalised_entropy"]),
         _share(r["share_split"]), _share(r["share_no_majority"]), _num(r["mean_sd"])]
        for r in rows])
    disputed = report.get("disputed_items") or []
    if disputed:
        out += ["Most disputed items (highest entropy; highest sd for numbers):", ""]
        out += _table(["Question", "#", "Item", "System", "Ratings", "Label counts",
                       "Entropy", "sd"], [
            [_label(d), str(d["rank"]), _md(d.get("item_id")), _md(d.get("system") or None),
             str(d["n"]), _counts_text(d.get("label_counts")), _num(d.get("entropy")),
             _num(d.get("sd"))] for d in disputed])
    return out


def _share(value) -> str:
    return "–" if value is None else f"{value:.0%}"


def style_markdown(e: dict) -> list[str]:
    """The style-adjusted strengths of one pairwise question, when the option was on."""
    rows = e.get("bradley_terry_style")
    if rows is None:
        return []
    if not rows:
        return ["Style control: no fit (no style feature differs in enough judgments, or no "
                "finite fit).", ""]
    effects = "; ".join(f"{_md(x['term'])} {_num(x['coefficient'])} {_interval(x)}"
                        for x in e.get("style_effects") or [])
    dropped = e.get("style_dropped") or []
    out = ["Style control (Chatbot Arena): Bradley-Terry with the position term and the "
           "outputs' differences in length and Markdown as covariates (log-odds per standard "
           f"deviation of each difference: {effects})"
           + (f"; not modelled, too few judgments differ: {_md(', '.join(dropped))}"
              if dropped else "") + ". Strengths as if both sides answered in the same style:",
           ""]
    return out + _table(["Rank", "Rank 95% range", "System", "Strength [95% CI]",
                         "Elo [95% CI]", "Unadjusted"], [
        [str(r["rank"]), "–" if r["rank_low"] is None else f"{r['rank_low']}-{r['rank_high']}",
         _md(r["system"]), f"{_num(r['strength'])} {_interval(r)}",
         f"{_num(r['elo'], 0)} [{_num(r['elo_low'], 0)}, {_num(r['elo_high'], 0)}]",
         _num(r["unadjusted_strength"])] for r in rows])
