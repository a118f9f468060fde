"""The admin's evaluation report page: rendered from the escaped Markdown, options checked."""
import pytest
from django.urls import reverse

from tests.analysis.test_report import _campaign

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


def test_the_report_page_shows_the_report_with_supplied_text_escaped(researcher_client, owner):
    campaign = _campaign(owner)
    url = reverse("admin:campaigns_campaign_report", args=[campaign.pk])
    page = researcher_client.get(url)
    assert page.status_code == 200
    body = page.content.decode()
    assert "Evaluation report" in body and "Design warnings" in body
    assert "<b>A" not in body and "&lt;b&gt;A" in body
    bad = researcher_client.get(url, {"power": "7"})  # the form names the problem, no 500
    assert bad.status_code == 200 and "power" in bad.content.decode().lower()


def test_another_researcher_cannot_open_the_report(other_client, owner):
    campaign = _campaign(owner)
    response = other_client.get(reverse("admin:campaigns_campaign_report", args=[campaign.pk]))
    assert response.status_code in (302, 403, 404)
