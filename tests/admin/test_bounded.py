"""campaigns/admin/bounded.py: a long table as the statistics page shows it."""
from campaigns.admin.bounded import bounded


def test_the_first_rows_are_shown_up_to_the_limit_in_their_order():
    assert bounded(list(range(10)), limit=3) == {"rows": [0, 1, 2], "hidden": 7, "total": 10,
                                                "hidden_picked": 0}
    assert bounded([1, 2], limit=3)["hidden"] == 0


def test_rows_to_keep_come_before_the_others_and_are_capped_too():
    odd = bounded(list(range(10)), keep=lambda n: n % 2, limit=3)
    assert odd["rows"] == [1, 3, 5] and odd["hidden_picked"] == 2
    late = bounded(list(range(10)), keep=lambda n: n == 8, limit=3)
    assert late["rows"] == [0, 1, 8] and late["hidden"] == 7
