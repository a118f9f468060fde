"""One question's ratings and agreement: the human ratings of regular items, their value counts
(from the item tallies where a fixed scale allows), and the agreement table's row."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
from django.db import connection
from django.db.models import FloatField
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from ...analysis import agreement
from ...models import Annotation, Campaign, Item, ItemTally, Worker
from ...schema import Capability, TaskSchema, parse_schema
from .flags import _flagged_names, _quality
from .frames import (
    BINARY_PAIR,
    LLM,
    NUMERIC,
    _agreement_input,
    _copy_binary,
    _level,
    _numeric_ratings_binary,
    _path_fields,
    _quoted,
    _typed,
    annotations_frame,
    fetch_frame,
    records,
    split_frame,
)


def _human_regular(campaign: Campaign, path: str):
    """Annotations of human workers on regular items, with the part's JSON lookup as `value`."""
    control = Item.objects.filter(campaign=campaign).exclude(control="").values("id")
    judges = Worker.objects.filter(campaign=campaign, platform=LLM).values("id")
    return (Annotation.objects.filter(campaign=campaign).order_by()
            .exclude(item_id__in=control).exclude(worker_id__in=judges)
            .annotate(value=KT(path)))


def question_ratings(
    *, campaign: Campaign, question: str, part: str = "", schema: TaskSchema | None = None
) -> pd.DataFrame:
    """The human ratings of one question part on regular items: columns item, worker, value.

    A lean read for one agreement figure on a big campaign: three columns straight from the
    database (control items and LLM judges filtered out by id), no item or worker facts.
    """
    schema = schema or parse_schema(campaign.schema)
    q = schema.question(question)
    paths = {p: path for qq, p, path in _path_fields(schema) if qq.id == question}
    if part not in paths:  # lines, flags: through the kind's atoms in the full frame
        frame = annotations_frame(campaign=campaign, schema=schema)
        frame = frame[frame["question"].eq(question) & frame["part"].eq(part)
                      & frame["control"].eq("") & frame["platform"].ne(LLM)]
        return frame[["item", "worker", "value"]].reset_index(drop=True)
    queryset = _human_regular(campaign, paths[part]).filter(value__isnull=False)
    level = _level(q, part)
    if level in NUMERIC:
        return _numeric_ratings_binary(queryset.annotate(
            number=Cast("value", FloatField())).values_list("item_id", "worker_id", "number"))
    queryset = queryset.values_list("item_id", "worker_id", "value")
    frame = fetch_frame(queryset, ["item", "worker", "value"],
                        text=() if level in NUMERIC else ("value",))
    frame["value"] = _typed(frame["value"], level)
    return frame


def question_value_counts(
    *, campaign: Campaign, question: str, part: str = "", schema: TaskSchema | None = None
) -> tuple[np.ndarray, np.ndarray, str | None]:
    """Per-item counts of each value of one question part: (counts, domain, level).

    What `agreement.alpha_from_counts` takes: the same counts as `agreement.value_counts` over
    `question_ratings` (every human rating of a regular item; items with fewer than two ratings
    dropped), so alpha is the same figure. A lines question's part `label` has one unit per
    line, as in the agreement table. A numeric part of a fixed scale (a tallied kind: likert,
    rubric) reads the per-item tallies, another numeric part only (item, value) pairs;
    everything else takes the question_ratings / frame path.
    """
    schema = schema or parse_schema(campaign.schema)
    q = schema.question(question)
    paths = {p: path for qq, p, path in _path_fields(schema) if qq.id == question}
    if part not in paths:
        return _frame_value_counts(campaign, schema, question, part)
    level = _level(q, part)
    if level in NUMERIC and q.supports(Capability.TALLIED):
        counts, domain = _tallied_value_counts(campaign, f"{q.id}/{part}" if part else q.id)
        return counts, domain, level
    if level in NUMERIC:
        rows = _numeric_pairs_binary(_human_regular(campaign, paths[part]))
        counts, domain = agreement.value_counts(
            rows["item"].astype(np.int64), rows["value"].astype(float), numeric=True)
        return counts, domain, level
    ratings = question_ratings(campaign=campaign, question=question, part=part, schema=schema)
    counts, domain = agreement.rating_counts(ratings["item"].to_numpy(),
                                             ratings["value"].to_numpy(), level=level)
    return counts, domain, level


def question_agreement(
    *, campaign: Campaign, question: str, part: str = "", exclude_flagged: bool = False,
    n_boot: int = agreement.N_BOOT,
) -> dict:
    """One row of the agreement table (alpha, 95% CI, items, raters, ratings) for one part.

    The same figures as campaign_statistics' agreement row for (question, part). A numeric
    part of a tallied kind (likert, rubric criterion) is computed from the per-item tallies, so
    a million ratings take a fraction of a second; with `exclude_flagged`, or for other
    kinds, the row comes from the annotations frame. KeyError for an unknown question or
    part, ValueError for a free-text part (nothing to agree on).
    """
    schema = parse_schema(campaign.schema)
    q = schema.question(question)
    if q.supports(Capability.TALLIED) and part not in q.parts():
        raise KeyError(part)
    level = _level(q, part)
    if level is None:
        raise ValueError(f"{question}{'.' + part if part else ''} is free text")
    if level in NUMERIC and q.supports(Capability.TALLIED) and not exclude_flagged:
        key = f"{q.id}/{part}" if part else q.id
        counts, domain = _tallied_value_counts(campaign, key)
        result = agreement.alpha_result(counts, domain, level, n_boot=n_boot,
                                        n_raters=_tallied_raters(campaign, q.id, part, key))
        return {"question": q.id, "part": part, "level": level, **result.as_dict(),
                "subset": None}
    frame = annotations_frame(campaign=campaign, schema=schema)
    humans, _ = split_frame(frame)
    if exclude_flagged:
        humans = humans[~humans["worker_name"].isin(_flagged_names(_quality(humans, campaign)))]
    rated = humans[humans["rated"] & humans["control"].eq("") & humans["question"].eq(q.id)]
    agree = _agreement_input(rated)
    agree = agree[agree["part"].eq(part)]
    table = agreement.agreement_table(agree, {(q.id, part): level}, n_boot=n_boot)
    if table.empty:
        empty = agreement.alpha_result(np.zeros((0, 0), dtype=np.int64), np.array([]), level,
                                       n_raters=0, n_boot=0)
        return {"question": q.id, "part": part, "level": level, **empty.as_dict(),
                "subset": None}
    return {**records(table)[0], "subset": None}


def _tallied_raters(campaign: Campaign, question: str, part: str, key: str) -> int:
    """Human raters with a rating of this part on an item that has at least two of them.

    Per worker, an EXISTS that stops at the first such rating (one or two index probes for
    almost every worker), instead of scanning every annotation.
    """
    path = [question, part] if part else [question]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM {Worker._meta.db_table} w "  # noqa: S608 (table names only)
            "WHERE w.campaign_id = %s AND w.platform <> %s AND EXISTS ("
            f"SELECT 1 FROM {Annotation._meta.db_table} a "
            f"JOIN {ItemTally._meta.db_table} t ON t.item_id = a.item_id "
            "WHERE a.worker_id = w.id AND jsonb_typeof(a.answers #> %s) = 'number' "
            "AND (SELECT sum(n::bigint) FROM jsonb_each_text(t.counts -> %s) AS c(v, n)) >= 2)",
            [campaign.pk, LLM, path, key])
        return int(cursor.fetchone()[0])


def _tallied_value_counts(campaign: Campaign, key: str) -> tuple[np.ndarray, np.ndarray]:
    """question_value_counts from the per-item tallies (models.ItemTally) of a fixed scale.

    PostgreSQL groups the items by their tally of this part (a 1-5 scale rated 5 times has a
    few hundred distinct tallies, however many items), so a million ratings arrive as a few
    hundred (tally, number of items) rows. The counts come back one row per item with at
    least two ratings, as value_counts gives them, in tally order instead of item order
    (alpha does not depend on the order of units).
    """
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (counts -> %s)::text, count(*) FROM {ItemTally._meta.db_table} "  # noqa: S608 (table name only)
            "WHERE campaign_id = %s AND counts ? %s GROUP BY 1", [key, campaign.pk, key])
        groups = [(json.loads(tally), n) for tally, n in cursor.fetchall()]
    groups = [(tally, n) for tally, n in groups if sum(tally.values()) >= 2]
    domain = np.unique(np.array([float(v) for tally, _ in groups for v in tally], dtype=float))
    patterns = np.zeros((len(groups), len(domain)), dtype=np.int64)
    for row, (tally, _) in enumerate(groups):
        for value, count in tally.items():
            patterns[row, np.searchsorted(domain, float(value))] += count
    items_per_pattern = np.array([n for _, n in groups], dtype=np.int64)
    return np.repeat(patterns, items_per_pattern, axis=0), domain


def _numeric_pairs_binary(queryset) -> np.ndarray:
    """(item, value) pairs of the non-null numeric values, through COPY BINARY.

    The OFFSET 0 fence keeps the JSON lookup to one evaluation per row (a WHERE on the cast
    value would run it again). Aggregating (item, value, count) in SQL instead is slower on
    large campaigns: a hash aggregate over hundreds of thousands of groups costs more than
    sending the pairs.
    """
    inner = _quoted(queryset.annotate(number=Cast("value", FloatField()))
                    .values_list("item_id", "number"))  # parameters quoted by the driver
    fenced = f'SELECT * FROM ({inner} OFFSET 0) AS r WHERE r."number" IS NOT NULL'  # noqa: S608
    return _copy_binary(fenced, BINARY_PAIR)


def _frame_value_counts(campaign, schema, question: str, part: str):
    """Lines and flags parts: the full frame, units as the agreement table defines them."""
    frame = annotations_frame(campaign=campaign, schema=schema)
    rated = frame[frame["question"].eq(question) & frame["rated"] & frame["control"].eq("")
                  & frame["platform"].ne(LLM)]
    rated = _agreement_input(rated)
    rated = rated[rated["part"].eq(part)]
    level = rated["level"].iloc[0] if len(rated) else None
    counts, domain = agreement.rating_counts(rated["unit"].to_numpy(), rated["value"].to_numpy(),
                                             level=level or "nominal")
    return counts, domain, level
