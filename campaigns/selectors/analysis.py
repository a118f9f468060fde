"""The analysis selector: the ORM as one tidy long frame, and every statistics table from it.

`annotations_frame` is the only place that reads annotations for analysis; the statistics
themselves are pure functions in campaigns/analysis/.
"""
from __future__ import annotations

import io
import json
import math
import re

import numpy as np
import pandas as pd
from django.db import connection
from django.db.models import Count, Exists, FloatField, OuterRef
from django.db.models.fields.json import KT
from django.db.models.functions import MD5, Cast

from ..analysis import (
    agreement,
    alignment,
    bestworst,
    comparisons,
    judges,
    planning,
    preference,
    quality,
    reliability,
    report,
    scores,
    spans,
)
from ..exporting.pseudonyms import worker_pseudonym
from ..models import Annotation, Campaign, Item, ItemTally, JudgeOutput, Worker
from ..schema import (
    AnswerInvalid,
    BaseQuestion,
    Capability,
    TaskSchema,
    parse_schema,
    validate_answers,
)

FRAME_COLUMNS = [
    "annotation", "item", "external_id", "system", "worker", "worker_name", "platform",
    "question", "part", "value", "seconds", "control", "control_passed", "gold",
    "gold_tolerance", "bad_reference", "rated", "level",
]
LLM = Worker.Platform.LLM
BASE_COLUMNS = ["annotation", "item", "worker", "seconds", "control_passed"]
NULL = "\\N"  # COPY's marker for NULL (a quoted "\\N" in the data would read as None too)
NUMERIC = ("ordinal", "interval", "ratio")


def _level(question, part: str) -> str | None:
    return None if question.is_free_text(part) else question.part_measurement(part)


def _path_fields(schema: TaskSchema) -> list[tuple[object, str, str]]:
    """Parts the database extracts as plain JSON lookups (the kind's path_parts()), which
    keeps a million-row frame fast; other questions go through the kind's atoms()."""
    fields = []
    for q in schema.questions:
        parts = q.path_parts()
        if parts is None or any("__" in key for key in [q.id, *parts]):
            continue  # "__" would split the lookup path: use atoms()
        fields += [(q, part, f"answers__{q.id}__{part}" if part else f"answers__{q.id}")
                   for part in parts]
    return fields


def _typed(values: pd.Series, level: str | None) -> pd.Series:
    if level in ("ordinal", "interval", "ratio"):
        return pd.to_numeric(values, errors="coerce").astype(float)
    return values


def fetch_frame(queryset, columns: list[str], *, text: tuple[str, ...] = ()) -> pd.DataFrame:
    """A values_list queryset as a DataFrame with the given column names.

    The rows come through COPY ... TO STDOUT and pandas' C parser: a million rows take a
    fraction of the time of building Python tuples. Columns named in `text` stay strings
    (nominal answers such as "01" must not become numbers); None stays None.
    """
    buffer = io.BytesIO()
    with connection.cursor() as cursor:
        cursor.cursor.copy_expert(
            f"COPY ({_quoted(queryset)}) TO STDOUT WITH (FORMAT csv, NULL '{NULL}')", buffer)
    buffer.seek(0)
    if not buffer.getbuffer().nbytes:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    frame = pd.read_csv(buffer, names=columns, header=None, na_values=[NULL],
                        keep_default_na=False, dtype={c: str for c in text},
                        true_values=["t"], false_values=["f"], low_memory=False)
    for column in text:
        frame[column] = frame[column].astype(object).where(frame[column].notna(), None)
    return frame


# COPY BINARY rows of int8/float8 fields, none NULL: field count, then (length, value) each.
BINARY_ROW = np.dtype([("n", ">i2"), ("l1", ">i4"), ("item", ">i8"), ("l2", ">i4"),
                       ("worker", ">i8"), ("l3", ">i4"), ("value", ">f8")])
BINARY_PAIR = np.dtype([("n", ">i2"), ("l1", ">i4"), ("item", ">i8"), ("l2", ">i4"),
                        ("value", ">f8")])
BINARY_HEADER = 19  # signature (11), flags (4), header extension length (4, zero)


def _copy_binary(query: str, row: np.dtype) -> np.ndarray:
    """The rows of a quoted SQL query through COPY BINARY, parsed by numpy at memory speed."""
    buffer = io.BytesIO()
    with connection.cursor() as cursor:
        cursor.cursor.copy_expert(f"COPY ({query}) TO STDOUT WITH (FORMAT binary)", buffer)
    data = buffer.getbuffer()
    count, rest = divmod(len(data) - BINARY_HEADER - 2, row.itemsize)  # 2: the trailer
    if rest or bytes(data[:11]) != b"PGCOPY\n\xff\r\n\x00" or bytes(data[15:19]) != b"\0" * 4:
        raise ValueError("unexpected COPY BINARY layout")  # a server change: fail loudly
    rows = np.frombuffer(data, dtype=row, count=count, offset=BINARY_HEADER)
    fields = (len(row.names) - 1) // 2
    if count and not ((rows["n"] == fields).all() and (rows[f"l{fields}"] == 8).all()):
        raise ValueError("unexpected COPY BINARY row layout")
    return rows


def _quoted(queryset) -> str:
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:  # psycopg2: mogrify quotes as execute() would
        return cursor.cursor.mogrify(sql, params).decode()


def _numeric_ratings_binary(queryset) -> pd.DataFrame:
    """(item, worker, value) rows through COPY BINARY."""
    rows = _copy_binary(_quoted(queryset), BINARY_ROW)
    return pd.DataFrame({"item": rows["item"].astype(np.int64),
                         "worker": rows["worker"].astype(np.int64),
                         "value": rows["value"].astype(float)})


def _long_rows(base: pd.DataFrame, fields, slow) -> pd.DataFrame:
    parts = []
    for n, (q, part, _) in enumerate(fields):
        level = _level(q, part)
        column = base[f"v{n}"]
        keep = column.notna().to_numpy()
        parts.append(base.loc[keep, BASE_COLUMNS].assign(
            question=q.id, part=part, value=_typed(column[keep], level).to_numpy(),
            rated=level is not None, level=level))
    if slow:
        records = []
        for index, answers in enumerate(base["answers"]):
            answers = json.loads(answers) if isinstance(answers, str) else (answers or {})
            for q in slow:
                if answers.get(q.id) is None:
                    continue
                for part, value in q.atoms(answers[q.id]):
                    level = _level(q, part)
                    if level in NUMERIC and value is not None:
                        value = float(value)  # as the path columns: numbers are floats
                    records.append((index, q.id, part, value, level is not None, level))
        if records:
            idx, qid, part, value, rated, level = zip(*records, strict=True)
            parts.append(base.iloc[list(idx)][BASE_COLUMNS].assign(
                question=qid, part=part, value=pd.Series(value, dtype=object).to_numpy(),
                rated=rated, level=level))
    if not parts:
        return base[BASE_COLUMNS].assign(question=None, part=None, value=None, rated=False,
                                         level=None)[:0]
    return pd.concat(parts, ignore_index=True)


def annotations_frame(*, campaign: Campaign, schema: TaskSchema | None = None) -> pd.DataFrame:
    """One row per atomic judgment (annotation x question part) with item and worker facts.

    Columns: FRAME_COLUMNS. `value` is a float for ordinal/interval parts and the stored value
    otherwise; `level` is the part's level of measurement (None for free text, rated=False);
    `gold` is the item's expected atom (control items), `bad_reference` marks slider atoms of
    gold items whose expected score lies in the bottom quarter of the scale (WMT's degraded
    references).
    """
    schema = schema or parse_schema(campaign.schema)
    fields = _path_fields(schema)
    by_path = {q.id for q, _, _ in fields}
    slow = [q for q in schema.questions if q.id not in by_path]
    names = {f"v{n}": KT(path) for n, (_, _, path) in enumerate(fields)}
    columns = ["id", "item_id", "worker_id", "seconds_spent", "control_passed", *names]
    columns += ["answers"] if slow else []
    queryset = (Annotation.objects.filter(campaign=campaign).order_by().annotate(**names)
                .values_list(*columns))
    text = tuple(f"v{n}" for n, (q, part, _) in enumerate(fields)
                 if _level(q, part) not in NUMERIC)
    base = fetch_frame(queryset, ["annotation", "item", "worker", "seconds", "control_passed",
                                  *names, *(["answers"] if slow else [])], text=text)
    base["control_passed"] = base["control_passed"].astype(object).where(
        base["control_passed"].notna(), None)
    base["seconds"] = base["seconds"].astype(float)
    frame = _long_rows(base, fields, slow)
    return _with_facts(frame, campaign, schema)


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


def _with_facts(frame: pd.DataFrame, campaign: Campaign, schema: TaskSchema) -> pd.DataFrame:
    items = fetch_frame(
        Item.objects.filter(campaign=campaign).order_by().values_list(
            "id", "external_id", "system", "control", "gold_tolerance"),
        ["id", "external_id", "system", "control", "gold_tolerance"],
        text=("external_id", "system", "control")).set_index("id")
    items["system"] = items["system"].fillna("")
    items["control"] = items["control"].fillna("")
    workers = pd.DataFrame.from_records(
        Worker.objects.filter(campaign=campaign).order_by().values_list(
            "id", "platform", "platform_id"),
        columns=["id", "platform", "platform_id"]).set_index("id")
    workers["worker_name"] = [
        pid if platform == LLM else
        worker_pseudonym(campaign_id=campaign.pk, platform=platform, platform_id=pid)
        for platform, pid in zip(workers["platform"], workers["platform_id"], strict=True)]
    at_item = items.index.get_indexer(frame["item"])
    at_worker = workers.index.get_indexer(frame["worker"])
    frame = frame.assign(
        external_id=items["external_id"].to_numpy()[at_item] if len(items) else None,
        system=items["system"].to_numpy()[at_item] if len(items) else None,
        control=items["control"].to_numpy()[at_item] if len(items) else None,
        gold_tolerance=items["gold_tolerance"].to_numpy()[at_item] if len(items) else None,
        platform=workers["platform"].to_numpy()[at_worker] if len(workers) else None,
        worker_name=workers["worker_name"].to_numpy()[at_worker] if len(workers) else None,
    )
    gold, bad = _gold_atoms(campaign, schema)
    frame["gold"] = None
    frame["bad_reference"] = False
    controlled = frame["control"].ne("").to_numpy()
    if gold and controlled.any():
        keys = list(zip(frame.loc[controlled, "item"], frame.loc[controlled, "question"],
                        frame.loc[controlled, "part"], strict=True))
        frame.loc[controlled, "gold"] = pd.Series([gold.get(k) for k in keys], dtype=object,
                                                  index=frame.index[controlled])
        frame.loc[controlled, "bad_reference"] = [k in bad for k in keys]
    frame["level"] = frame["level"].astype(object).where(frame["level"].notna(), None)
    return frame[FRAME_COLUMNS]


def _gold_atoms(campaign: Campaign, schema: TaskSchema) -> tuple[dict, set]:
    """Expected atoms {(item, question, part): value} and the bad-reference slider atoms."""
    control_items = Item.objects.filter(campaign=campaign).exclude(control="").exclude(
        gold=None).values_list("id", "gold", "data")
    expected: dict = {}
    bad: set = set()
    for item_id, gold, data in control_items:
        if not isinstance(gold, dict):
            continue
        try:
            cleaned = validate_answers(schema, gold, data, partial=True)
        except AnswerInvalid:
            continue
        for q in schema.questions:
            if q.id not in cleaned:
                continue
            for part, value in q.atoms(cleaned[q.id]):
                if value is None:
                    continue
                expected[(item_id, q.id, part)] = value
                if q.is_low_reference(part, value):
                    bad.add((item_id, q.id, part))
    return expected, bad


# ---------------------------------------------------------------- statistics from the frame

QUESTION_PARTS = ("", "total")


def records(table: pd.DataFrame) -> list[dict]:
    """A table as JSON-ready rows: numpy scalars as Python numbers, NaN as None."""
    out = []
    for row in table.to_dict(orient="records"):
        out.append({k: _plain(v) for k, v in row.items()})
    return out


def _plain(value):
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if value is pd.NA or value is pd.NaT:
        return None
    return value


def _agreement_input(rated: pd.DataFrame) -> pd.DataFrame:
    """Units are items; a per-line label is its own unit ("<item>.<line>", part "label")."""
    line_parts = [p for p in pd.unique(rated["part"]) if re.fullmatch(r"\d+\.label", str(p))]
    if not line_parts:
        return rated.assign(unit=rated["item"].to_numpy())
    per_line = rated["part"].isin(line_parts)
    unit = rated["item"].astype(object).copy()
    unit[per_line] = (rated.loc[per_line, "item"].astype(str) + "."
                      + rated.loc[per_line, "part"].str.split(".").str[0])
    return rated.assign(unit=unit.to_numpy(),
                        part=rated["part"].where(~per_line, "label").to_numpy())


def _levels(frame: pd.DataFrame) -> dict:
    pairs = frame[["question", "part", "level"]].drop_duplicates(["question", "part"])
    return {(q, p): lv for q, p, lv in pairs.itertuples(index=False)}


def _part_texts(schema: TaskSchema) -> dict:
    texts = {}
    for q in schema.questions:
        texts.update({(q.id, part): text for part, text in q.part_texts().items()})
    return texts


def split_frame(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(human judgments, LLM-judge judgments)."""
    is_llm = frame["platform"].eq(LLM)
    return frame[~is_llm], frame[is_llm]


def item_field_values(*, campaign: Campaign, field: str, digest: bool = False) -> pd.Series:
    """item id -> the item's data field as text (None when absent), for subsets and pairing;
    with `digest`, its MD5 instead (pairing needs equality only, not long source texts; built into
    PostgreSQL, unlike SHA-256, and nothing secret is hashed)."""
    value = KT(f"data__{field}")
    rows = Item.objects.filter(campaign=campaign).order_by().annotate(
        v=MD5(value) if digest else value).values_list("id", "v")
    frame = fetch_frame(rows, ["item", "value"], text=("value",))
    return frame.set_index("item")["value"]


def pairing_field(*, campaign: Campaign, schema: TaskSchema) -> str | None:
    """The first displayed item field that pairs the systems: every system's regular items
    have it, one item per value and system, and all systems cover the same values (every
    system answered the same inputs). None when no field does (unpaired comparisons)."""
    items = fetch_frame(Item.objects.filter(campaign=campaign, control="").order_by()
                        .values_list("id", "system"), ["item", "system"], text=("system",))
    if items.empty or items["system"].nunique() < 2:
        return None
    for field in schema.item_fields:
        values = item_field_values(campaign=campaign, field=field, digest=True)
        segment = values.reindex(items["item"]).to_numpy()
        probe = items.assign(segment=segment)
        if comparisons.shares_segments(probe):
            return field
    return None


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
        by = {"system": rated.drop_duplicates("item").set_index("item")["system"], **by}
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
        "design_warnings": pd.DataFrame([w.as_dict() for w in warnings],
                                        columns=["code", "message", "question", "part"]),
    }


def _judge_tables(humans: pd.DataFrame, llm: pd.DataFrame, *, n_boot: int = agreement.N_BOOT,
                  include_failed: bool = False) -> dict:
    """Judge alignment against the human consensus, the human ceiling, failed judge outputs
    (listed always, left out of the figures unless `include_failed`) and confusion matrices."""
    rated_humans = humans[humans["rated"] & humans["control"].eq("")].assign(
        worker=lambda f: f["worker_name"])
    judged = llm[llm["rated"] & llm["control"].eq("")].assign(worker=lambda f: f["worker_name"])
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
    ceiling = alignment.human_ceiling(rated_humans, _levels(rated_humans), n_boot=n_boot,
                                      per_worker=few)
    if judged.empty:
        return {"judges": pd.DataFrame(columns=JUDGE_COLUMNS), "confusion": [],
                "judged_items": [], "human_ceiling": ceiling, "judge_failed_outputs": failed_list}
    rated = rated_humans[rated_humans["item"].isin(judged["item"])]
    table = alignment.judge_alignment(rated, judged, levels, n_boot=n_boot)
    # The names this table had before the alignment report, kept beside the new ones.
    table = table.assign(n_items=table["n"], exact_agreement=table["exact"])
    consensus = judges.human_consensus(rated, levels)
    return {
        "judges": table[JUDGE_COLUMNS],
        "confusion": judges.confusion_matrices(consensus, judged),
        "judged_items": sorted(set(judged["external_id"]) & set(rated["external_id"])),
        "human_ceiling": ceiling,
        "judge_failed_outputs": failed_list,
    }


JUDGE_COLUMNS = [*alignment.COLUMNS, "n_items", "exact_agreement"]
CEILING_PER_WORKER = 30


def _quality(humans: pd.DataFrame, campaign: Campaign | None = None) -> pd.DataFrame:
    """Quality checks per worker (with the campaign's speed floors), and the leave-one-out
    correlation (which flags)."""
    rules, humans = _speed_rules(humans, campaign)
    named = humans.assign(worker=humans["worker_name"])
    table = quality.worker_quality(named, rules)
    return reliability.with_loo_flags(table, reliability.loo_correlations(_rated_units(named)))


def _rated_units(named: pd.DataFrame) -> pd.DataFrame:
    """Rated regular-item judgments with `item` set to the unit of agreement (a summary line
    is its own unit) and `worker` to the pseudonym."""
    rated = named[named["rated"] & named["control"].eq("")]
    return _agreement_input(rated).assign(item=lambda f: f["unit"])


def _speed_rules(humans: pd.DataFrame, campaign: Campaign | None
                 ) -> tuple[quality.QualityRules, pd.DataFrame]:
    """The campaign's own speed floors, and each row's item word count when one is per word."""
    if campaign is None:
        return quality.QualityRules(), humans
    rules = quality.QualityRules(min_seconds_per_item=campaign.min_seconds_per_item,
                                 min_seconds_per_word=campaign.min_seconds_per_word)
    if campaign.min_seconds_per_word is not None and not humans.empty:
        fields = [d.field for d in parse_schema(campaign.schema).display]
        words = {pk: sum(len(str(data.get(f) or "").split()) for f in fields)
                 for pk, data in Item.objects.filter(campaign=campaign).values_list("pk", "data")}
        humans = humans.assign(words=humans["item"].map(words))
    return rules, humans


def _flagged_names(quality_table: pd.DataFrame) -> set[str]:
    """The pseudonyms (worker_name) of the workers quality control flags."""
    return set(quality_table[quality_table["flagged"].astype(bool)]["worker"])


def flagged_worker_ids(*, campaign: Campaign) -> set[int]:
    """Database ids of the human workers that quality control flags in this campaign."""
    frame = annotations_frame(campaign=campaign)
    humans, _ = split_frame(frame)
    if humans.empty:
        return set()
    flagged_names = _flagged_names(_quality(humans, campaign))
    names = humans.drop_duplicates("worker")
    return {int(w) for w, n in zip(names["worker"], names["worker_name"], strict=True)
            if n in flagged_names}


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
    from django.db.models import Count
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
    include_failed_judge_outputs: bool = False, ties: str | None = None,
) -> dict:
    """Every analysis table of a campaign as JSON-ready data (lists of row dicts).

    With `exclude_flagged`, workers flagged by quality control leave every statistic (the
    quality table still lists them) and `changes` compares the figures with and without them.
    `correction` (holm or bh) and `alpha` govern the system comparisons; `pair_by` names the
    item field that pairs systems (default: found by `pairing_field`; "" for unpaired).
    Agreement is given pooled, per system and per value of each item field in `subset_by`;
    `levels` ({question: level}) overrides the level of a numeric question's parts. Failed
    judge outputs are listed in `judge_failed_outputs` and left out of the judge figures
    unless `include_failed_judge_outputs`. `ties` (split or davidson) overrides how each
    pairwise question's Bradley-Terry fit treats ties (its `tie_model`, split by default).
    """
    if correction not in comparisons.CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}")
    if ties is not None and ties not in preference.TIE_MODELS:
        raise ValueError(f"unknown tie model {ties!r}")
    schema = parse_schema(campaign.schema)
    frame = annotations_frame(campaign=campaign, schema=schema)
    humans, llm = split_frame(frame)
    quality_table = _quality(humans, campaign)
    flagged = _flagged_names(quality_table)
    used = humans[~humans["worker_name"].isin(flagged)] if exclude_flagged else humans
    if pair_by is None:
        pair_by = pairing_field(campaign=campaign, schema=schema)
    segments = (item_field_values(campaign=campaign, field=pair_by, digest=True) if pair_by
                else None)
    subsets = {field: item_field_values(campaign=campaign, field=field) for field in subset_by}
    options = {"segments": segments, "correction": correction, "alpha": alpha,
               "subsets": subsets, "levels": levels}
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
        "options": {"correction": correction, "alpha": alpha, "pair_by": pair_by or None,
                    "subset_by": list(subset_by), "levels": levels or {},
                    "include_failed_judge_outputs": include_failed_judge_outputs,
                    "ties": ties},
        "counts": {
            "annotations": int(humans["annotation"].nunique()),
            "annotations_used": int(used["annotation"].nunique()),
            "workers": int(humans["worker"].nunique()),
            "flagged_workers": len(flagged),
            "judges": sorted(llm["worker_name"].unique().tolist()),
        },
        "levels": [{"question": q, "part": p, "level": lv}
                   for (q, p), lv in _levels(humans[humans["rated"]]).items()],
        "progress": _progress(campaign),
        **{name: records(table) for name, table in tables.items()},
        "quality": records(quality_table),
        "worker_reliability": records(reliability.worker_reliability(
            _rated_units(used.assign(worker=used["worker_name"])))),
        "flagged_workers": sorted(flagged),
        "judges": records(judge["judges"]),
        "human_ceiling": records(judge["human_ceiling"]),
        "judge_failed_outputs": judge["judge_failed_outputs"] + run_failed_outputs(
            campaign=campaign),
        "confusion": judge["confusion"],
        "judged_items": judge["judged_items"],
        "part_texts": [{"question": q, "part": p, "text": t}
                       for (q, p), t in _part_texts(schema).items()],
        "changes": changes,
        "pairwise_preference": preference_statistics(
            campaign=campaign, schema=schema, annotations=set(used["annotation"]),
            n_boot=n_boot, ties=ties),
        "best_worst": best_worst_statistics(
            campaign=campaign, schema=schema, annotations=set(used["annotation"]),
            n_boot=n_boot),
        "error_spans": span_statistics(
            campaign=campaign, schema=schema, annotations=set(used["annotation"]),
            n_boot=n_boot, system_scores=tables["system_scores"]),
    }
    out["pairwise"] = out["comparisons"]  # the former name, kept as an alias for one release
    return out


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


SMALL_EFFECT = 0.2  # Cohen's "small" standardised difference: the planning default


def study_plan(*, campaign: Campaign, effect: float | None = None, power: float = 0.8,
               alpha: float = comparisons.ALPHA, frame: pd.DataFrame | None = None) -> list[dict]:
    """Per numeric question (a rubric's total): the variance components of the human ratings
    and how many items per system, or ratings per item, would tell two systems `effect` apart
    (in the scale's units; default 0.2 sd of the ratings) with `power` at level `alpha`."""
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
        out.append({"question": question, "part": part, **planning.plan(
            components, effect=size, items_per_system=per_system, power=power, alpha=alpha)})
    return out


def _design_facts(campaign: Campaign, frame: pd.DataFrame) -> dict:
    humans, llm = split_frame(frame)
    regular = Item.objects.filter(campaign=campaign, control="")
    per_system = list(regular.values("system").annotate(n=Count("id")).values_list("n",
                                                                                    flat=True))
    done = np.array(list(regular.values_list("annotations_done", flat=True)), dtype=float)
    raters = humans.drop_duplicates("worker")["platform"].value_counts().sort_index()
    return {
        "items": int(regular.count()), "systems": len(per_system),
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
    }


def evaluation_report(*, campaign: Campaign, effect: float | None = None, power: float = 0.8,
                      statistics: dict | None = None, **options) -> dict:
    """The evaluation report (campaigns/analysis/report.py) with the statistics' options (or
    from `statistics` already computed), plus `markdown`, the same report as Markdown."""
    statistics = statistics or campaign_statistics(campaign=campaign, **options)
    frame = annotations_frame(campaign=campaign)
    plan = study_plan(campaign=campaign, effect=effect, power=power,
                      alpha=statistics["options"]["alpha"], frame=frame)
    built = report.build_report(statistics, _design_facts(campaign, frame), plan)
    return {**built, "markdown": report.report_markdown(built)}


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
                          ties: str | None = None) -> list[dict]:
    """Per question whose answers compare systems: win/tie/loss per pair, win rates (ties as
    half), Bradley-Terry strengths with item-bootstrap intervals (ties as `ties` says, else as
    the question's `tie_model`), and the position bias."""
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
                    "position_bias": tables["position_bias"]})
    return out


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
