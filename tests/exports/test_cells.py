"""Formula neutralisation and CSV cell rendering."""
from datetime import UTC, datetime

import pytest

from campaigns.exporting.cells import csv_cell, formula_in_csv, neutralise


@pytest.mark.parametrize("text", ["=1+1", "+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx",
                                  "=HYPERLINK(\"http://x\")", "-", "+", "-1e"])
def test_it_prefixes_cells_a_spreadsheet_would_run_as_a_formula(text):
    assert neutralise(text) == "'" + text


@pytest.mark.parametrize("text", ["-3", "+1.5", "-0.25e3", "-.5", "12", "plain", "", "a=b"])
def test_it_leaves_numbers_and_ordinary_text_alone(text):
    assert neutralise(text) == text


def test_it_keeps_numbers_as_numbers_and_renders_the_rest_as_text():
    assert csv_cell(-3) == -3
    assert csv_cell(2.5) == 2.5
    assert csv_cell(None) == ""
    assert csv_cell(True) == "true"
    assert csv_cell(False) == "false"
    assert csv_cell("=cmd") == "'=cmd"
    assert csv_cell(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05+00:00"
    assert csv_cell({"b": 1, "a": "=x"}) == '{"a": "=x", "b": 1}'
    assert csv_cell(["-x"]) == '["-x"]'


@pytest.mark.parametrize("text, found", [
    ("a,b\n1,2\n", False),
    ("a,-1\n", True),
    ('a,"=x"\n', True),
    ("=x,b\n", True),
    ('"@x",b\n', True),
    ("a\n+x,b\n", True),
    ("a,2026-01-02T03:04:05+00:00,x-y\n", False),
])
def test_it_finds_a_field_that_may_start_like_a_formula_in_csv_text(text, found):
    assert formula_in_csv(text) is found
