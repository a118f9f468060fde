"""ItemTally: PostgreSQL keeps each item's tally of human ratings equal to its annotations.

Whatever writes the annotations (the worker pages' service, repeated submits that change an
answer, erasure, deletes, bulk inserts, many connections at once), the tally of every item
is what counting its annotations gives; attention/gold items and LLM judges are left out.
"""
import json
import threading
from collections import Counter, defaultdict

import pytest
from django.db import connection

from campaigns.models import Annotation, Campaign, ItemTally, Worker
from campaigns.services.judgments import JudgmentRow, judgments_import
from campaigns.services.privacy import worker_erase
from campaigns.work import annotation_submit, assignment_claim, worker_get_or_create
from tests.analysis.helpers import add_item, annotate
from tests.factories import RUBRIC_SCHEMA, make_campaign, make_items


def counted(campaign) -> dict[int, dict]:
    """Each regular item's tally, recounted from its human annotations in Python."""
    tallies: dict[int, dict] = defaultdict(lambda: defaultdict(Counter))
    annotations = (Annotation.objects.filter(campaign=campaign, item__control="")
                   .exclude(worker__platform=Worker.Platform.LLM))
    for item_id, answers in annotations.values_list("item_id", "answers"):
        for key, value in answers.items():
            leaves = ({f"{key}/{k}": v for k, v in value.items()} if isinstance(value, dict)
                      else {key: value})
            for path, leaf in leaves.items():
                if isinstance(leaf, int | float) and not isinstance(leaf, bool):
                    tallies[item_id][path][str(leaf)] += 1
    return {item: {path: dict(c) for path, c in paths.items()}
            for item, paths in tallies.items()}


def stored(campaign) -> dict[int, dict]:
    """The tallies PostgreSQL kept (items whose tally emptied out count as no tally)."""
    return {t.item_id: t.counts for t in ItemTally.objects.filter(campaign=campaign) if t.counts}


def assert_exact(campaign):
    assert stored(campaign) == counted(campaign)


@pytest.mark.django_db
def test_ratings_from_the_worker_pages_are_tallied_per_item(owner):
    campaign = make_campaign(owner=owner, annotations_per_item=2, items_per_assignment=2)
    make_items(campaign, 2)
    for n, name in enumerate(["ann", "bob"]):
        worker = worker_get_or_create(campaign=campaign, platform="prolific", platform_id=name)
        assignment = assignment_claim(campaign=campaign, worker=worker)
        for position in (1, 2):
            annotation_submit(assignment=assignment, position=position,
                              answers={"coherence": 1 + n + position, "sentiment": 5,
                                       "feedback": "fine"})
    tallies = stored(campaign)
    assert sorted(map(dict.keys, tallies.values())) == [{"coherence", "sentiment"}] * 2
    assert sorted(c for t in tallies.values() for c in t["sentiment"].values()) == [2, 2]
    assert_exact(campaign)  # free text ("feedback") is never tallied


@pytest.mark.django_db
def test_a_changed_answer_moves_its_count(owner):
    campaign = make_campaign(owner=owner, annotations_per_item=1, items_per_assignment=2)
    make_items(campaign, 2)
    worker = worker_get_or_create(campaign=campaign, platform="prolific", platform_id="ann")
    assignment = assignment_claim(campaign=campaign, worker=worker)
    first = assignment.slots.get(position=1).item_id
    annotation_submit(assignment=assignment, position=1, answers={"coherence": 2, "sentiment": 3})
    annotation_submit(assignment=assignment, position=1, answers={"coherence": 4, "sentiment": 3})
    assert stored(campaign) == {first: {"coherence": {"4": 1}, "sentiment": {"3": 1}}}
    assert_exact(campaign)


@pytest.mark.django_db
def test_rubric_criteria_are_tallied_one_level_down(owner):
    campaign = make_campaign(owner=owner, schema=RUBRIC_SCHEMA)
    item = add_item(campaign, "r1")
    for w in range(3):
        annotate(campaign, f"w{w}", item, {"rubric": {f"C{c}": (w + c) % 2 for c in range(1, 16)}})
    tally = stored(campaign)[item.pk]
    assert tally["rubric/C1"] == {"0": 1, "1": 2} and len(tally) == 15
    assert_exact(campaign)


@pytest.mark.django_db
def test_attention_items_and_llm_judges_are_not_tallied(owner):
    campaign = make_campaign(owner=owner)
    item = add_item(campaign, "i1")
    check = add_item(campaign, "att", control="attention", gold={"coherence": 1})
    annotate(campaign, "w0", item, {"coherence": 3, "sentiment": 3})
    annotate(campaign, "w0", check, {"coherence": 1, "sentiment": 1})
    judgments_import(campaign=campaign, rows=[
        JudgmentRow(1, "i1", "gpt-4", '{"coherence": 5, "sentiment": 5}')])
    assert Annotation.objects.filter(campaign=campaign).count() == 3
    assert stored(campaign) == {item.pk: {"coherence": {"3": 1}, "sentiment": {"3": 1}}}


@pytest.mark.django_db
def test_erasing_a_worker_takes_their_ratings_out(owner):
    campaign = make_campaign(owner=owner, annotations_per_item=2, items_per_assignment=3)
    make_items(campaign, 3)
    for w in range(2):
        worker = worker_get_or_create(campaign=campaign, platform="prolific", platform_id=f"w{w}")
        assignment = assignment_claim(campaign=campaign, worker=worker)
        for position in (1, 2, 3):
            annotation_submit(assignment=assignment, position=position,
                              answers={"coherence": 1 + w, "sentiment": 2})
    worker_erase(worker=Worker.objects.get(campaign=campaign, platform_id="w0"))
    assert_exact(campaign)
    assert [t["coherence"] for t in stored(campaign).values()] == [{"2": 1}] * 3


@pytest.mark.django_db
def test_deleting_items_or_the_campaign_leaves_no_tally_behind(owner):
    campaign = make_campaign(owner=owner)
    items = [add_item(campaign, f"i{n}") for n in range(3)]
    for w in range(2):
        for item in items:
            annotate(campaign, f"w{w}", item, {"coherence": 3, "sentiment": 2})
    items[0].delete()
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the deferred foreign keys, checked now
    assert_exact(campaign)
    assert set(stored(campaign)) == {items[1].pk, items[2].pk}
    Campaign.objects.filter(pk=campaign.pk).delete()
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    assert not ItemTally.objects.exists()


@pytest.mark.django_db
def test_bulk_inserts_updates_and_deletes_in_one_statement_keep_tallies_exact(owner):
    campaign = make_campaign(owner=owner)
    items = [add_item(campaign, f"i{n}") for n in range(20)]
    for w in range(4):
        annotate(campaign, f"w{w}", items[0], {"coherence": 1, "sentiment": 1})
    workers = list(Worker.objects.filter(campaign=campaign))
    assignment = {w.pk: w.assignments.get() for w in workers}
    Annotation.objects.bulk_create([
        Annotation(campaign=campaign, assignment=assignment[w.pk], item=item, worker=w,
                   answers={"coherence": 1 + (n * 7 + i) % 5, "sentiment": 1 + i % 5})
        for i, w in enumerate(workers) for n, item in enumerate(items[1:])])
    assert_exact(campaign)
    Annotation.objects.filter(campaign=campaign, item__in=items[:10]).update(
        answers={"coherence": 5, "sentiment": 4, "feedback": "same"})
    assert_exact(campaign)
    Annotation.objects.filter(campaign=campaign, worker=workers[1]).delete()
    assert_exact(campaign)
    assert stored(campaign)[items[0].pk]["coherence"] == {"5": 3}


@pytest.mark.django_db(transaction=True)
def test_many_connections_rating_the_same_items_at_once_keep_tallies_exact(owner):
    campaign = make_campaign(owner=owner, annotations_per_item=16, items_per_assignment=3)
    make_items(campaign, 3)
    errors = []
    barrier = threading.Barrier(16)

    def rate(n):
        try:
            worker = worker_get_or_create(campaign=campaign, platform="prolific",
                                          platform_id=f"w{n}")
            assignment = assignment_claim(campaign=campaign, worker=worker)
            barrier.wait()
            # Up to 3 items: a claim skips items other claims hold locked at that moment.
            positions = sorted(assignment.slots.values_list("position", flat=True))
            for position in positions:
                if n % 4 == 0 and position < positions[-1]:  # changed later, racing the others
                    annotation_submit(assignment=assignment, position=position,
                                      answers={"coherence": 5, "sentiment": 1})
                annotation_submit(assignment=assignment, position=position,
                                  answers={"coherence": 1 + (n + position) % 5, "sentiment": 3})
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=rate, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors and not any(t.is_alive() for t in threads)
    saved = Annotation.objects.filter(campaign=campaign).count()
    assert saved >= 16 and saved == sum(i.annotations_done for i in campaign.items.all())
    assert_exact(campaign)
    assert sum(sum(t["sentiment"].values()) for t in stored(campaign).values()) == saved


@pytest.mark.django_db
@pytest.mark.parametrize(("tally", "change", "merged"), [
    (None, {"q": {"3": 1}}, {"q": {"3": 1}}),                       # an item's first rating
    ({"q": {"3": 1}}, {"q": {"3": 1, "4": 1}}, {"q": {"3": 2, "4": 1}}),
    ({"q": {"3": 2, "4": 1}}, {"q": {"4": -1}}, {"q": {"3": 2}}),   # a count at 0 is dropped
    ({"q": {"3": 1}, "r/C1": {"0": 1}}, {"q": {"3": -1}}, {"r/C1": {"0": 1}}),  # so is its part
    ({"q": {"3": 1}}, {"q": {"3": -1}}, {}),
    ({"q": {"3": 1}}, None, {"q": {"3": 1}}),
    ({"q": {"3": 1}}, {"r/C2": {"1": 1}}, {"q": {"3": 1}, "r/C2": {"1": 1}}),
])
def test_the_merge_adds_key_by_key_and_drops_what_reaches_zero(tally, change, merged):
    with connection.cursor() as cursor:
        cursor.execute("SELECT campaigns_tally_merge(%s::jsonb, %s::jsonb)",
                       [None if tally is None else json.dumps(tally),
                        None if change is None else json.dumps(change)])
        assert json.loads(cursor.fetchone()[0]) == merged
