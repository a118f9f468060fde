"""Prepared statements for the hot SQL: same results, prepared once per database session."""
import pytest
from django.db import connection, transaction

from campaigns.work import (
    annotation_submit,
    assignment_claim,
    assignment_with_page,
    prepared,
    worker_get_or_create,
)
from tests.factories import make_campaign, make_items

pytestmark = pytest.mark.django_db

SQL = "SELECT CAST(%s AS integer) + 1, 'a%%b', CAST(%s AS text)"


def _run(sql=SQL, params=(41, "x")):
    with connection.cursor() as cursor:
        prepared.execute(cursor, sql, list(params))
        return cursor.fetchall()


def _prepared_here() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def test_results_are_those_of_plain_sql():
    with connection.cursor() as cursor:
        cursor.execute(SQL, [41, "x"])
        plain = cursor.fetchall()
    assert _run() == _run() == plain == [(42, "a%b", "x")]


def test_a_statement_is_prepared_once_per_session_and_then_run_by_name():
    _run()
    _run(params=(1, "y"))
    mine = [s for s in _prepared_here() if "'a%b'" in s]
    assert len(mine) == 1 and "CAST($1 AS integer)" in mine[0] and "CAST($2 AS text)" in mine[0]


@pytest.mark.django_db(transaction=True)
def test_a_new_session_prepares_again():
    _run()
    connection.close()  # e.g. CONN_MAX_AGE reached, or the server restarted
    assert _run() == [(42, "a%b", "x")]


def test_a_rolled_back_transaction_keeps_the_statement():
    with pytest.raises(RuntimeError), transaction.atomic():
        _run()
        raise RuntimeError
    assert _run() == [(42, "a%b", "x")]


def test_switched_off_everything_is_plain_sql(settings):
    settings.DB_PREPARED_STATEMENTS = False
    sql = SQL + " -- switched off"
    assert _run(sql) == [(42, "a%b", "x")]
    assert not [s for s in _prepared_here() if "switched off" in s]


def test_the_worker_pages_hot_statements_are_prepared(owner):
    campaign = make_campaign(owner=owner, annotations_per_item=1, items_per_assignment=1)
    make_items(campaign, 2)
    worker = worker_get_or_create(campaign=campaign, platform="prolific", platform_id="ann")
    assignment = assignment_claim(campaign=campaign, worker=worker)
    saved = annotation_submit(assignment=assignment, position=1,
                              answers={"coherence": 3, "sentiment": 4})
    assert saved.handed_in
    assignment_with_page(token=assignment.token, position=1)  # the item page's read
    statements = " ".join(_prepared_here())
    for table in ("campaigns_worker", "campaigns_item", "campaigns_assignment",
                  "campaigns_annotation"):
        assert table in statements


def test_the_first_run_in_a_session_is_still_one_query_in_djangos_log(
        django_assert_num_queries):
    with django_assert_num_queries(1):
        assert _run(SQL + " -- first in this session") == [(42, "a%b", "x")]
