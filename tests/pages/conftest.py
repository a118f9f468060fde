"""The pages' tests render the worker views' campaigns (tests/views/conftest.py)."""
from tests.views.conftest import rubric_campaign, summary_campaign  # noqa: F401 - fixtures
