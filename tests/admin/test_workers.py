"""Worker, assignment and annotation lists with counts and filters; a worker's page lists its
assignments and checks (and every list, the item list too, in a constant number of queries)."""
import pytest
from django.urls import reverse

from campaigns.models import Annotation, Item, Worker
from tests.admin.conftest import add_items
from tests.admin.simulate import simulate

pytestmark = pytest.mark.django_db


def test_the_worker_page_lists_assignments_timings_and_check_outcomes(researcher_client,
                                                                      campaign):
    add_items(campaign, 2)
    Item.objects.create(campaign=campaign, external_id="attn-1", control="attention",
                        data={"prompt": "p", "completion": "c"},
                        gold={"coherence": 5}, slots_wanted=0)
    campaign.attention_checks_per_assignment = 1
    campaign.save()
    (assignment,) = simulate(campaign, workers=1)
    worker = assignment.worker
    outcome = Annotation.objects.get(worker=worker, item__external_id="attn-1").control_passed
    response = researcher_client.get(reverse("admin:campaigns_worker_change", args=[worker.pk]))
    assert response.status_code == 200
    text = response.content.decode()
    assert f"#{assignment.pk}" in text and "Submitted" in text
    assert "2 / 2" in text  # answered / items (one regular, one attention check)
    assert "attn-1" in text
    assert ("passed" if outcome else "failed") in text
    assert "Pseudonym in exports" in text
    answers = reverse("admin:campaigns_annotation_changelist")
    assert f"{answers}?worker__id__exact={worker.pk}" in text
    listed = researcher_client.get(answers, {"worker__id__exact": worker.pk})
    assert listed.context["cl"].result_count == 2


def test_the_worker_list_counts_assignments_and_filters_by_platform(researcher_client, campaign):
    add_items(campaign, 3)
    simulate(campaign, workers=2)
    Worker.objects.create(campaign=campaign, platform="mturk", platform_id="A1")
    url = reverse("admin:campaigns_worker_changelist")
    response = researcher_client.get(url)
    assert response.context["cl"].result_count == 3
    first = response.context["cl"].result_list[0]
    assert (first._assignments, first._submitted, first._annotations) == (1, 1, 1)
    response = researcher_client.get(url, {"platform__exact": "mturk"})
    assert response.context["cl"].result_count == 1


def test_the_worker_and_item_lists_use_a_constant_number_of_queries(researcher_client,
                                                                    researcher):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.factories import make_campaign

    counts = []
    for workers in (1, 5):
        campaign = make_campaign(owner=researcher)
        add_items(campaign, 5)
        simulate(campaign, workers=workers)
        for model in ("worker", "item", "assignment", "annotation"):
            with CaptureQueriesContext(connection) as queries:
                researcher_client.get(reverse(f"admin:campaigns_{model}_changelist"))
            counts.append((model, len(queries)))
    assert counts[:4] == counts[4:], counts


def test_the_worker_and_answer_pages_show_each_free_text_record_with_its_flags(
        researcher_client, campaign):
    add_items(campaign, 1)
    (assignment,) = simulate(campaign, workers=1)
    annotation = Annotation.objects.get(assignment=assignment)
    annotation.provenance = {"feedback": {"typed": 2, "pasted": 130, "pastes": 1, "ms": 4200,
                                          "chars": 130}}
    annotation.save(update_fields=["provenance"])
    page = researcher_client.get(reverse("admin:campaigns_worker_change",
                                         args=[assignment.worker_id])).content.decode()
    assert "Free-text answers: how they were written" in page
    row = page[page.index("<td>feedback</td>"):].split("</tr>")[0]
    assert "<td>130</td><td>2</td><td>130</td>" in row and "<strong>mostly pasted</strong>" in row
    assert "<td>4.2</td>" in row
    answer = researcher_client.get(reverse("admin:campaigns_annotation_change",
                                           args=[annotation.pk])).content.decode()
    assert "Free-text provenance" in answer and "mostly pasted" in answer
