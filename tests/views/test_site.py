"""The site's own pages (finding 9): home, favicon, schema help, OpenAPI texts, API tokens."""
import json
from collections import Counter

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

pytestmark = pytest.mark.django_db




def test_the_home_page_says_what_this_is_and_links_the_admin_and_the_api_docs(client):
    response = client.get("/")
    assert response.status_code == 200
    text = response.content.decode()
    assert "human evaluation of generated text" in text
    assert 'href="/admin/"' in text and 'href="/api/docs/"' in text


def test_the_favicon_is_a_small_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/x-icon"
    body = b"".join(response.streaming_content) if response.streaming else response.content
    assert body[:4] == b"\x00\x00\x01\x00" and len(body) < 10_000


def test_schema_help_links_a_page_the_app_serves_not_a_repository_path(researcher_client,
                                                                       campaign):
    page = researcher_client.get(reverse("admin:campaigns_campaign_change", args=[campaign.pk]))
    text = page.content.decode()
    assert "docs/schema.md" not in text
    assert 'href="/help/schema/"' in text
    help_page = Client().get("/help/schema/")
    assert help_page.status_code == 200
    assert "likert" in help_page.content.decode() and "<script" not in help_page.content.decode()


def test_every_api_operation_has_its_own_description(client):
    schema = json.loads(client.get("/api/schema/", HTTP_ACCEPT="application/json").content)
    descriptions = [op.get("description", "").strip()
                    for ops in schema["paths"].values() for op in ops.values()]
    assert all(descriptions), "an operation without a description"
    repeated = [d for d, n in Counter(descriptions).items() if n > 1]
    assert not repeated


def test_the_token_page_needs_a_login(client):
    response = client.get("/account/api-token/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_a_researcher_creates_replaces_and_revokes_their_own_token(researcher_client, researcher):
    page = researcher_client.get("/account/api-token/")
    assert page.status_code == 200 and "You have no token yet." in page.content.decode()
    created = researcher_client.post("/account/api-token/", {"action": "create"})
    key = Token.objects.get(user=researcher).key
    assert key in created.content.decode() and created["Cache-Control"] == "no-store"
    researcher_client.post("/account/api-token/", {"action": "create"})
    assert Token.objects.get(user=researcher).key != key  # replaced: the old one stops working
    researcher_client.post("/account/api-token/", {"action": "revoke"})
    assert not Token.objects.filter(user=researcher).exists()


def test_the_token_page_refuses_a_post_without_its_csrf_token(researcher):
    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    assert client.post("/account/api-token/", {"action": "create"}).status_code == 403
    assert not Token.objects.filter(user=researcher).exists()


def test_the_admin_home_links_the_token_page(researcher_client):
    assert 'href="/account/api-token/"' in researcher_client.get("/admin/").content.decode()
