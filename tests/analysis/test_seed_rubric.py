"""Seed 003 end to end: the fixture campaign, seed-style judge output, the side-by-side table."""
import pytest

from campaigns.selectors.analysis import campaign_statistics, item_side_by_side
from campaigns.services.judgments import JudgmentRow, judgments_import
from campaigns.services.seeds import seed_campaigns_load

pytestmark = pytest.mark.django_db

# The worked example of seed 003 (LLaMA-3 70b vs the human expert on one summary).
LLAMA = [1, 1, 1, 1, 1, 1, 0, 0, 2, 2, 2, 2, 1, 0, 1]
HUMAN = [0, 1, 0, 1, 1, 1, 0, 1, 0, 2, 2, 2, 1, 0, 1]


def test_seed_003s_table_is_computed_from_imported_scores(owner):
    campaign = next(c for c, _ in seed_campaigns_load(owner=owner)
                    if c.slug == "comparative-rubric")
    item = campaign.items.filter(control="").first()
    as_prompted = "{" + ", ".join(f"{n}: {v}" for n, v in enumerate(LLAMA, start=1)) + "}"
    judgments_import(campaign=campaign, rows=[JudgmentRow(1, item.external_id, "llama-3-70b",
                                                          as_prompted)])
    expert = repr({f"C{n}": v for n, v in enumerate(HUMAN, start=1)})
    judgments_import(campaign=campaign, rows=[JudgmentRow(1, item.external_id, "expert", expert)],
                     platform="account")

    table = item_side_by_side(campaign=campaign, external_id=item.external_id)
    differs = [r["part"] for r in table if r["differs"]]
    assert differs == ["C1", "C3", "C8", "C9", "total"]  # as in the seed's table
    assert table[0]["text"].startswith("a short introduction is present")
    assert [r["llama-3-70b"] for r in table[:15]] == LLAMA
    statistics = campaign_statistics(campaign=campaign, n_boot=0)
    assert statistics["judged_items"] == [item.external_id]
    c1 = next(r for r in statistics["judges"] if r["part"] == "C1")
    assert (c1["exact_agreement"], c1["mean_difference"]) == (0.0, 1.0)
