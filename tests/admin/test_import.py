"""The item upload form: the count imported, or row-numbered errors and nothing stored."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from campaigns.models import Item
from tests.admin.conftest import items_jsonl

pytestmark = pytest.mark.django_db


def upload(client, campaign, content: bytes, name="items.jsonl", **extra):
    return client.post(reverse("admin:campaigns_campaign_import", args=[campaign.pk]),
                       {"file": SimpleUploadedFile(name, content), **extra}, follow=True)


def test_the_form_imports_every_row_and_says_how_many(researcher_client, campaign):
    response = upload(researcher_client, campaign, items_jsonl(5))
    assert response.status_code == 200
    assert "Imported 5 items" in response.content.decode()
    assert Item.objects.filter(campaign=campaign).count() == 5
    assert set(Item.objects.values_list("slots_wanted", flat=True)) == {3}


def test_a_bad_row_rejects_the_file_with_row_numbers_and_stores_nothing(researcher_client,
                                                                         campaign):
    good = items_jsonl(3).decode().splitlines()
    content = "\n".join([good[0], '{"id": "x", "system": "s", "prompt": "p"}', good[1],
                         "{broken", good[2]]).encode()
    response = upload(researcher_client, campaign, content)
    assert response.status_code == 400
    text = response.content.decode()
    assert "Nothing was imported: 2 problems found." in text
    assert "row 2 (line 2), completion:" in text
    assert "row 4 (line 4): malformed JSON" in text
    assert not Item.objects.filter(campaign=campaign).exists()


def test_ids_that_already_exist_are_reported_and_nothing_is_added(researcher_client, campaign):
    upload(researcher_client, campaign, items_jsonl(2))
    response = upload(researcher_client, campaign, items_jsonl(3))
    assert response.status_code == 400
    assert "&#x27;item-1&#x27; already exists in this campaign" in response.content.decode()
    assert Item.objects.filter(campaign=campaign).count() == 2


def test_an_unknown_file_type_is_a_clear_error(researcher_client, campaign):
    response = upload(researcher_client, campaign, b"x", name="items.xlsx")
    assert response.status_code == 400
    assert "unknown file type" in response.content.decode()


def test_the_format_can_be_chosen_when_the_name_does_not_say(researcher_client, campaign):
    content = b"id,system,prompt,completion\na,s1,p,c\nb,s2,p,c\n"
    response = upload(researcher_client, campaign, content, name="upload.dat", format="csv")
    assert "Imported 2 items" in response.content.decode()


def test_a_quote_free_tsv_imports_with_the_raw_tsv_format(researcher_client, campaign):
    content = b'id\tsystem\tprompt\tcompletion\na\ts1\t"p\tc"\n'
    response = upload(researcher_client, campaign, content, name="items.tsv")
    assert response.status_code == 400
    assert "import it with the format tsv-raw" in response.content.decode()
    response = upload(researcher_client, campaign, content, name="items.tsv", format="tsv-raw")
    assert "Imported 1 items" in response.content.decode()
    assert Item.objects.get(campaign=campaign).data["prompt"] == '"p'


def test_the_form_page_renders(researcher_client, campaign):
    response = researcher_client.get(reverse("admin:campaigns_campaign_import",
                                             args=[campaign.pk]))
    assert response.status_code == 200
    assert b'enctype="multipart/form-data"' in response.content
