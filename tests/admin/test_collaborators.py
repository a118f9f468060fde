"""The collaborator picker lists nobody: a researcher adds a colleague by exact username or
e-mail address. A taken slug is refused without saying whose it is."""
import pytest
from django.urls import reverse

from campaigns.models import Campaign
from tests.admin.test_campaign_form import change_url, form_data
from tests.factories import CONTINUATION_SCHEMA, make_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(django_user_model):
    """Researchers the campaign's owner has never heard of."""
    return [django_user_model.objects.create_user(f"staffer{n}", f"s{n}@lab.example", "pw-1234567",
                                                  is_staff=True) for n in range(3)]


def test_the_change_page_lists_no_other_researcher(researcher_client, campaign, staff,
                                                    other_researcher):
    content = researcher_client.get(change_url(campaign)).content.decode()
    for user in [*staff, other_researcher]:
        assert user.username not in content
        assert user.email not in content
    assert '<textarea name="collaborators"' in content


@pytest.mark.parametrize("name", ["bob", "BOB@example.org", "bob@example.org"])
def test_a_collaborator_is_added_by_exact_username_or_email(researcher_client, campaign,
                                                            other_researcher, name):
    response = researcher_client.post(change_url(campaign), form_data(
        campaign, collaborators=name))
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert list(campaign.collaborators.all()) == [other_researcher]
    # ...and the page shows the collaborators the campaign has, by username.
    assert "bob</textarea>" in researcher_client.get(change_url(campaign)).content.decode()


@pytest.mark.parametrize("name", ["bo", "Bob", "b%", "example.org", "staffer"])
def test_a_partial_or_inexact_name_matches_nobody(researcher_client, campaign, other_researcher,
                                                  staff, name):
    response = researcher_client.post(change_url(campaign), form_data(
        campaign, collaborators=name))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors["collaborators"]
    assert errors == [f"No single researcher account has the username or e-mail address: "
                      f"{name}."]
    assert not campaign.collaborators.exists()


def test_accounts_that_are_not_active_staff_cannot_be_added(researcher_client, campaign,
                                                           django_user_model):
    django_user_model.objects.create_user("worker", "w@example.org", "pw-1234567")
    django_user_model.objects.create_user("gone", "g@example.org", "pw-1234567", is_staff=True,
                                          is_active=False)
    response = researcher_client.post(change_url(campaign), form_data(
        campaign, collaborators="worker\ngone"))
    assert response.context["adminform"].form.errors["collaborators"] == [
        "No single researcher account has the username or e-mail address: worker, gone."]


def test_removing_every_collaborator_empties_the_list(researcher_client, campaign,
                                                      other_researcher):
    campaign.collaborators.add(other_researcher)
    response = researcher_client.post(change_url(campaign), form_data(campaign, collaborators=""))
    assert response.status_code == 302
    assert not campaign.collaborators.exists()


def test_another_researchers_slug_is_refused_without_naming_them(researcher_client,
                                                                 other_researcher):
    make_campaign(owner=other_researcher, slug="their-study", status=Campaign.Status.DRAFT)
    new = Campaign(slug="x", name="Mine", schema=CONTINUATION_SCHEMA,
                   annotations_per_item=3, items_per_assignment=1)
    response = researcher_client.post(reverse("admin:campaigns_campaign_add"), form_data(
        new, slug="their-study"))
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["slug"] == [
        "This slug is not available; choose another."]
    assert "already exists" not in response.content.decode()
    assert Campaign.objects.filter(slug="their-study").count() == 1
