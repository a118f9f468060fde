"""The researcher's absolute speed floors beside the relative too-fast rule (finding 8)."""
import pandas as pd
import pytest

from campaigns.analysis.quality import QualityRules, worker_quality
from tests.analysis.test_quality import COLUMNS, _rows


def _bots_and_humans(bot_seconds=0.05):
    """Half the workers are bots: the median worker is a bot, so the relative rule sees none."""
    rows = []
    for n in range(3):
        rows += _rows(f"bot{n}", 100 * n, [1, 2, 3, 4], seconds=bot_seconds)
    for n in range(2):
        rows += _rows(f"human{n}", 1000 + 100 * n, [1, 3, 2, 4], seconds=20.0)
    return pd.DataFrame(rows, columns=COLUMNS)


def test_bots_at_a_tenth_of_a_second_pass_the_relative_rule_alone():
    table = worker_quality(_bots_and_humans()).set_index("worker")
    assert not table.loc["bot0", "flagged"]


def test_an_absolute_floor_per_item_flags_them_and_names_the_rule():
    table = worker_quality(_bots_and_humans(),
                           QualityRules(min_seconds_per_item=2)).set_index("worker")
    assert table.loc["bot0", "flagged"] and table.loc["bot0", "too_fast"]
    assert table.loc["bot0", "reasons"] == [
        "too fast (median 0.1 s per item, under the minimum of 2 s)"]
    assert not table.loc["human0", "flagged"]


def test_a_floor_per_word_uses_each_items_displayed_words():
    frame = _bots_and_humans(bot_seconds=3.0)
    frame["words"] = 100  # 3 s for 100 words: 0.03 s per word
    table = worker_quality(frame, QualityRules(min_seconds_per_word=0.1)).set_index("worker")
    assert table.loc["bot0", "reasons"] == [
        "too fast (median 0.03 s per word, under the minimum of 0.1 s)"]
    assert not table.loc["human0", "flagged"]  # 0.2 s per word


def test_the_relative_rule_says_it_is_relative():
    rows = _rows("slow", 0, [1, 2, 3], seconds=20) + _rows("mid", 10, [1, 2, 3], seconds=18) \
        + _rows("fast", 20, [1, 2, 3], seconds=1)
    table = worker_quality(pd.DataFrame(rows, columns=COLUMNS)).set_index("worker")
    assert table.loc["fast", "reasons"] == [
        "too fast (median 1.0 s, under 25% of the typical worker's 18.0 s)"]


@pytest.mark.django_db
def test_the_campaigns_floor_reaches_its_statistics(owner):
    from campaigns.models import Campaign
    from campaigns.selectors.analysis import campaign_statistics
    from tests.api.conftest import make_annotation, make_items
    from tests.factories import make_campaign

    # The default reading floor switched off (0): only the floor set below may fire.
    campaign = make_campaign(owner=owner, status=Campaign.Status.LIVE, min_seconds_per_word=0)
    items = make_items(campaign, 3)
    for worker, seconds in (("bot", 0.1), ("bot2", 0.1), ("human", 30.0)):
        for item in items:
            a = make_annotation(campaign, item, worker_id=worker)
            a.seconds_spent = seconds
            a.save(update_fields=["seconds_spent"])
    assert campaign_statistics(campaign=campaign, n_boot=0)["counts"]["flagged_workers"] == 0
    campaign.min_seconds_per_item = 2
    campaign.save()
    stats = campaign_statistics(campaign=campaign, n_boot=0)
    assert stats["counts"]["flagged_workers"] == 2
    assert all("under the minimum of 2 s" in " ".join(r["reasons"])
               for r in stats["quality"] if r["flagged"])


@pytest.mark.parametrize(("setting", "floor"), [(None, 0.06), (0, None), (0.2, 0.2)])
def test_an_empty_setting_is_the_default_reading_floor_and_zero_switches_it_off(setting, floor):
    from campaigns.analysis.quality import DEFAULT_SECONDS_PER_WORD, effective_word_floor
    assert DEFAULT_SECONDS_PER_WORD == 0.06  # 1,000 words per minute
    assert effective_word_floor(setting) == floor
