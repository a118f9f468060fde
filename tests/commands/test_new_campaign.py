"""manage.py new_campaign: a draft campaign from a starter template, or a one-line error."""
import pytest
from django.core.management import CommandError, call_command

from campaigns.models import Campaign

pytestmark = pytest.mark.django_db


def test_it_creates_a_draft_from_a_template(owner, capsys):
    call_command("new_campaign", "--template", "pairwise-preference", "--slug", "pw",
                 "--owner", owner.username)
    assert "Created draft campaign 'pw' from 'pairwise-preference' (0 items)" in (
        capsys.readouterr().out)
    campaign = Campaign.objects.get(slug="pw")
    assert campaign.owner == owner and campaign.status == Campaign.Status.DRAFT
    assert campaign.schema["questions"][0]["kind"] == "pairwise"


def test_it_imports_the_sample_items_when_asked(owner, capsys):
    call_command("new_campaign", "--template", "movie-continuation", "--slug", "mc",
                 "--owner", owner.username, "--name", "My copy", "--with-sample-items")
    campaign = Campaign.objects.get(slug="mc")
    assert campaign.name == "My copy" and campaign.items.count() == 35


def test_it_lists_the_templates(capsys):
    call_command("new_campaign", "--list")
    out = capsys.readouterr().out
    assert "esa: Error span annotation (ESA)" in out and "mqm: MQM error annotation" in out


@pytest.mark.parametrize("args,message", [
    (["--template", "nope", "--slug", "x"], "No template named 'nope'; the templates are: "),
    (["--template", "esa"], "Give --template <name> and --slug <slug>"),
    (["--template", "esa", "--slug", "x", "--owner", "ghost"], "No user 'ghost'"),
])
def test_bad_arguments_are_one_line_errors_and_nothing_is_created(owner, args, message):
    owner_args = [] if "--owner" in args else ["--owner", owner.username]
    with pytest.raises(CommandError, match=message):
        call_command("new_campaign", *args, *owner_args)
    assert not Campaign.objects.exists()


def test_a_taken_slug_is_refused(owner, campaign):
    with pytest.raises(CommandError, match="slug is not available"):
        call_command("new_campaign", "--template", "esa", "--slug", campaign.slug,
                     "--owner", owner.username)
