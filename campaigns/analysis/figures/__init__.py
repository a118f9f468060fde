"""Figures of the statistics, drawn in the statistics job (never in a web request) from the
statistics' output: each with a text alternative, its data table, and the values it plots.

`figure_plans(statistics)` says what every applicable figure shows (plans.py, plans_more.py);
`draw_figures(statistics, pdf=...)` draws them as SVG (and PDF for the paper bundle) with
matplotlib (style.py: colour-blind-safe palette, two-column paper sizes, reproducible bytes).
"""
from __future__ import annotations

from .plans import best_worst_plans, preference_plans, system_score_plans
from .plans_disagreement import disagreement_plans
from .plans_more import (
    agreement_plans,
    error_span_plans,
    judge_plans,
    progress_plans,
    worker_plans,
)

PLANNERS = (agreement_plans, disagreement_plans, system_score_plans, preference_plans,
            best_worst_plans, error_span_plans, judge_plans, worker_plans, progress_plans)


def figure_plans(statistics: dict) -> list[dict]:
    """Every figure that applies to these statistics, in the page's order."""
    return [plan for planner in PLANNERS for plan in planner(statistics)]


def draw_figures(statistics: dict, *, pdf: bool = False) -> list[dict]:
    """Each plan with its drawing: `svg` (text), and `pdf` (base64) when asked."""
    from .draw import DRAW
    from .style import render

    out = []
    for plan in figure_plans(statistics):
        figure = DRAW[plan["kind"]](plan["values"])
        figure.suptitle(plan["title"], fontsize=7.5, x=0.01, ha="left")
        out.append({**plan, **render(figure, title=plan["title"], pdf=pdf)})
    return out
