"""render_item_preview: the worker's page for researchers, recording nothing."""
import pytest
from django.test import RequestFactory

from campaigns.models import Annotation, Assignment, Worker
from campaigns.pages import render_item_preview

pytestmark = pytest.mark.django_db


def test_the_preview_renders_the_item_page_without_recording(summary_campaign):
    item = summary_campaign.items.get()
    request = RequestFactory().get("/admin/preview/")
    response = render_item_preview(request, summary_campaign, item)
    html = response.content.decode()
    assert response.status_code == 200
    assert "nothing you enter here is recorded" in html
    assert "It was sunny." in html and 'name="q-lines.2.label"' in html
    assert "disabled" in html and 'type="submit"' not in html
    assert not (Worker.objects.exists() or Assignment.objects.exists()
                or Annotation.objects.exists())


def test_the_preview_can_show_stored_answers(rubric_campaign):
    item = rubric_campaign.items.get()
    values = {"rubric": {f"C{n}": 1 for n in range(1, 16)}}
    response = render_item_preview(RequestFactory().get("/"), rubric_campaign, item,
                                   values=values)
    assert b"<output data-rubric-total>15</output>" in response.content
