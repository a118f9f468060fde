"""The analysis frame: annotations read from PostgreSQL (COPY, binary where numeric) as one
tidy long frame with item and worker facts, and the frame helpers the other readers share."""
from __future__ import annotations

import io
import json
import math
import re

import numpy as np
import pandas as pd
from django.db import connection
from django.db.models.fields.json import KT
from django.db.models.functions import MD5

from ...analysis import comparisons
from ...exporting.pseudonyms import worker_pseudonym
from ...models import Annotation, Campaign, Item, Worker
from ...schema import AnswerInvalid, TaskSchema, parse_schema, validate_answers

FRAME_COLUMNS = [
    "annotation", "item", "external_id", "system", "worker", "worker_name", "platform",
    "question", "part", "value", "seconds", "control", "control_passed", "gold",
    "gold_tolerance", "bad_reference", "rated", "level", "of_output", "turn",
    "allocation", "allocation_epoch",
]
LLM = Worker.Platform.LLM
BASE_COLUMNS = ["annotation", "item", "worker", "seconds", "control_passed", "allocation",
                "allocation_epoch"]
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
            rated=level is not None, level=level, of_output=None, turn=None))
    if slow:
        records = []
        for index, answers in enumerate(base["answers"]):
            answers = json.loads(answers) if isinstance(answers, str) else (answers or {})
            for q in slow:
                if answers.get(q.id) is not None:
                    records += _answer_records(index, q, answers[q.id])
        if records:
            idx, qid, part, value, rated, level, system, turn = zip(*records, strict=True)
            parts.append(base.iloc[list(idx)][BASE_COLUMNS].assign(
                question=qid, part=part, value=pd.Series(value, dtype=object).to_numpy(),
                rated=rated, level=level, of_output=system, turn=turn))
    if not parts:
        return base[BASE_COLUMNS].assign(question=None, part=None, value=None, rated=False,
                                         level=None, of_output=None, turn=None)[:0]
    return pd.concat(parts, ignore_index=True)


def _answer_records(index: int, q, answer) -> list[tuple]:
    """One answer's atoms as frame records; a question asked per output gives each output's
    atoms with its system (that system's rating), one asked per turn each turn's with its
    index (a rating of the item's system)."""
    repeated = q.for_each_output or q.for_each_turn
    atoms = (q.output_atoms(answer) if repeated
             else [(None, part, value) for part, value in q.atoms(answer)])
    records = []
    for key, part, value in atoms:
        level = _level(q, part)
        if level in NUMERIC and value is not None:
            value = float(value)  # as the path columns: numbers are floats
        system, turn = (key, None) if q.for_each_output else (None, key)
        records.append((index, q.id, part, value, level is not None, level, system, turn))
    return records


def annotations_frame(*, campaign: Campaign, schema: TaskSchema | None = None) -> pd.DataFrame:
    """One row per atomic judgment (annotation x question part) with item and worker facts.

    Columns: FRAME_COLUMNS. `value` is a float for ordinal/interval parts and the stored value
    otherwise; `level` is the part's level of measurement (None for free text, rated=False);
    `gold` is the item's expected atom (control items), `bad_reference` marks slider atoms of
    gold items whose expected score lies in the bottom quarter of the scale (WMT's degraded
    references). `allocation` and `allocation_epoch` are the design the annotation's
    assignment was handed out under (a category, "" when none was recorded: imported
    judgments; and a nullable integer), so the analysis can say what its figures assume.
    """
    schema = schema or parse_schema(campaign.schema)
    fields = _path_fields(schema)
    by_path = {q.id for q, _, _ in fields}
    slow = [q for q in schema.questions if q.id not in by_path]
    names = {f"v{n}": KT(path) for n, (_, _, path) in enumerate(fields)}
    columns = ["id", "item_id", "worker_id", "seconds_spent", "control_passed",
               "assignment__allocation", "assignment__allocation_epoch", *names]
    columns += ["answers"] if slow else []
    queryset = (Annotation.objects.filter(campaign=campaign).order_by().annotate(**names)
                .values_list(*columns))
    text = tuple(f"v{n}" for n, (q, part, _) in enumerate(fields)
                 if _level(q, part) not in NUMERIC)
    base = fetch_frame(queryset, [*BASE_COLUMNS, *names, *(["answers"] if slow else [])],
                       text=(*text, "allocation"))
    base["control_passed"] = base["control_passed"].astype(object).where(
        base["control_passed"].notna(), None)
    base["seconds"] = base["seconds"].astype(float)
    base["allocation"] = base["allocation"].fillna("").astype("category")
    base["allocation_epoch"] = base["allocation_epoch"].astype("Int32")
    frame = _long_rows(base, fields, slow)
    return _with_facts(frame, campaign, schema)


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
        system=_systems(frame, items["system"].to_numpy()[at_item] if len(items) else None),
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


def _systems(frame: pd.DataFrame, of_items) -> object:
    """Each row's system: the output's for a per-output rating, else the item's."""
    of_output = frame["of_output"].to_numpy()
    if of_items is None or not pd.notna(of_output).any():
        return of_items
    return np.where(pd.notna(of_output), of_output, of_items)


def output_units(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with `item` made "<item>/<system>" for per-output ratings and "<item>#<turn>"
    for per-turn ones: each output or turn of an item is its own unit (of agreement, of a
    judge's alignment), else two ratings of one item would read as two ratings of one unit."""
    of_output = frame["of_output"].notna().to_numpy()
    of_turn = frame["turn"].notna().to_numpy()
    if not (of_output.any() or of_turn.any()):
        return frame
    item = frame["item"].astype(object).copy()
    item[of_output] = (frame.loc[of_output, "item"].astype(str) + "/"
                       + frame.loc[of_output, "system"].astype(str))
    item[of_turn] = (frame.loc[of_turn, "item"].astype(str) + "#"
                     + frame.loc[of_turn, "turn"].astype(str))
    return frame.assign(item=item.to_numpy())


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
    """Units are items; a per-line label is its own unit ("<item>.<line>", part "label"), and
    so is each output rated per output ("<item>/<system>")."""
    units = output_units(rated)["item"]
    line_parts = [p for p in pd.unique(rated["part"]) if re.fullmatch(r"\d+\.label", str(p))]
    if not line_parts:
        return rated.assign(unit=units.to_numpy())
    per_line = rated["part"].isin(line_parts)
    unit = units.astype(object).copy()
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


def allocation_counts(frame: pd.DataFrame) -> dict[tuple[str, int | None], int]:
    """Annotations per (allocation, priority epoch) they were handed out under."""
    per_annotation = frame.drop_duplicates("annotation")
    counts = per_annotation.groupby(["allocation", "allocation_epoch"], observed=True,
                                    dropna=False).size()
    return {(str(allocation), None if pd.isna(epoch) else int(epoch)): int(n)
            for (allocation, epoch), n in counts.items() if n}


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
