"""The evaluation report and the study plan built from a campaign's statistics."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from django.db import connection

from ...analysis import (
    comparisons,
    planning,
    report,
)
from ...analysis import (
    power as simulated,
)
from ...analysis.allocation_design import design_assumptions, design_note
from ...models import AllocationChange, Campaign, Item
from .frames import NUMERIC, allocation_counts, annotations_frame, split_frame
from .statistics import QUESTION_PARTS, campaign_statistics

SMALL_EFFECT = 0.2  # Cohen's "small" standardised difference: the planning default


def study_plan(*, campaign: Campaign, effect: float | None = None, power: float = 0.8,
               alpha: float = comparisons.ALPHA, frame: pd.DataFrame | None = None,
               correction: str = "holm", paired: frozenset = frozenset(),
               n_sim: int = simulated.N_SIM) -> list[dict]:
    """Per numeric question (a rubric's total): the variance components of the human ratings
    and how many items per system, or ratings per item, would tell the best system `effect`
    apart from each other one (in the scale's units; default 0.2 sd of the ratings) with
    `power` at level `alpha`, after `correction` over all pairs of the campaign's systems,
    paired for the questions in `paired`: by simulation through the analysis
    (analysis/power.py); the closed form for one uncorrected test stays alongside."""
    frame = annotations_frame(campaign=campaign) if frame is None else frame
    humans, _ = split_frame(frame)
    rated = humans[humans["rated"] & humans["control"].eq("") & humans["level"].isin(NUMERIC)
                   & humans["part"].isin(QUESTION_PARTS)]
    out = []
    for (question, part), group in rated.groupby(["question", "part"], sort=True):
        values = group["value"].astype(float).to_numpy()
        try:
            components = planning.variance_components(group["item"].to_numpy(), values)
        except ValueError:
            continue
        size = effect if effect is not None else SMALL_EFFECT * float(values.std(ddof=1))
        if not size > 0:
            continue
        per_system = int(group.groupby("system")["item"].nunique().median())
        row = planning.plan(components, effect=size, items_per_system=per_system, power=power,
                            alpha=alpha)
        systems = int(group["system"].nunique())
        out.append({"question": question, "part": part, **row,
                     **_corrected(components, row, systems=systems, correction=correction,
                                  paired=question in paired, n_sim=n_sim)})
    return out


def _corrected(components, row: dict, *, systems: int, correction: str, paired: bool,
               n_sim: int) -> dict:
    """The simulated, corrected plan's figures replacing the one-test ones (kept under
    `..._one_test`); ratings per item from the Bonferroni bound alpha / pairs."""
    one_test = {"items_per_system_needed_one_test": row["items_per_system_needed"],
                "ratings_per_item_needed_one_test": row["ratings_per_item_needed"]}
    if systems < 2:
        return {**one_test, "systems": systems, "pairs": 0, "correction": correction,
                "paired": paired, "simulated_power": None, "planned_by": "closed_form"}
    r = max(1.0, components.ratings_per_item)
    sim = simulated.plan_numeric(components, effect=row["effect"], ratings_per_item=r,
                                 systems=systems, correction=correction, paired=paired,
                                 power=row["power"], alpha=row["alpha"], n_sim=n_sim)
    ratings = planning.ratings_needed(components, effect=row["effect"],
                                      items_per_system=row["items_per_system"],
                                      power=row["power"], alpha=row["alpha"] / sim["pairs"])
    items = sim["items_per_system_needed"]
    return {**one_test, "systems": systems, "pairs": sim["pairs"], "correction": correction,
            "paired": paired, "simulated_power": sim["simulated_power"],
            "simulations": sim["simulations"], "planned_by": "simulation",
            "items_per_system_needed": items,
            "more_items_per_system": max(0, items - row["items_per_system"]),
            "ratings_per_item_needed": ratings,
            "more_ratings_per_item": None if ratings is None else max(0, math.ceil(ratings - r))}


# Each regular item's systems: those of its outputs when it carries several (pairwise,
# best-worst, per-output questions), else its own `system`. Then items per system, and the
# most systems one item carries.
ITEM_SYSTEMS = """
    WITH s AS (
        SELECT i.id, COALESCE(o.value ->> 'system', i.system) AS system
        FROM campaigns_item i LEFT JOIN LATERAL jsonb_array_elements(
            CASE WHEN jsonb_typeof(i.data -> 'outputs') = 'array' THEN i.data -> 'outputs'
                 ELSE '[]'::jsonb END) o ON true
        WHERE i.campaign_id = %s AND i.control = '')
    SELECT 'system', count(DISTINCT id) FROM s GROUP BY system
    UNION ALL
    SELECT 'item', max(n) FROM (SELECT count(*) AS n FROM s GROUP BY id) m"""


def _system_counts(campaign: Campaign) -> tuple[list[int], int]:
    """(regular items per system, an item counting once for each system whose output it
    carries; the most systems' outputs one item carries, 0 when none carries two)."""
    with connection.cursor() as cursor:
        cursor.execute(ITEM_SYSTEMS, [campaign.pk])
        rows = cursor.fetchall()
    per_system = [n for kind, n in rows if kind == "system"]
    most = max((n or 0 for kind, n in rows if kind == "item"), default=0)
    return per_system, most if most > 1 else 0


def _design_facts(campaign: Campaign, frame: pd.DataFrame, statistics: dict) -> dict:
    humans, llm = split_frame(frame)
    regular = Item.objects.filter(campaign=campaign, control="")
    per_system, outputs_per_item = _system_counts(campaign)
    done = np.array(list(regular.values_list("annotations_done", flat=True)), dtype=float)
    raters = humans.drop_duplicates("worker")["platform"].value_counts().sort_index()
    return {
        "items": int(regular.count()), "systems": len(per_system),
        "outputs_per_item_max": outputs_per_item,
        "items_per_system_min": min(per_system, default=0),
        "items_per_system_max": max(per_system, default=0),
        "control_items": Item.objects.filter(campaign=campaign).exclude(control="").count(),
        "raters": int(humans["worker"].nunique()),
        "raters_by_platform": {str(k): int(v) for k, v in raters.items()},
        "raters_per_item_median": float(np.median(done)) if len(done) else None,
        "raters_per_item_min": int(done.min()) if len(done) else 0,
        "raters_per_item_max": int(done.max()) if len(done) else 0,
        "judges": sorted(llm["worker_name"].unique().tolist()),
        "payment": None,  # the campaign records no payment; stated as not recorded
        **_allocation_facts(campaign, humans, statistics),
    }


def _allocation_facts(campaign: Campaign, humans: pd.DataFrame, statistics: dict) -> dict:
    """The designs the annotations were handed out under (as the statistics found them; from
    the frame for statistics cached before they said) and the report's note on them."""
    assumptions = statistics.get("allocation_design")
    if assumptions is None:
        assumptions = design_assumptions(allocation_counts(humans))
    changes = AllocationChange.objects.filter(campaign=campaign).count()
    return {"allocation_design": assumptions,
            "allocation": design_note(assumptions, current=campaign.allocation,
                                      changes=changes, stopped=campaign.allocation_stopped,
                                      audit=campaign.allocation_audit)}


def evaluation_report(*, campaign: Campaign, effect: float | None = None, power: float = 0.8,
                      statistics: dict | None = None, **options) -> dict:
    """The evaluation report (campaigns/analysis/report.py) with the statistics' options (or
    from `statistics` already computed), plus `markdown`, the same report as Markdown."""
    statistics = statistics or campaign_statistics(campaign=campaign, **options)
    frame = annotations_frame(campaign=campaign)
    paired = frozenset(r["question"] for r in statistics["comparisons"] if r["paired"])
    plan = study_plan(campaign=campaign, effect=effect, power=power,
                      alpha=statistics["options"]["alpha"], frame=frame,
                      correction=statistics["options"]["correction"], paired=paired)
    built = report.build_report(statistics, _design_facts(campaign, frame, statistics), plan)
    return {**built, "markdown": report.report_markdown(built)}
