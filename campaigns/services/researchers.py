"""Researcher accounts: staff users in the "Researchers" group, with the admin permissions."""
from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db import transaction

from ..errors import Conflict

GROUP_NAME = "Researchers"
# Model permissions only open the admin pages; which campaigns a researcher sees is decided
# per row (campaigns_visible_to). Answers, workers and assignments are written by the worker
# pages, so researchers only view them.
PERMISSIONS = {
    "campaign": ("view", "add", "change", "delete"),
    "item": ("view", "delete"),
    "worker": ("view",),
    "assignment": ("view",),
    "annotation": ("view",),
    "exportjob": ("view", "add", "delete"),
    "deletionrecord": ("view",),
    "answermigration": ("view",),
    "judge": ("view", "add", "change", "delete"),
    "judgerun": ("view",),
    "judgeoutput": ("view",),
}


def researchers_group() -> Group:
    """The "Researchers" group with exactly the permissions above (created or repaired)."""
    group, _ = Group.objects.get_or_create(name=GROUP_NAME)
    codenames = [f"{action}_{model}" for model, actions in PERMISSIONS.items()
                 for action in actions]
    perms = Permission.objects.filter(content_type__app_label="campaigns", codename__in=codenames)
    group.permissions.set(perms)
    return group


@transaction.atomic
def researcher_create(*, username: str, email: str = "", password: str | None = None):
    """A new staff (not superuser) account in the Researchers group; returns (user, password)."""
    User = get_user_model()
    if User.objects.filter(username=username).exists():
        raise Conflict(f"the user {username!r} already exists")
    password = password or secrets.token_urlsafe(12)
    user = User.objects.create_user(username, email, password, is_staff=True)
    user.groups.add(researchers_group())
    return user, password


def api_token_create(*, user):
    """A new API token for this user, replacing any earlier one (which stops working)."""
    from rest_framework.authtoken.models import Token

    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user)


def api_token_revoke(*, user) -> bool:
    """Delete this user's API token; False when there was none."""
    from rest_framework.authtoken.models import Token

    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)
