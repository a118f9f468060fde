"""An item to preview a schema with before the campaign has any (the admin's schema preview)."""
from __future__ import annotations

from ..schema import TaskSchema
from ..schema.outputs import OUTPUTS
from ..starters import Starter

SAMPLE_TEXT = ("This is sample text for the field \u201c{field}\u201d. Your items\u2019 own text "
               "appears here. A second sentence shows how longer text reads.")


def _prepared(schema: TaskSchema, data: dict) -> dict | None:
    """The data as an import would store it, or None when the schema would refuse it."""
    data = dict(data)
    if any(name not in data for name in schema.item_fields):
        return None
    if any(q.prepare_item(data) for q in schema.questions):
        return None
    return data


def _made_up(schema: TaskSchema) -> dict:
    """Placeholder text for every field the schema reads; as many outputs as its questions take
    (the first count from 2 to 6 they all accept)."""
    data = {name: SAMPLE_TEXT.format(field=name) for name in schema.item_fields if name != OUTPUTS}
    if OUTPUTS not in schema.item_fields:
        return data
    for n in range(2, 7):
        candidate = {**data, OUTPUTS: [
            {"system": f"system-{i}", "text": f"Sample output {i} of {n}. " + SAMPLE_TEXT.format(
                field=OUTPUTS)} for i in range(1, n + 1)]}
        prepared = _prepared(schema, candidate)
        if prepared is not None:
            return prepared
    return data


def schema_sample_item(*, schema: TaskSchema, starter: Starter | None = None) -> dict:
    """The first of the template's sample items that fits the schema, else made-up data."""
    for row in (starter.items if starter else []):
        data = {k: v for k, v in row.items()
                if k not in ("id", "external_id", "system", "control", "gold", "gold_tolerance")}
        prepared = _prepared(schema, data)
        if prepared is not None:
            return prepared
    return _prepared(schema, _made_up(schema)) or _made_up(schema)
