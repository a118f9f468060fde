"""LLM judges beside the humans: the judge tables, failed outputs, one item side by side."""
from __future__ import annotations

import pandas as pd
from django.db.models import Exists, OuterRef

from ...analysis import (
    agreement,
    alignment,
    ceiling,
    judges,
)
from ...models import Campaign, JudgeOutput
from ...schema import parse_schema
from .frames import (
    NUMERIC,
    _levels,
    _part_texts,
    annotations_frame,
    output_units,
    records,
    split_frame,
)


def _judge_tables(humans: pd.DataFrame, llm: pd.DataFrame, *, n_boot: int = agreement.N_BOOT,
                  include_failed: bool = False) -> dict:
    """Judge alignment against the human consensus, the human ceiling, failed judge outputs
    (listed always, left out of the figures unless `include_failed`) and confusion matrices."""
    # Each output rated per output is its own unit (output_units), as in the agreement table.
    rated_humans = output_units(humans[humans["rated"] & humans["control"].eq("")]).assign(
        worker=lambda f: f["worker_name"])
    judged = output_units(llm[llm["rated"] & llm["control"].eq("")]).assign(
        worker=lambda f: f["worker_name"])
    levels = _levels(pd.concat([rated_humans, judged]))
    numeric = pd.concat([rated_humans, judged])
    numeric = numeric[numeric["level"].isin(NUMERIC)]
    minima = numeric.assign(value=numeric["value"].astype(float)).groupby(
        ["question", "part"])["value"].min().to_dict()
    failed = alignment.failed_outputs(judged, minima)
    failed_rows = failed.merge(judged.drop_duplicates("item")[["item", "external_id"]], on="item")
    failed_list = [{"judge": r.judge, "item": r.external_id, "reason": r.reason}
                   for r in failed_rows.sort_values(["judge", "external_id"]).itertuples()]
    if len(failed) and not include_failed:
        bad = set(zip(failed["judge"], failed["item"], strict=True))
        keep = [(w, i) not in bad for w, i in zip(judged["worker"], judged["item"], strict=True)]
        judged = judged[keep]
    # One ceiling row per human while there are few of them; a crowd gets one pooled row
    # (hundreds of rows with intervals would cost minutes and be read by nobody).
    few = rated_humans["worker"].nunique() <= CEILING_PER_WORKER
    human_levels = _levels(rated_humans)
    ceiling_rows = alignment.human_ceiling(rated_humans, human_levels, n_boot=n_boot,
                                           per_worker=few)
    summary = ceiling.ceiling_summary(rated_humans, human_levels)
    if judged.empty:
        return {"judges": pd.DataFrame(columns=JUDGE_COLUMNS), "confusion": [],
                "judged_items": [], "human_ceiling": ceiling_rows,
                "human_ceiling_summary": summary, "judge_failed_outputs": failed_list}
    rated = rated_humans[rated_humans["item"].isin(judged["item"])]
    table = alignment.judge_alignment(rated, judged, levels, n_boot=n_boot)
    # The names this table had before the alignment report, kept beside the new ones.
    table = table.assign(n_items=table["n"], exact_agreement=table["exact"])
    consensus = judges.human_consensus(rated, levels)
    return {
        "judges": table[JUDGE_COLUMNS],
        "confusion": judges.confusion_matrices(consensus, judged),
        "judged_items": sorted(set(judged["external_id"]) & set(rated["external_id"])),
        "human_ceiling": ceiling_rows,
        "human_ceiling_summary": summary,
        "judge_failed_outputs": failed_list,
    }


JUDGE_COLUMNS = [*alignment.COLUMNS, "n_items", "exact_agreement"]
CEILING_PER_WORKER = 30


def run_failed_outputs(*, campaign: Campaign) -> list[dict]:
    """Outputs of the campaign's judge runs that stayed invalid after every attempt (they never
    became answers, so the figures never saw them), one row per judge, item and sample."""
    valid = JudgeOutput.objects.filter(
        judge=OuterRef("judge"), item=OuterRef("item"), sample=OuterRef("sample"), failed=False)
    last = (JudgeOutput.objects.filter(judge__campaign=campaign, failed=True)
            .exclude(Exists(valid)).order_by("judge__name", "item__external_id", "sample",
                                             "-attempt")
            .values_list("judge__name", "item__external_id", "sample", "failure_reason"))
    rows, seen = [], set()
    for judge, item, sample, reason in last:
        if (judge, item, sample) not in seen:  # the last attempt's reason
            seen.add((judge, item, sample))
            rows.append({"judge": judge, "item": item, "reason": f"run output: {reason}"})
    return rows


def item_side_by_side(*, campaign: Campaign, external_id: str) -> list[dict]:
    """Seed 003's table for one item: each judge's value next to the human consensus."""
    schema = parse_schema(campaign.schema)
    frame = annotations_frame(campaign=campaign, schema=schema)
    frame = frame[frame["external_id"].eq(external_id) & frame["rated"]]
    humans, llm = split_frame(frame)
    consensus = judges.human_consensus(humans, _levels(humans))
    table = judges.side_by_side(
        frame["item"].iloc[0] if len(frame) else None, consensus,
        llm.assign(worker=llm["worker_name"]), _part_texts(schema))
    return records(table)
