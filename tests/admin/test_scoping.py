"""A researcher sees only own and shared campaigns and what hangs off them; superusers all."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from campaigns.models import Annotation, Campaign, ExportJob, Item, Worker
from tests.admin.conftest import add_items, items_jsonl
from tests.admin.simulate import simulate

pytestmark = pytest.mark.django_db


@pytest.fixture
def studied(campaign):
    """Alice's campaign with items, a worker's answers and a finished export job."""
    add_items(campaign, 2)
    simulate(campaign, workers=1)
    ExportJob.objects.create(campaign=campaign, requested_by=campaign.owner, status="done",
                             file="exports/x.csv", rows_written=1, rows_total=1)
    return campaign


def campaign_pages(campaign):
    pk = campaign.pk
    return [reverse(f"admin:campaigns_campaign_{name}", args=[pk])
            for name in ("change", "dashboard", "statistics", "import", "preview", "delete",
                         "history")] + [
        reverse("admin:campaigns_campaign_preview", args=[pk]) + "?item="
        + str(campaign.items.first().pk)]


def child_pages(campaign):
    objects = {"item": campaign.items.first(), "worker": campaign.workers.first(),
               "assignment": campaign.assignments.first(),
               "annotation": campaign.annotations.first(),
               "exportjob": campaign.export_jobs.first()}
    return [reverse(f"admin:campaigns_{model}_change", args=[obj.pk])
            for model, obj in objects.items()]


def test_another_researcher_cannot_open_any_page_of_the_campaign(other_client, studied):
    for url in campaign_pages(studied) + child_pages(studied):
        response = other_client.get(url)
        assert response.status_code == 404, url


def test_another_researcher_cannot_change_import_export_or_change_its_status(other_client,
                                                                              studied):
    pk = studied.pk
    name = studied.name
    posts = {
        reverse("admin:campaigns_campaign_change", args=[pk]): {"name": "Hijacked"},
        reverse("admin:campaigns_campaign_import", args=[pk]): {
            "file": SimpleUploadedFile("x.jsonl", items_jsonl(1, start=50))},
        reverse("admin:campaigns_campaign_export", args=[pk]): {"format": "csv"},
        reverse("admin:campaigns_campaign_status", args=[pk, "close"]): {},
        reverse("admin:campaigns_campaign_duplicate", args=[pk]): {},
        reverse("admin:campaigns_campaign_delete", args=[pk]): {"post": "yes"},
    }
    for url, data in posts.items():
        assert other_client.post(url, data).status_code == 404, url
    studied.refresh_from_db()
    assert (studied.name, studied.status) == (name, "live")
    assert Item.objects.filter(campaign=studied).count() == 2
    assert ExportJob.objects.filter(campaign=studied).count() == 1
    assert Campaign.objects.count() == 1


def test_list_actions_on_a_hidden_campaign_do_nothing(other_client, studied):
    other_client.post(reverse("admin:campaigns_campaign_changelist"),
                      {"action": "close", "_selected_action": [studied.pk]})
    studied.refresh_from_db()
    assert studied.status == "live"


def test_lists_and_filters_show_only_visible_rows(other_client, other_researcher, studied):
    from tests.factories import make_campaign

    mine = make_campaign(owner=other_researcher, name="Bob study")
    for model in ("campaign", "item", "worker", "assignment", "annotation", "exportjob"):
        response = other_client.get(reverse(f"admin:campaigns_{model}_changelist"))
        assert response.status_code == 200, model
        assert response.context["cl"].result_count == (1 if model == "campaign" else 0), model
        assert studied.name not in response.content.decode(), model
    item_list = other_client.get(reverse("admin:campaigns_item_changelist"))
    assert "sys-a" not in item_list.content.decode()  # the system filter's choices are scoped
    assert mine.name in other_client.get(
        reverse("admin:campaigns_campaign_changelist")).content.decode()


def test_a_collaborator_sees_and_changes_the_campaign_but_cannot_delete_it(
        other_client, other_researcher, studied):
    studied.collaborators.add(other_researcher)
    for url in campaign_pages(studied)[:5] + child_pages(studied):
        assert other_client.get(url).status_code in (200, 302), url
    assert other_client.get(reverse("admin:campaigns_campaign_delete",
                                    args=[studied.pk])).status_code == 403
    bulk = other_client.post(reverse("admin:campaigns_campaign_changelist"), {
        "action": "delete_selected", "_selected_action": [studied.pk], "post": "yes"})
    assert bulk.status_code == 403
    assert Campaign.objects.filter(pk=studied.pk).exists()


def test_a_user_without_model_permissions_gets_403(client, django_user_model, studied):
    studied_owner_less = django_user_model.objects.create_user("carol", password="pw-carol-123",
                                                               is_staff=True)
    studied.collaborators.add(studied_owner_less)
    client.force_login(studied_owner_less)
    response = client.get(reverse("admin:campaigns_campaign_dashboard", args=[studied.pk]))
    assert response.status_code == 403


def test_a_superuser_sees_every_campaign_and_row(super_client, studied, other_researcher):
    from tests.factories import make_campaign

    make_campaign(owner=other_researcher)
    response = super_client.get(reverse("admin:campaigns_campaign_changelist"))
    assert response.context["cl"].result_count == 2
    for url in campaign_pages(studied)[:5] + child_pages(studied):
        assert super_client.get(url).status_code in (200, 302), url
    for model, count in (("item", Item.objects.count()), ("worker", Worker.objects.count()),
                         ("annotation", Annotation.objects.count())):
        response = super_client.get(reverse(f"admin:campaigns_{model}_changelist"))
        assert response.context["cl"].result_count == count > 0


def test_the_campaign_choices_of_other_models_are_scoped(researcher, other_researcher, rf):
    from django.contrib import admin

    from tests.factories import make_campaign

    make_campaign(owner=other_researcher)
    mine = make_campaign(owner=researcher)
    request = rf.get("/")
    request.user = researcher
    model_admin = admin.site._registry[ExportJob]
    field = model_admin.formfield_for_foreignkey(ExportJob._meta.get_field("campaign"), request)
    assert list(field.queryset) == [mine]


def test_the_judgment_upload_needs_change_permission_on_a_visible_campaign(
        other_client, other_researcher, studied):
    url = reverse("admin:campaigns_campaign_judgments", args=[studied.pk])
    assert other_client.get(url).status_code == 404
    studied.collaborators.add(other_researcher)
    assert other_client.get(url).status_code == 200
