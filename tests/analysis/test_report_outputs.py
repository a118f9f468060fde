"""The report for items that carry several systems' outputs: the systems counted from the
outputs, and no empty per-system table when no numeric question rates systems one by one."""
import pytest

from campaigns.selectors.analysis import evaluation_report
from tests.exports.test_analysis import best_worst_campaign

pytestmark = pytest.mark.django_db


def test_a_best_worst_report_counts_the_systems_of_the_outputs(owner):
    campaign = best_worst_campaign(owner)  # 3 items, each with the outputs of 4 systems
    built = evaluation_report(campaign=campaign, n_boot=20)
    design = built["design"]
    assert (design["items"], design["systems"], design["outputs_per_item_max"]) == (3, 4, 4)
    assert (design["items_per_system_min"], design["items_per_system_max"]) == (3, 3)
    text = built["markdown"]
    assert "3 regular items from 4 system(s) (3-3 per system; an item carries up to 4 " \
        "systems' outputs)" in text
    results = text.split("## Results per system", 1)[1].split("##", 1)[0]
    assert "| Question | System |" not in results
    assert "in the pairwise, best-worst and error span sections below" in results
