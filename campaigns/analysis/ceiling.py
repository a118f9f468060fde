"""Which human ceiling a design allows, per question and part, and why none when none.

Input: human judgments with columns item, system, worker, question, part, value; `levels`
maps (question, part) to a level of measurement. Pure functions.
"""
from __future__ import annotations

import pandas as pd

from .system_level import MIN_ITEMS_PER_HALF, MIN_SYSTEMS, split_half_ceiling

KEYS = ["question", "part"]
NUMERIC = ("ordinal", "interval", "ratio")
COLUMNS = ["question", "part", "method", "humans", "items", "items_two_humans", "systems",
           "split_half_r", "spearman_brown", "ceiling_pearson", "split_low", "split_high",
           "reason"]
LEAVE_ONE_OUT = "leave_one_out"
SPLIT_HALF = "system_split_half"
NONE = "none"


def ceiling_summary(humans: pd.DataFrame, levels: dict, *, seed: int = 0) -> pd.DataFrame:
    """Per (question, part) the ceiling the judge figures can be read against:

    - `leave_one_out` when some item has two humans: each human against the others' consensus
      (alignment.human_ceiling's rows);
    - `system_split_half` when every item has one human (one human, or humans on disjoint
      items) on a numeric part with at least MIN_SYSTEMS systems of 2 * MIN_ITEMS_PER_HALF
      items: the split-half reliability of the human system means and the ceiling it puts on
      a system-level Pearson (system_level.split_half_ceiling);
    - `none` otherwise, with the reason.
    """
    rated = humans.dropna(subset=["value"]).drop_duplicates(["worker", *KEYS, "item"],
                                                            keep="last")
    rows = []
    for (question, part), group in rated.groupby(KEYS, sort=True):
        level = levels.get((question, part))
        if level is None:
            continue
        raters = group.groupby("item")["worker"].nunique()
        row = {"question": question, "part": part, "humans": int(group["worker"].nunique()),
               "items": int(len(raters)), "items_two_humans": int((raters >= 2).sum()),
               "systems": int(group["system"].nunique())}
        rows.append({**row, **_method(group, level, row)})
    return pd.DataFrame(rows, columns=COLUMNS)


def _method(group: pd.DataFrame, level: str, row: dict) -> dict:
    if row["items_two_humans"]:
        return {"method": LEAVE_ONE_OUT, "reason": ""}
    who = ("one human rated every item" if row["humans"] == 1
           else "each item was rated by one human")
    if level not in NUMERIC:
        return {"method": NONE, "reason": f"no ceiling: {who}, so no second rating of an item "
                                          "to hold a judge against, and a nominal part has no "
                                          "system means to split"}
    split = split_half_ceiling(group["system"].astype(str).to_numpy(),
                               group["value"].astype(float).to_numpy())
    if split is None:
        return {"method": NONE, "reason": (
            f"no ceiling: {who}, so no second rating of an item to hold a judge against, and "
            f"fewer than {MIN_SYSTEMS} systems with {2 * MIN_ITEMS_PER_HALF} items each to "
            "split the human's system means in halves")}
    return {"method": SPLIT_HALF, **split, "reason": (
        f"{who}: the ceiling is on system-level Pearson only, from split halves of each "
        "system's items (Spearman-Brown)")}
