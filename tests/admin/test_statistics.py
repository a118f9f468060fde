"""The statistics admin page and the LLM-judgment upload form."""
import re

import pytest
from django.contrib.messages.storage.fallback import FallbackStorage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import RequestFactory
from django.urls import reverse

from campaigns.admin.statistics import judgments_upload_view
from campaigns.models import Annotation
from tests.analysis.helpers import add_item
from tests.analysis.test_selector import _study
from tests.factories import RUBRIC_SCHEMA, make_campaign

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


def test_the_page_shows_every_table_and_passes_chart_data_without_inline_script(admin_client,
                                                                               owner):
    campaign = _study(owner)
    url = reverse("admin:campaigns_campaign_statistics", args=[campaign.pk])
    page = admin_client.get(url).content.decode()
    for heading in ("Inter-annotator agreement", "Scores per system", "Ranking by mean z-score",
                    "distinguishable", "Quality control per worker", "LLM judges next to humans",
                    "One item side by side", "Confusion matrices"):
        assert heading in page
    assert 'id="statistics-charts" type="application/json"' in page
    scripts = re.findall(r"<script([^>]*)>", page)
    assert all("src=" in s or 'type="application/json"' in s for s in scripts)
    assert not re.search(r'(src|href)="(https?:)?//', page)  # no external requests
    assert "What excluding flagged workers changes" not in page

    excluded = admin_client.get(url, {"exclude_flagged": "1", "item": "i3"}).content.decode()
    assert "What excluding flagged workers changes" in excluded
    assert 'value="i3" selected' in excluded
    assert "(differs)" in excluded  # gpt-4 gave 2 where the humans gave 5


def test_item_text_and_ids_are_escaped(admin_client, owner):
    campaign = _study(owner)
    item = campaign.items.get(external_id="i0")
    item.external_id = "<b>x</b>"
    item.save()
    page = admin_client.get(reverse("admin:campaigns_campaign_statistics", args=[campaign.pk]),
                            {"item": "<b>x</b>"}).content.decode()
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page


def _post(user, campaign, content, **fields):
    request = RequestFactory().post("/upload/", {
        "file": SimpleUploadedFile("judge.csv", content), "platform": "llm", **fields})
    request.user = user
    request.session = {}
    request._messages = FallbackStorage(request)
    return judgments_upload_view(request, campaign)


def test_the_upload_form_imports_a_file_or_lists_its_row_errors(admin_user, owner):
    campaign = make_campaign(owner=owner, schema=RUBRIC_SCHEMA)
    add_item(campaign, "a1")
    ones = "{" + ", ".join(f"{n}: 1" for n in range(1, 16)) + "}"
    bad = _post(admin_user, campaign, f'item,output\na1,"{ones}"\na1,"oops"\n'.encode(),
                judge="gpt-4")
    bad.render()
    assert bad.status_code == 200
    assert "Nothing was imported" in bad.content.decode()
    assert "row 2" in bad.content.decode() and not Annotation.objects.exists()

    good = _post(admin_user, campaign, f'item,output\na1,"{ones}"\n'.encode(), judge="gpt-4")
    assert good.status_code == 302
    assert Annotation.objects.get().worker.platform_id == "gpt-4"


def test_the_upload_page_is_reachable_from_the_admin_and_leads_to_the_statistics(admin_client,
                                                                                 owner):
    campaign = make_campaign(owner=owner, schema=RUBRIC_SCHEMA)
    add_item(campaign, "a1")
    url = reverse("admin:campaigns_campaign_judgments", args=[campaign.pk])
    assert "Import LLM judgments" in admin_client.get(url).content.decode()
    ones = "{" + ", ".join(f"{n}: 1" for n in range(1, 16)) + "}"
    upload = SimpleUploadedFile("judge.csv", f'item,judge,output\na1,gpt-4,"{ones}"\n'.encode())
    response = admin_client.post(url, {"file": upload, "platform": "llm"}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("admin:campaigns_campaign_statistics",
                                                     args=[campaign.pk])
    assert "Imported judgments of gpt-4: 1 new, 0 updated." in response.content.decode()
