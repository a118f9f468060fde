"""Whole-answer statistics: pairwise preference, best-worst scaling and error spans, read from
the stored answers of those questions."""
from __future__ import annotations

import pandas as pd

from ...analysis import (
    agreement,
    bestworst,
    preference,
    preference_position,
    preference_tests,
    spans,
)
from ...models import Annotation, Campaign, Item, Worker
from ...schema import BaseQuestion, Capability, TaskSchema
from .frames import LLM, NUMERIC, item_field_values, records


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
                          alpha: float = preference.ALPHA) -> list[dict]:
    """Per question whose answers compare systems: win/tie/loss per pair, win rates (ties as
    half), Bradley-Terry strengths with item-bootstrap intervals (ties as `ties` says, else as
    the question's `tie_model`), the position bias and corrected sign tests between systems
    over items (`comparisons`: analysis/preference_tests.py)."""
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
                    "comparisons": records(preference_tests.preference_comparisons(
                        frame, correction=correction, alpha=alpha)),
                    **_position_adjusted(frame, n_boot)})
    return out


def _position_adjusted(frame: pd.DataFrame, n_boot: int) -> dict:
    """Bradley-Terry with the position term and which strengths are the default."""
    fitted = preference_position.bradley_terry_position(frame, n_boot=n_boot)
    return {"bradley_terry_position": records(fitted["table"]),
            "position_effect": fitted["position_effect"],
            "order_unbalanced": fitted["unbalanced"], "default_strengths": fitted["default"]}


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
                          n_boot: int = agreement.N_BOOT) -> list[dict]:
    """Per question whose answers pick a best and a worst output: best-minus-worst scores
    per system with item-bootstrap intervals."""
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
        out.append({"question": q.id, "answers": answers,
                    "scores": records(bestworst.best_minus_worst(frame, n_boot=n_boot))})
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
                    system_scores: pd.DataFrame | None = None) -> list[dict]:
    """Per question whose answers mark error spans: MQM scores per system (raw, per 100
    source words, per-rater z) with item-bootstrap intervals, error counts by severity and by
    category, character-level span F1 between workers and, when the next question on the
    page is a number (ESA's 0-100 score), its per-system summary from `system_scores`."""
    out = []
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
                    "scores": records(esa) if esa is not None else []})
    return out


def _score_after(rest: list) -> BaseQuestion | None:
    """The question right after a spans question when it is one number (ESA's score)."""
    if not rest or rest[0].parts() != [""] or rest[0].part_measurement("") not in NUMERIC:
        return None
    return rest[0]
