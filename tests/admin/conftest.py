"""Admin test fixtures: two researchers (staff, Researchers group), a superuser, their clients."""

import pytest

from campaigns.models import Item


def items_jsonl(n: int, *, start: int = 1, systems=("sys-a", "sys-b")) -> bytes:
    lines = [
        f'{{"id": "item-{i}", "system": "{systems[i % len(systems)]}", '
        f'"prompt": "Prompt {i}", "completion": "Completion {i}"}}'
        for i in range(start, start + n)
    ]
    return ("\n".join(lines) + "\n").encode()


def add_items(campaign, n: int = 4) -> None:
    for i in range(1, n + 1):
        Item.objects.create(campaign=campaign, external_id=f"item-{i}",
                            system=("sys-a", "sys-b")[i % 2],
                            data={"prompt": f"P{i}", "completion": f"C{i}"},
                            slots_wanted=campaign.annotations_per_item)




@pytest.fixture
def superuser(django_user_model):
    return django_user_model.objects.create_superuser("root", "root@example.org", "pw-root-123")




@pytest.fixture
def other_client(client, other_researcher):
    client.force_login(other_researcher)
    return client


@pytest.fixture
def super_client(client, superuser):
    client.force_login(superuser)
    return client


@pytest.fixture
def admin_page(page):
    """The shared browser page (tests/conftest.py): it fails on script errors or CSP violations."""
    return page
