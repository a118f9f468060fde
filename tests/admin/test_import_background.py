"""The admin import form hands a big upload to a background job and shows its outcome."""
import pytest

from campaigns.models import Item
from tests.admin.conftest import items_jsonl
from tests.admin.test_import import upload

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


def test_a_big_upload_is_imported_in_the_background(researcher_client, campaign, settings,
                                                    django_capture_on_commit_callbacks):
    settings.IMPORT_BACKGROUND_BYTES = 1000
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(researcher_client, campaign, items_jsonl(50))
    html = response.content.decode()
    assert response.status_code == 200
    assert "is being imported in the background" in html
    assert Item.objects.filter(campaign=campaign).count() == 50
    again = researcher_client.get(response.request["PATH_INFO"]).content.decode()
    assert "Imported 50 items (0 control items)" in again  # the job list below the form
