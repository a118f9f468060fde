"""Server-side prepared statements for the worker pages' hot SQL.

PostgreSQL spends longer planning the worker pages' joins than running them, and every
request runs some. `execute` prepares a statement the first time a database session runs
it and executes it by name afterwards.

A session forgets its statements when it ends, so the names prepared so far are kept on the
connection and forgotten whenever Django opens a new one (`connection_created`). Prepared
statements outlive a rolled-back transaction. Behind a pooler in transaction mode
(PgBouncer), consecutive transactions may run in different server sessions: set
DB_PREPARED_STATEMENTS=false there, and every statement is sent as plain SQL.
"""
from __future__ import annotations

import hashlib
import re

from django.conf import settings
from django.db.backends.signals import connection_created
from django.dispatch import receiver

ATTRIBUTE = "annotate_prepared"  # on Django's connection wrapper: names prepared this session
_PLACEHOLDER = re.compile(r"%s|%%")
_TEXT: dict[str, tuple[str, str]] = {}  # SQL with %s placeholders -> (name, PREPARE text)


def execute(cursor, sql: str, params: list | tuple = ()) -> None:
    """cursor.execute(sql, params), through a prepared statement.

    `sql` uses the driver's `%s` placeholders and must always be the same text for the same
    statement (a constant, not built around the values).
    """
    connection = cursor.db
    if not settings.DB_PREPARED_STATEMENTS:
        cursor.execute(sql, params)
        return
    name, prepare = _prepared_text(sql)
    prepared = connection.__dict__.setdefault(ATTRIBUTE, set())
    if name not in prepared:
        # Straight to the driver: the PREPARE is part of the one statement the caller runs,
        # not a query of its own in Django's query log and counts.
        with connection.wrap_database_errors:
            cursor.cursor.execute(prepare)
        prepared.add(name)
    if params:
        cursor.execute(f"EXECUTE {name}({', '.join(['%s'] * len(params))})", params)
    else:
        cursor.execute(f"EXECUTE {name}")


def _prepared_text(sql: str) -> tuple[str, str]:
    if sql not in _TEXT:
        count = 0

        def number(match: re.Match) -> str:
            nonlocal count
            if match.group() == "%%":
                return "%"
            count += 1
            return f"${count}"

        name = "annotate_" + hashlib.sha1(sql.encode(), usedforsecurity=False).hexdigest()[:16]
        _TEXT[sql] = (name, f"PREPARE {name} AS {_PLACEHOLDER.sub(number, sql)}")
    return _TEXT[sql]


@receiver(connection_created)
def _new_session(sender, connection, **kwargs) -> None:
    """A new database session has no prepared statements yet."""
    connection.__dict__[ATTRIBUTE] = set()
