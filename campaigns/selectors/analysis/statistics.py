"""campaign_statistics: every table of the statistics page, from one analysis frame."""
from __future__ import annotations

import pandas as pd
from django.db.models import Count

from ...analysis import (
    agreement,
    allocation_design,
    comparisons,
    connectivity,
    preference,
    scores,
    worker_models,
)
from ...models import Annotation, Campaign
from ...schema import TaskSchema, parse_schema
from .answers import best_worst_statistics, preference_statistics, span_statistics
from .budget import check_memory_budget, resamples_within_budget
from .disagreement import disagreement_tables
from .flags import _flagged_names, _quality, _rated_units
from .frames import (
    LLM,
    NUMERIC,
    _agreement_input,
    _levels,
    _part_texts,
    allocation_counts,
    annotations_frame,
    item_field_values,
    pairing_field,
    records,
    split_frame,
)
from .judges import _judge_tables, run_failed_outputs

# ---------------------------------------------------------------- statistics from the frame

QUESTION_PARTS = ("", "total")


def _design_input(numeric: pd.DataFrame, segments: pd.Series | None) -> pd.DataFrame:
    question_level = numeric[numeric["part"].isin(QUESTION_PARTS)]
    if segments is None:
        return question_level.assign(segment=None)
    return question_level.assign(segment=segments.reindex(question_level["item"]).to_numpy())


def _human_tables(
    humans: pd.DataFrame, n_boot: int, *, segments: pd.Series | None = None,
    correction: str = "holm", alpha: float = comparisons.ALPHA,
    subsets: dict[str, pd.Series] | None = None, levels: dict[str, str] | None = None,
) -> dict[str, pd.DataFrame]:
    rated = humans[humans["rated"] & humans["control"].eq("")]
    agree = _agreement_input(rated)
    agree_levels = {(q, p): (levels or {}).get(q, lv) if lv in NUMERIC else lv
                    for (q, p), lv in _levels(agree).items()}
    by = dict(subsets or {})
    if rated["system"].nunique() > 1:
        by = {"system": None, **by}  # each rating's own system (an output's, or its item's)
    numeric = rated[rated["level"].isin(NUMERIC)].assign(
        value=lambda f: f["value"].astype(float), worker=lambda f: f["worker_name"])
    # Design checks and rank tests per question (a rubric's total), not per criterion: 15
    # criteria x all system pairs would mostly add multiple-comparison noise (and cost).
    design = _design_input(numeric, segments)
    warnings = comparisons.design_checks(design)
    blocked = comparisons.blocked_parts(warnings)
    ranking = scores.system_ranking(numeric, blocked=blocked)
    compared = comparisons.compare_systems(
        scores.z_scores(design), alpha=alpha, correction=correction, blocked=blocked,
        n_boot=n_boot)
    ranking["cluster"] = comparisons.significance_clusters(ranking, compared)
    return {
        "agreement": agreement.subset_agreement(agree, agree_levels, by, n_boot=n_boot),
        "system_scores": scores.system_scores(numeric, n_boot=n_boot),
        "ranking": ranking,
        "comparisons": compared,
        "rater_connectivity": connectivity.connectivity_table(design, ["question", "part"]),
        "design_warnings": pd.DataFrame([w.as_dict() for w in warnings],
                                        columns=["code", "message", "question", "part"]),
        **disagreement_tables(rated),
    }


def _changes(before: dict[str, pd.DataFrame], after: dict[str, pd.DataFrame]) -> dict:
    """What excluding flagged workers changes: alpha per part, mean z and rank per system."""
    keys = ["question", "part"]
    pooled = [table["agreement"][table["agreement"]["subset"].isna()] for table in (before, after)]
    alpha = pooled[0][[*keys, "alpha", "n_raters"]].merge(
        pooled[1][[*keys, "alpha", "n_raters"]], on=keys, how="outer",
        suffixes=("_all", "_excluded"))
    alpha["alpha_change"] = alpha["alpha_excluded"] - alpha["alpha_all"]
    rank = before["ranking"][[*keys, "system", "mean_z", "rank"]].merge(
        after["ranking"][[*keys, "system", "mean_z", "rank"]], on=[*keys, "system"], how="outer",
        suffixes=("_all", "_excluded"))
    rank["rank_change"] = rank["rank_all"] - rank["rank_excluded"]
    return {"agreement": records(alpha), "ranking": records(rank)}


def _progress(campaign: Campaign) -> list[dict]:
    from django.db.models.functions import TruncDate

    rows = (Annotation.objects.filter(campaign=campaign).exclude(worker__platform=LLM)
            .annotate(day=TruncDate("created_at")).values("day").annotate(n=Count("id"))
            .order_by("day"))
    total = 0
    out = []
    for row in rows:
        total += row["n"]
        out.append({"day": row["day"].isoformat(), "annotations": row["n"], "cumulative": total})
    return out


def campaign_statistics(
    *, campaign: Campaign, exclude_flagged: bool = False, n_boot: int = agreement.N_BOOT,
    correction: str = "holm", alpha: float = comparisons.ALPHA, pair_by: str | None = None,
    subset_by: tuple[str, ...] = (), levels: dict[str, str] | None = None,
    include_failed_judge_outputs: bool = False, ties: str | None = None, style: bool = False,
    worker_reliability: bool = True) -> dict:
    """Every analysis table of a campaign as JSON-ready data (lists of row dicts).

    With `exclude_flagged`, workers flagged by quality control leave every statistic (the
    quality table still lists them) and `changes` compares the figures with and without them.
    `correction` (holm or bh) and `alpha` govern the system comparisons; `pair_by` names the
    item field that pairs systems (default: found by `pairing_field`; "" for unpaired).
    Agreement is given pooled, per system and per value of each item field in `subset_by`;
    `levels` ({question: level}) overrides the level of a numeric question's parts. Failed
    judge outputs are listed in `judge_failed_outputs` and left out of the judge figures
    unless `include_failed_judge_outputs`. `ties` (split or davidson) overrides how each
    pairwise question's Bradley-Terry fit treats ties (its `tie_model`, split by default);
    `style` adds their style-adjusted strengths; without `worker_reliability`, no such table.
    """
    _check_options(correction, ties)
    schema, humans, llm, resamples = _read_within_budget(campaign, n_boot)
    n_boot = resamples.used
    quality_table = _quality(humans, campaign)
    flagged = _flagged_names(quality_table)
    used = humans[~humans["worker_name"].isin(flagged)] if exclude_flagged else humans
    if pair_by is None:
        pair_by = pairing_field(campaign=campaign, schema=schema)
    tests = {"correction": correction, "alpha": alpha}
    options = _table_options(campaign, pair_by, subset_by, **tests, levels=levels)
    # A judge-only campaign: the rater tables (agreement between judges, scores, rankings,
    # comparisons) from the judges, said so in `figures_from`; nothing to align them with.
    judge_only = humans.empty and not llm.empty
    tables = _human_tables(llm if judge_only else used, n_boot, **options)
    judge = _judge_tables(used, llm, n_boot=n_boot, include_failed=include_failed_judge_outputs)
    changes = None
    if exclude_flagged:
        changes = _changes(_human_tables(humans, 0, **options), _human_tables(used, 0, **options))
    out = {
        "campaign": campaign.slug,
        "exclude_flagged": exclude_flagged,
        "figures_from": "llm_judges" if judge_only else "humans",
        "options": _options_record(**tests, pair_by=pair_by, subset_by=subset_by, levels=levels,
                                   failed=include_failed_judge_outputs, ties=ties, style=style),
        "counts": _counts(humans, used, llm, flagged),
        "resamples": resamples.as_dict(),
        "levels": _level_rows(humans[humans["rated"]]),
        "progress": _progress(campaign), **_allocation_tables(allocation_counts(used)),
        **{name: records(table) for name, table in tables.items()},
        "quality": records(quality_table),
        "worker_reliability": _worker_reliability(used, n_boot) if worker_reliability else [],
        "flagged_workers": sorted(flagged),
        **_judge_records(judge, campaign),
        "part_texts": _part_text_rows(schema),
        "changes": changes,
        **_whole_answer_statistics(campaign, schema, set(used["annotation"]), n_boot=n_boot,
                                   ties=ties, system_scores=tables["system_scores"], style=style,
                                   **tests),
    }
    out["pairwise"] = out["comparisons"]  # the former name, kept as an alias for one release
    return out


def _allocation_tables(counts: dict) -> dict:
    """What the figures assume about the allocation: per strategy the annotations used were
    handed out under, its share and what it assumes (`allocation_design`), and the share of
    each run of epochs under one strategy (`allocation_periods`)."""
    return {"allocation_design": allocation_design.design_assumptions(counts),
            "allocation_periods": allocation_design.design_periods(counts)}


def _options_record(*, correction: str, alpha: float, pair_by: str | None, subset_by,
                    levels: dict | None, failed: bool, ties: str | None,
                    style: bool) -> dict:
    """The options the figures were computed with, as the result states them."""
    return {"correction": correction, "alpha": alpha, "pair_by": pair_by or None,
            "subset_by": list(subset_by), "levels": levels or {},
            "include_failed_judge_outputs": failed, "ties": ties, "style": style}


def _read_within_budget(campaign: Campaign, n_boot: int):
    """(schema, human rows, judge rows, Resamples: the `resamples` of the result, fewer than
    `n_boot` when the memory budget says so): a campaign over the memory budget raises
    budget.StatisticsTooLarge before anything is read; fewer resamples when the data read
    holds much of the budget."""
    check_memory_budget(campaign=campaign)
    schema = parse_schema(campaign.schema)
    humans, llm = split_frame(annotations_frame(campaign=campaign, schema=schema))
    return schema, humans, llm, resamples_within_budget(n_boot)


def _counts(humans: pd.DataFrame, used: pd.DataFrame, llm: pd.DataFrame, flagged: set) -> dict:
    return {
        "annotations": int(humans["annotation"].nunique()),
        "annotations_used": int(used["annotation"].nunique()),
        "workers": int(humans["worker"].nunique()),
        "flagged_workers": len(flagged),
        "judges": sorted(llm["worker_name"].unique().tolist()),
    }


def _whole_answer_statistics(campaign: Campaign, schema: TaskSchema, annotations: set, *,
                             n_boot: int, ties: str | None, system_scores,
                             correction: str = "holm", style: bool = False,
                             alpha: float = comparisons.ALPHA) -> dict:
    """The statistics read from whole stored answers (pairwise, best-worst, error spans)."""
    return {
        "pairwise_preference": preference_statistics(
            campaign=campaign, schema=schema, annotations=annotations, n_boot=n_boot, ties=ties,
            correction=correction, alpha=alpha, style=style),
        "best_worst": best_worst_statistics(
            campaign=campaign, schema=schema, annotations=annotations, n_boot=n_boot,
            correction=correction, alpha=alpha),
        "error_spans": span_statistics(
            campaign=campaign, schema=schema, annotations=annotations, n_boot=n_boot,
            system_scores=system_scores, correction=correction, alpha=alpha),
    }


def _check_options(correction: str, ties: str | None) -> None:
    if correction not in comparisons.CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}")
    if ties is not None and ties not in preference.TIE_MODELS:
        raise ValueError(f"unknown tie model {ties!r}")


def _table_options(campaign: Campaign, pair_by: str, subset_by: tuple[str, ...], *,
                   correction: str, alpha: float, levels: dict[str, str] | None) -> dict:
    """The rater tables' options: the pairing segments, the subsets and the test settings."""
    segments = (item_field_values(campaign=campaign, field=pair_by, digest=True) if pair_by
                else None)
    subsets = {field: item_field_values(campaign=campaign, field=field) for field in subset_by}
    return {"segments": segments, "correction": correction, "alpha": alpha,
            "subsets": subsets, "levels": levels}


def _judge_records(judge: dict, campaign: Campaign) -> dict:
    return {
        "judges": records(judge["judges"]),
        "human_ceiling": records(judge["human_ceiling"]),
        "human_ceiling_summary": records(judge["human_ceiling_summary"]),
        "judge_failed_outputs": judge["judge_failed_outputs"] + run_failed_outputs(
            campaign=campaign),
        "confusion": judge["confusion"],
        "judged_items": judge["judged_items"],
    }


def _level_rows(rated: pd.DataFrame) -> list[dict]:
    return [{"question": q, "part": p, "level": lv} for (q, p), lv in _levels(rated).items()]


def _part_text_rows(schema: TaskSchema) -> list[dict]:
    return [{"question": q, "part": p, "text": t} for (q, p), t in _part_texts(schema).items()]


def _worker_reliability(used: pd.DataFrame, n_boot: int) -> list[dict]:
    """Dawid-Skene and MACE per worker, with item-bootstrap intervals (at most
    worker_models.RELIABILITY_BOOT refits: each is a whole EM fit)."""
    return records(worker_models.reliability_table(
        _rated_units(used.assign(worker=used["worker_name"])),
        n_boot=min(n_boot, worker_models.RELIABILITY_BOOT)))
