"""Screening at the claim: ineligible answers and full quotas screen out with nothing claimed;
quotas hold under concurrent starts (threads on their own connections, real locks)."""
import re
import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Sum
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from campaigns.errors import ScreenedOut
from campaigns.models import Assignment, Item, Worker
from campaigns.work import assignment_claim, worker_get_or_create, worker_record_intake
from tests.factories import make_campaign, make_items, prolific_pid

ADULT = {"id": "adult", "kind": "choice", "text": "Are you 18 or older?", "eligible": ["yes"],
         "options": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]}
L1 = {"id": "l1", "kind": "choice", "text": "Your first language",
      "options": [{"value": v, "label": v} for v in ("de", "fr", "ar")],
      "quota": {"de": 2, "fr": 2, "ar": 2}}


def worker_with(campaign, name, **answers):
    worker = worker_get_or_create(campaign=campaign, platform="link", platform_id=name)
    return worker_record_intake(worker=worker, answers=answers)


def slots_taken(campaign):
    return Item.objects.filter(campaign=campaign).aggregate(n=Sum("slots_taken"))["n"]


@pytest.mark.django_db
def test_an_ineligible_answer_screens_out_with_nothing_claimed(owner):
    campaign = make_campaign(owner=owner, intake_questions=[ADULT])
    make_items(campaign, 3)
    minor = worker_with(campaign, "w1", adult="no")
    with pytest.raises(ScreenedOut) as caught:
        assignment_claim(campaign=campaign, worker=minor)
    assert caught.value.extra == {"reason": "ineligible:adult"}
    minor.refresh_from_db()
    assert minor.screened_out_at is not None and minor.screened_out_reason == "ineligible:adult"
    assert not Assignment.objects.exists() and slots_taken(campaign) == 0
    assert assignment_claim(campaign=campaign, worker=worker_with(campaign, "w2", adult="yes"))


@pytest.mark.django_db
def test_a_screened_out_worker_stays_out_whatever_they_answer_later(owner):
    campaign = make_campaign(owner=owner, intake_questions=[ADULT])
    make_items(campaign, 3)
    worker = worker_with(campaign, "w1", adult="no")
    with pytest.raises(ScreenedOut):
        assignment_claim(campaign=campaign, worker=worker)
    worker = worker_record_intake(worker=Worker.objects.get(pk=worker.pk),
                                  answers={"adult": "yes"})
    with pytest.raises(ScreenedOut) as caught:
        assignment_claim(campaign=campaign, worker=worker)
    assert caught.value.extra == {"reason": "ineligible:adult"}
    assert not Assignment.objects.exists()


@pytest.mark.django_db
def test_a_full_quota_screens_out_and_an_expired_place_is_given_back(owner):
    campaign = make_campaign(owner=owner, intake_questions=[L1], annotations_per_item=10)
    make_items(campaign, 3)
    first = assignment_claim(campaign=campaign, worker=worker_with(campaign, "a", l1="de"))
    assignment_claim(campaign=campaign, worker=worker_with(campaign, "b", l1="de"))
    assignment_claim(campaign=campaign, worker=worker_with(campaign, "c", l1="fr"))
    with pytest.raises(ScreenedOut) as caught:
        assignment_claim(campaign=campaign, worker=worker_with(campaign, "d", l1="de"))
    assert caught.value.extra == {"reason": "quota:l1"}
    Assignment.objects.filter(pk=first.pk).update(status=Assignment.Status.EXPIRED,
                                                  deadline=timezone.now() - timedelta(1))
    assert assignment_claim(campaign=campaign, worker=worker_with(campaign, "e", l1="de"))


@pytest.mark.django_db
def test_a_worker_who_holds_a_place_is_not_counted_against_themselves(owner):
    campaign = make_campaign(owner=owner, intake_questions=[{**L1, "quota": {"de": 1}}],
                             annotations_per_item=10)
    make_items(campaign, 3)
    worker = worker_with(campaign, "a", l1="de")
    first = assignment_claim(campaign=campaign, worker=worker)
    assert assignment_claim(campaign=campaign, worker=worker).pk == first.pk  # resumed


@pytest.mark.django_db(transaction=True)
def test_concurrent_starts_never_overshoot_a_quota(owner, settings):
    """Twelve participants who all answer "de" press Start at the same moment through the
    study link; the quota is 2, so exactly two get work and ten are screened out."""
    settings.RATELIMIT_ENABLED = False
    campaign = make_campaign(owner=owner, intake_questions=[L1], annotations_per_item=20,
                             items_per_assignment=2)
    make_items(campaign, 10)
    url = reverse("campaigns:entry", args=[campaign.slug])
    pids = [prolific_pid(str(i)) for i in range(12)]
    barrier, outcomes = threading.Barrier(len(pids)), Counter()

    def start(pid):
        try:
            client = Client()
            params = {"PROLIFIC_PID": pid, "STUDY_ID": "s", "SESSION_ID": f"x-{pid}"}
            page = client.get(url, params).content.decode()
            form_key = re.search(r'name="form_key" value="([^"]+)"', page).group(1)
            barrier.wait()
            response = client.post(url, {**params, "q-l1": "de", "form_key": form_key})
            outcomes["started" if response.status_code == 302 else
                     "screened_out" if b"screened-out-message" in response.content else
                     f"other {response.status_code}"] += 1
        finally:
            connection.close()

    threads = [threading.Thread(target=start, args=(p,)) for p in pids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert outcomes == {"started": 2, "screened_out": 10}
    assert Assignment.objects.filter(campaign=campaign).count() == 2
    assert Worker.objects.filter(campaign=campaign, screened_out_reason="quota:l1").count() == 10
    assert slots_taken(campaign) == 4
