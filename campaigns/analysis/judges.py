"""LLM judges next to humans: the human consensus a judge is aligned with (analysis/alignment.py
computes the agreement), confusion matrices, one item side by side.

Frames hold columns item, worker, question, part, value; `levels` maps (question, part) to a
level of measurement. Judge frames name the judge in `worker`.
"""
from __future__ import annotations

import pandas as pd

KEYS = ["question", "part"]


def consensus_values(group: pd.DataFrame, level: str, keys: tuple = (*KEYS, "item")
                     ) -> pd.DataFrame:
    """Per item of one part (the `keys` columns name it; the rows of one key in their order).
    Nominal: the most frequent value (the smallest on a tie); ordinal: the median, with an even
    number of raters the midpoint of the two middle values (it may fall between two scale
    points, where no single rater's value is favoured); interval and ratio: the mean.
    Vectorised."""
    keys = list(keys)
    if level == "nominal":
        counts = group.assign(value=group["value"].astype(str)).groupby(
            [*keys, "value"], sort=False).size().rename("n").reset_index()
        counts = counts.sort_values([*keys, "n", "value"],
                                    ascending=[True] * len(keys) + [False, True])
        return counts.drop_duplicates(keys)[[*keys, "value"]]
    numbers = group.assign(value=group["value"].astype(float))
    how = "median" if level == "ordinal" else "mean"
    return numbers.groupby(keys, sort=False, as_index=False)["value"].agg(how)


def human_consensus(frame: pd.DataFrame, levels: dict) -> pd.DataFrame:
    """One consensus value per (question, part, item) over the human workers."""
    parts = []
    for (question, part), group in frame.dropna(subset=["value"]).groupby(KEYS, sort=False):
        level = levels.get((question, part))
        if level is not None:
            parts.append(consensus_values(group[[*KEYS, "item", "value"]], level))
    if not parts:
        return pd.DataFrame(columns=[*KEYS, "item", "value"])
    return pd.concat(parts, ignore_index=True)


def _paired(consensus: pd.DataFrame, judges: pd.DataFrame) -> pd.DataFrame:
    judged = judges.dropna(subset=["value"]).drop_duplicates(
        ["worker", *KEYS, "item"], keep="last")
    return judged.merge(consensus, on=[*KEYS, "item"], suffixes=("_judge", "_human"))


def _label(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def confusion_matrices(consensus: pd.DataFrame, judges: pd.DataFrame) -> list[dict]:
    """Per judge and (question, part): counts with human values as rows, judge values as
    columns, over the union of the values either side used."""
    out = []
    for (judge, question, part), group in _paired(consensus, judges).groupby(
        ["worker", *KEYS], sort=True
    ):
        human = group["value_human"].map(_label)
        machine = group["value_judge"].map(_label)
        labels = sorted(set(human) | set(machine), key=_sort_key)
        table = pd.crosstab(human, machine).reindex(index=labels, columns=labels, fill_value=0)
        out.append({"judge": judge, "question": question, "part": part, "labels": labels,
                    "matrix": table.to_numpy().astype(int).tolist()})
    return out


def _sort_key(label: str):
    try:
        return (0, float(label), "")
    except ValueError:
        return (1, 0.0, label)


def side_by_side(
    item, consensus: pd.DataFrame, judges: pd.DataFrame, texts: dict | None = None
) -> pd.DataFrame:
    """Seed 003's table for one item: part, text, each judge's value, the human value, and
    whether any judge differs from the human."""
    texts = texts or {}
    human = consensus[consensus["item"] == item]
    judged = judges[judges["item"] == item].drop_duplicates(["worker", *KEYS], keep="last")
    wide = judged.pivot(index=KEYS, columns="worker", values="value") if len(judged) else None
    names = sorted(judged["worker"].unique())
    rows = []
    for question, part in pd.concat([human[KEYS], judged[KEYS]]).drop_duplicates().itertuples(
        index=False
    ):
        match = human[(human["question"] == question) & (human["part"] == part)]
        h = match["value"].iloc[0] if len(match) else None
        row = {"question": question, "part": part, "text": texts.get((question, part), part)}
        differs = False
        for name in names:
            v = wide.at[(question, part), name] if (question, part) in wide.index else None
            v = None if v is None or pd.isna(v) else v
            row[name] = v
            differs |= v is not None and h is not None and _label(v) != _label(h)
        row.update(human=h, differs=differs)
        rows.append(row)
    return pd.DataFrame(rows, columns=[*KEYS, "text", *names, "human", "differs"])
