"""Disagreement tables of a campaign (analysis/disagreement.py) from the analysis frame: the
per-part summary and the most disputed units for the statistics, and every unit's soft label
for the soft-labels export."""
from __future__ import annotations

import pandas as pd

from ...analysis import disagreement
from ...models import Campaign
from ...schema import parse_schema
from .flags import _flagged_names, _quality
from .frames import _agreement_input, annotations_frame, records, split_frame

UNIT_COLUMNS = ["unit", "item", "item_id", "system"]
SOFT_LABEL_COLUMNS = ["item_id", "system", "unit", "question", "part", "n", "label", "count",
                      "share", "entropy", "normalised_entropy", "majority_share"]


def _units(agree: pd.DataFrame) -> pd.DataFrame:
    """unit -> its item's database id, external id and system (an output's own system)."""
    return (agree.drop_duplicates("unit")[["unit", "item", "external_id", "system"]]
            .rename(columns={"external_id": "item_id"}).reset_index(drop=True))


def disagreement_tables(rated: pd.DataFrame, *, top_n: int = disagreement.TOP_N) -> dict:
    """`disagreement` (one summary row per question part) and `disputed_items` (the top_n
    units of each part, with their item's external id and system) of regular rated rows."""
    agree = _agreement_input(rated)
    if agree.empty:
        return {"disagreement": pd.DataFrame(columns=disagreement.SUMMARY_COLUMNS),
                "disputed_items": pd.DataFrame()}
    out = disagreement.disagreement(agree[["unit", "question", "part", "value", "level"]],
                                    top_n=top_n)
    disputed = pd.DataFrame(out["disputed"])
    if len(disputed):
        disputed = disputed.merge(_units(agree), on="unit", how="left")
    return {"disagreement": out["summary"], "disputed_items": disputed}


def soft_label_table(*, campaign: Campaign, exclude_flagged: bool = False) -> pd.DataFrame:
    """Every unit's label distribution in long form (SOFT_LABEL_COLUMNS), by people on
    regular items; with `exclude_flagged`, without the workers quality control flags."""
    schema = parse_schema(campaign.schema)
    humans, _ = split_frame(annotations_frame(campaign=campaign, schema=schema))
    if exclude_flagged and len(humans):
        humans = humans[~humans["worker_name"].isin(_flagged_names(_quality(humans, campaign)))]
    rated = humans[humans["rated"] & humans["control"].eq("")]
    agree = _agreement_input(rated)
    if agree.empty:
        return pd.DataFrame(columns=SOFT_LABEL_COLUMNS)
    soft = disagreement.disagreement(agree[["unit", "question", "part", "value", "level"]],
                                     soft=True)
    table = soft["soft_labels"].merge(_units(agree), on="unit", how="left")
    return table[SOFT_LABEL_COLUMNS]


def soft_label_records(*, campaign: Campaign, exclude_flagged: bool = False) -> list[dict]:
    return records(soft_label_table(campaign=campaign, exclude_flagged=exclude_flagged))
