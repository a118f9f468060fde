"""manage.py create_researcher: a staff account in the Researchers group that can use the admin."""
import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse

from tests.factories import make_campaign

pytestmark = pytest.mark.django_db


def test_it_creates_a_staff_researcher_who_sees_only_their_campaigns(client, owner, capsys):
    call_command("create_researcher", "dora", "--email", "dora@example.org")
    password = capsys.readouterr().out.split("password: ")[1].strip()
    dora = get_user_model().objects.get(username="dora")
    assert dora.is_staff and not dora.is_superuser
    assert [g.name for g in dora.groups.all()] == ["Researchers"]
    assert client.login(username="dora", password=password)
    make_campaign(owner=owner)
    mine = make_campaign(owner=dora)
    response = client.get(reverse("admin:campaigns_campaign_changelist"))
    assert response.status_code == 200
    assert list(response.context["cl"].result_list) == [mine]
    assert client.get(reverse("admin:campaigns_campaign_add")).status_code == 200
    assert client.get(reverse("admin:auth_user_changelist")).status_code == 403


def test_an_existing_username_is_refused(owner):
    with pytest.raises(CommandError, match="already exists"):
        call_command("create_researcher", owner.username, "--password", "x-long-pass-123")
