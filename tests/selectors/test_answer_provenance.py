"""The free-text flags where researchers review work: counted per submission (a reason for
review in the suggested action) and per worker (the workers quality control flags), and a
worker's free-text answers listed with their records."""
import pytest

from campaigns.selectors.analysis.flags import flagged_worker_ids
from campaigns.selectors.answer_provenance import provenance_flag_counts, worker_free_text
from campaigns.selectors.approvals import campaign_submissions
from tests.analysis.helpers import add_item, annotate
from tests.factories import CONTINUATION_SCHEMA, make_campaign

pytestmark = pytest.mark.django_db

PASTED = {"typed": 0, "pasted": 140, "pastes": 1, "ms": 3000, "chars": 140}
TYPED = {"typed": 140, "pasted": 0, "pastes": 0, "ms": 60_000, "chars": 140}


def _campaign(owner):
    campaign = make_campaign(owner=owner, schema=CONTINUATION_SCHEMA, min_seconds_per_word=0)
    items = [add_item(campaign, f"i{n}") for n in range(3)]
    for pid in ("paster", *(f"typist{n}" for n in range(4))):
        for item in items:
            annotation = annotate(campaign, pid, item, {"coherence": 3, "sentiment": 3,
                                                        "feedback": "x" * 140},
                                  seconds=60.0, platform="prolific")
            annotation.provenance = {"feedback": PASTED if pid == "paster" and item == items[0]
                                     else TYPED}
            annotation.save(update_fields=["provenance"])
    return campaign


def test_a_pasted_answer_makes_its_submission_a_review_with_the_rule_named(owner):
    rows = {r["participant_id"]: r for r in campaign_submissions(campaign=_campaign(owner))}
    assert rows["paster"]["action"] == "review"
    assert rows["paster"]["reason"] == "1 free-text answer mostly pasted"
    assert rows["paster"]["mostly_pasted_answers"] == 1
    assert {rows[f"typist{n}"]["action"] for n in range(4)} == {"approve"}
    assert {rows[f"typist{n}"]["mostly_pasted_answers"] for n in range(4)} == {0}


def test_the_worker_is_flagged_and_their_answers_listed_with_the_flag(owner):
    campaign = _campaign(owner)
    paster = campaign.workers.get(platform_id="paster")
    assert flagged_worker_ids(campaign=campaign) == {paster.pk}
    assert provenance_flag_counts(campaign=campaign, by="worker") == {
        paster.pk: {"mostly_pasted": 1}}
    listed = worker_free_text(worker=paster)
    assert [(r["item"].external_id, r["path"], r["flags"]) for r in listed] == [
        ("i0", "feedback", ["mostly pasted"]), ("i1", "feedback", []),
        ("i2", "feedback", [])]
    assert listed[0]["seconds"] == 3.0
