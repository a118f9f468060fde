"""manage.py api_token: one token per researcher, printed, created on first use."""
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.authtoken.models import Token

pytestmark = pytest.mark.django_db


def test_api_token_prints_the_same_token_each_time(owner, capsys):
    call_command("api_token", "alice")
    first = capsys.readouterr().out.strip()
    call_command("api_token", "alice")
    assert capsys.readouterr().out.strip() == first == Token.objects.get(user=owner).key


def test_api_token_rotate_replaces_the_token(owner, capsys):
    old = Token.objects.create(user=owner).key
    call_command("api_token", "alice", "--rotate")
    assert capsys.readouterr().out.strip() not in ("", old)
    assert Token.objects.filter(user=owner).count() == 1


def test_api_token_names_an_unknown_user(db):
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        call_command("api_token", "nobody")
