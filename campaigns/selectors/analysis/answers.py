"""Whole-answer statistics: pairwise preference, best-worst scaling and error spans, read from
the stored answers of those questions."""
from __future__ import annotations

import pandas as pd

from ...analysis import (
    agreement,
    bestworst,
    design_tests,
    preference,
    preference_position,
    preference_tests,
    spans,
)
from ...models import Annotation, Campaign, Item, Worker
from ...schema import BaseQuestion, Capability, TaskSchema
from .frames import LLM, NUMERIC, item_field_values, records
from .style import style_statistics


def preference_frame(*, campaign: Campaign, question: BaseQuestion,
                     annotations: set | None = None) -> pd.DataFrame:
    """The question's answers by people on regular items as paired comparisons: one row per
    pair judged (item, worker, first, second, score), as the kind reads its answers."""
    out = [(item, worker, first, second, score)
           for item, worker, answer in _human_answers(campaign, question.id, annotations)
           for first, second, score in question.preferences(answer)]
    return pd.DataFrame(out, columns=preference.COLUMNS)


def preference_statistics(*, campaign: Campaign, schema: TaskSchema,
                          annotations: set | None = None, n_boot: int = agreement.N_BOOT,
                          ties: str | None = None, correction: str = "holm",
                          alpha: float = preference.ALPHA, style: bool = False) -> list[dict]:
    """Per question whose answers compare systems: win/tie/loss per pair, win rates (ties as
    half), Bradley-Terry strengths with item-bootstrap intervals (ties as `ties` says, else as
    the question's `tie_model`), the position bias and corrected sign tests between systems
    over items (`comparisons`: analysis/preference_tests.py); with `style`, the strengths
    adjusted for the outputs' length and Markdown (selectors/analysis/style.py)."""
    out = []
    for q in schema.questions:
        if not q.supports(Capability.PREFERENCES):
            continue
        frame = preference_frame(campaign=campaign, question=q, annotations=annotations)
        # A kind that compares systems may name its tie model; split ties otherwise.
        model = ties or getattr(q, "tie_model", preference.DEFAULT_TIES)
        tables = preference.preference_tables(frame, n_boot=n_boot, ties=model)
        out.append({"question": q.id, "judgments": len(frame),
                    "pairs": records(tables["pairs"]),
                    "win_rates": records(tables["win_rates"]),
                    "bradley_terry": records(tables["bradley_terry"]),
                    "ties": tables["ties"], "tie_parameter": tables["tie_parameter"],
                    "position_bias": tables["position_bias"],
                    **_preference_tests(q.id, frame, tables["bradley_terry"], n_boot,
                                        correction=correction, alpha=alpha),
                    **(style_statistics(campaign=campaign, frame=frame, n_boot=n_boot)
                       if style else {})})
    return out


def _preference_tests(question: str, frame: pd.DataFrame, plain: pd.DataFrame, n_boot: int,
                      *, correction: str, alpha: float) -> dict:
    """Bradley-Terry with the position term and which strengths are the default, corrected
    sign tests between systems, clusters over the default strengths, design warnings."""
    fitted = preference_position.bradley_terry_position(frame, n_boot=n_boot)
    compared = preference_tests.preference_comparisons(frame, correction=correction,
                                                       alpha=alpha)
    shown = fitted["table"] if fitted["default"] == "position_adjusted" else plain
    clusters = shown[["system", "rank"]].assign(cluster=design_tests.preference_clusters(
        shown[["system", "rank"]], compared, question) if len(shown) else None)
    items = int(frame["item"].nunique()) if len(frame) else 0
    return {"bradley_terry_position": records(fitted["table"]),
            "position_effect": fitted["position_effect"],
            "order_unbalanced": fitted["unbalanced"], "default_strengths": fitted["default"],
            "comparisons": records(compared), "clusters": records(clusters),
            "design_warnings": [w.as_dict() for w in design_tests.small_cluster_warning(
                question, items)] if items else []}


def _human_answers(campaign: Campaign, question_id: str, annotations: set | None):
    """(item, worker, answer) of one question by people on regular items, optionally only
    the annotations in `annotations`."""
    control = Item.objects.filter(campaign=campaign).exclude(control="").values("id")
    judges = Worker.objects.filter(campaign=campaign, platform=LLM).values("id")
    rows = (Annotation.objects.filter(campaign=campaign, answers__has_key=question_id)
            .exclude(item_id__in=control).exclude(worker_id__in=judges).order_by("id")
            .values_list("id", "item_id", "worker_id", "answers"))
    for annotation, item, worker, answers in rows.iterator():
        if annotations is None or annotation in annotations:
            yield item, worker, answers[question_id]


def best_worst_statistics(*, campaign: Campaign, schema: TaskSchema,
                          annotations: set | None = None,
                          n_boot: int = agreement.N_BOOT, correction: str = "holm",
                          alpha: float = preference.ALPHA) -> list[dict]:
    """Per question whose answers pick a best and a worst output: best-minus-worst scores
    per system with item-bootstrap intervals, design warnings, corrected paired tests over
    the items that showed both systems and significance clusters (analysis/design_tests)."""
    out = []
    for q in schema.questions:
        if not q.supports(Capability.BEST_WORST):
            continue
        rows, answers = [], 0
        for item, worker, answer in _human_answers(campaign, q.id, annotations):
            found = q.best_worst(answer)
            if found is not None:
                shown, best, worst = found
                answers += 1
                rows += [(item, worker, s, 1 if s == best else -1 if s == worst else 0)
                         for s in shown]
        frame = pd.DataFrame(rows, columns=bestworst.COLUMNS)
        tables = (design_tests.unit_tests(design_tests.best_worst_units(frame), frame,
                                          question=q.id, correction=correction, alpha=alpha)
                  if not frame.empty else {})
        out.append({"question": q.id, "answers": answers,
                    "scores": records(bestworst.best_minus_worst(frame, n_boot=n_boot)),
                    **{key: records(tables[key]) if tables else [] for key in (
                        "design_warnings", "comparisons")},
                    "clusters": records(tables["ranking"]) if tables else []})
    return out


def span_answers(*, campaign: Campaign, question: BaseQuestion,
                 annotations: set | None = None) -> pd.DataFrame:
    """The question's answers by people on regular items as an answers frame of
    campaigns/analysis/spans.py: item, system, worker, spans and the source's words."""
    source = question.source_field
    items = dict(Item.objects.filter(campaign=campaign).order_by().values_list("id", "system"))
    texts = (item_field_values(campaign=campaign, field=source).to_dict() if source else {})
    return spans.answers_frame(
        (item, items[item], worker, question.error_spans(answer), texts.get(item))
        for item, worker, answer in _human_answers(campaign, question.id, annotations))


def span_statistics(*, campaign: Campaign, schema: TaskSchema, annotations: set | None = None,
                    n_boot: int = agreement.N_BOOT,
                    system_scores: pd.DataFrame | None = None, correction: str = "holm",
                    alpha: float = preference.ALPHA) -> list[dict]:
    """Per question whose answers mark error spans: MQM scores per system (raw, per 100
    source words, per-rater z) with item-bootstrap intervals, error counts by severity and by
    category, character-level span F1 between workers and, when the next question on the
    page is a number (ESA's 0-100 score), its per-system summary from `system_scores`."""
    out, tests = [], {"correction": correction, "alpha": alpha}
    questions = list(schema.questions)
    for n, q in enumerate(questions):
        if not q.supports(Capability.ERROR_SPANS):
            continue
        frame = span_answers(campaign=campaign, question=q, annotations=annotations)
        tables = spans.span_tables(frame, q.weight, n_boot=n_boot)
        score = _score_after(questions[n + 1:])
        esa = (system_scores[system_scores["question"].eq(score.id)]
               if score is not None and system_scores is not None else None)
        out.append({"question": q.id, "answers": len(frame),
                    "source_field": q.source_field,
                    "mqm": records(tables["mqm"]),
                    "rater_connectivity": tables["connectivity"],
                    "errors_by_severity": records(tables["errors_by_severity"]),
                    "errors_by_category": records(tables["errors_by_category"]),
                    "agreement": records(tables["agreement"]),
                    "score_question": score.id if score is not None else None,
                    "scores": records(esa) if esa is not None else [],
                    **_span_tests(campaign, q, frame, **tests)})
    return out


def _span_tests(campaign: Campaign, question: BaseQuestion, frame: pd.DataFrame, *,
                correction: str, alpha: float) -> dict:
    """Design warnings, corrected tests on segment penalties (lower is better) and
    significance clusters, paired over sources when the systems translated the same ones."""
    if frame.empty:
        return {"design_warnings": [], "comparisons": [], "clusters": []}
    penalties = spans.segment_penalties(frame, question.weight)
    source = question.source_field
    segments = item_field_values(campaign=campaign, field=source) if source else None
    tables = design_tests.unit_tests(design_tests.mqm_units(penalties, segments), penalties,
                                     question=question.id, higher_is_better=False,
                                     correction=correction, alpha=alpha)
    return {"design_warnings": records(tables["design_warnings"]),
            "comparisons": records(tables["comparisons"]),
            "clusters": records(tables["ranking"])}


def _score_after(rest: list) -> BaseQuestion | None:
    """The question right after a spans question when it is one number (ESA's score)."""
    if not rest or rest[0].parts() != [""] or rest[0].part_measurement("") not in NUMERIC:
        return None
    return rest[0]
