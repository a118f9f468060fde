"""bench/synthetic.py, the SQL builder of rating campaigns the benchmarks and the security
tests share: the campaign it says, the same one again when rebuilt."""
import pytest

from bench.synthetic import rating_campaign
from campaigns.models import Annotation, Item, ItemTally

pytestmark = pytest.mark.django_db


def _ratings(campaign):
    return sorted(Annotation.objects.filter(campaign=campaign).values_list(
        "item__external_id", "worker__platform_id", "answers__quality"))


def test_each_item_is_rated_by_different_workers_of_the_pool_on_the_scale(owner):
    campaign = rating_campaign(owner, slug="synthetic", items=40, raters_per_item=3, workers=7)
    ratings = _ratings(campaign)
    assert len(ratings) == 120
    by_item: dict = {}
    for item, worker, value in ratings:
        by_item.setdefault(item, set()).add(worker)
        assert value in {1, 2, 3, 4, 5}
    assert all(len(workers) == 3 for workers in by_item.values())
    assert len({w for workers in by_item.values() for w in workers}) == 7
    assert set(Item.objects.filter(campaign=campaign).values_list("system", flat=True)) == {
        "sys-0", "sys-1", "sys-2", "sys-3"}
    assert set(Item.objects.filter(campaign=campaign).values_list("annotations_done",
                                                                  flat=True)) == {3}
    assert ItemTally.objects.filter(campaign=campaign).count() == 40  # the triggers ran


def test_a_rebuild_gives_the_same_ratings_and_missing_leaves_some_out(owner):
    first = _ratings(rating_campaign(owner, slug="synthetic", items=50, missing=0.2))
    again = _ratings(rating_campaign(owner, slug="synthetic", items=50, missing=0.2))
    assert first == again
    assert 150 < len(first) < 240  # about 200 of the 250, every worker rating every item
    with pytest.raises(ValueError):
        rating_campaign(owner, slug="too-few", items=5, raters_per_item=5, workers=3)
