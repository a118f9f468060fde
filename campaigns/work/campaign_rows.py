"""The campaign row of the worker pages' reads, kept per process by its row version.

Every worker request reads its campaign: 44 columns, among them the schema, the
instructions, the examples and the intake questions, which PostgreSQL turns from jsonb and
TOAST into text on every read, the larger part of its work for the read. A campaign changes
seldom and its workers read it thousands of times, so the worker reads select only the
campaign's row version, `(xmin, ctid)`, and take the columns from this cache while the
version is the one cached. A miss reads the row once (one more query) and keeps it.

Why the row version is a safe key: every UPDATE of a row, by any path (a model save, a
queryset `update()`, the SQL that closes a full campaign, a data migration, psql), writes a
new row version, with the updating transaction's id as its `xmin` and its own place in the
table as its `ctid`; locking a row (`FOR UPDATE`) does neither. Two versions of a row never
share both: a transaction that updates a row twice leaves its versions at different places,
and a place is reused only after the version there is dead, by a later transaction. The
key also holds the database's name, the campaign's id and `updated_at`.

What is kept are the values as the driver returned them, before Django's converters: each
read builds its own Campaign from them (the JSON parsed afresh), so no request can change
another's campaign. At most MAX_CAMPAIGNS rows are kept per process, the least recently
read dropped first.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

from django.db import DEFAULT_DB_ALIAS, connections

from ..models import Campaign
from . import prepared

__all__ = ["VERSION_WIDTH", "campaign_row", "version_columns"]

MAX_CAMPAIGNS = 256
VERSION_WIDTH = 4  # the columns version_columns selects: id, xmin, ctid, updated_at

_rows: OrderedDict[tuple, tuple] = OrderedDict()
_lock = threading.Lock()  # gthread workers share the process
_ROW_SQL: list[str] = []


def version_columns(alias: str) -> str:
    """What a read selects of its campaign `alias` instead of the campaign's columns."""
    quote = connections[DEFAULT_DB_ALIAS].ops.quote_name
    return f"{alias}.id, {alias}.xmin, {alias}.ctid, {alias}.{quote('updated_at')}"


def campaign_row(values: list) -> list | None:
    """The campaign's column values (model_columns order, as the driver returns them) for a
    row version read by version_columns (VERSION_WIDTH values): from the cache, or read once
    and cached. None when the campaign is gone by then."""
    conn = connections[DEFAULT_DB_ALIAS]
    campaign_id, xmin, ctid, updated_at = values
    key = (conn.settings_dict["NAME"], campaign_id, xmin, ctid, updated_at)
    with _lock:
        row = _rows.get(key)
        if row is not None:
            _rows.move_to_end(key)
    if row is None:
        key, row = _read(conn, campaign_id)
        if row is None:
            return None
        with _lock:
            _rows[key] = row
            while len(_rows) > MAX_CAMPAIGNS:
                _rows.popitem(last=False)
    return list(row)


def _read(conn, campaign_id: int) -> tuple[tuple | None, tuple | None]:
    """(key, column values) of the campaign's current row version, or (None, None)."""
    if not _ROW_SQL:
        # reads.model_columns, written out: reads imports this module, not the other way
        quote = conn.ops.quote_name
        columns = ", ".join(f"c.{quote(f.column)}" for f in Campaign._meta.concrete_fields)
        _ROW_SQL.append(f"SELECT {version_columns('c')}, {columns} "  # noqa: S608 (model names)
                        f"FROM {Campaign._meta.db_table} c WHERE c.id = %s")
    with conn.cursor() as cursor:
        prepared.execute(cursor, _ROW_SQL[0], [campaign_id])
        found = cursor.fetchone()
    if found is None:
        return None, None
    return (conn.settings_dict["NAME"], *found[:VERSION_WIDTH]), tuple(found[VERSION_WIDTH:])
