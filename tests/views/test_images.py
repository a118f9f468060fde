"""Item images (display format "image"): uploaded files or URLs on allowed hosts, checked at
import, shown on the item page, allowed in instructions, and the CSP widened only for them."""
import json
import os
import subprocess
import sys

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import storages

from campaigns.importing.items import parse_items
from campaigns.importing.records import ImportRejected
from campaigns.models import Item
from campaigns.pages import render_markdown
from campaigns.schema import parse_schema, validate_schema
from tests.factories import make_campaign
from tests.views.conftest import PROLIFIC, item_url, start

SCHEMA = {"display": [{"field": "photo", "label": "The photo", "format": "image",
                       "alt_field": "photo_alt"},
                      {"field": "caption", "label": "Caption"}],
          "questions": [{"id": "ok", "kind": "choice", "text": "Does the caption fit?",
                         "options": [{"value": "yes", "label": "Yes"},
                                     {"value": "no", "label": "No"}]}]}
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


@pytest.fixture
def images(settings, tmp_path):
    settings.IMAGE_HOSTS = ["img.example.org"]
    settings.STORAGES = {**settings.STORAGES, "item_images": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "item-images")}}}
    storages._storages.pop("item_images", None)  # the handler caches each storage it built
    yield storages["item_images"]
    storages._storages.pop("item_images", None)


def rows(*photos):
    return "\n".join(json.dumps({"id": f"r{n}", "photo": p, "photo_alt": "A cat", "caption": "c"})
                     for n, p in enumerate(photos, start=1)).encode()


def test_the_format_and_its_alt_field_are_part_of_the_schema():
    assert validate_schema(SCHEMA) == []
    assert parse_schema(SCHEMA).item_fields == ["photo", "caption", "photo_alt"]


def test_import_takes_an_allowed_host_and_an_uploaded_file(images):
    images.save("cats/01.png", ContentFile(PNG))
    parsed = parse_items(rows("https://img.example.org/a.jpg", "cats/01.png"), "jsonl",
                         parse_schema(SCHEMA))
    assert [p.data["photo"] for p in parsed] == ["https://img.example.org/a.jpg", "cats/01.png"]


def test_import_names_the_row_and_field_of_every_image_it_cannot_show(images):
    with pytest.raises(ImportRejected) as exc:
        parse_items(rows("https://evil.example.com/a.png", "http://img.example.org/a.png",
                         "../settings.py", "cats/missing.png", "cats/x.svg"), "jsonl",
                    parse_schema(SCHEMA))
    found = [(e.row, e.field, e.message) for e in exc.value.errors]
    assert found == [
        (1, "photo", "image host 'evil.example.com' is not allowed (IMAGE_HOSTS: "
                     "img.example.org)"),
        (2, "photo", "an image URL must start with https://"),
        (3, "photo", "an image file must be a relative path such as cats/01.png"),
        (4, "photo", "no uploaded image 'cats/missing.png' (upload it to the item images "
                     "first)"),
        (5, "photo", "an image file must end with one of .png, .jpg, .jpeg, .gif, .webp, .avif"),
    ]


def test_without_configured_hosts_no_url_is_accepted(images, settings):
    settings.IMAGE_HOSTS = []
    with pytest.raises(ImportRejected, match="not allowed \\(IMAGE_HOSTS: none are configured"):
        parse_items(rows("https://img.example.org/a.jpg"), "jsonl", parse_schema(SCHEMA))


@pytest.mark.django_db
def test_the_item_page_shows_the_image_with_its_text_alternative(client, owner, images,
                                                                 settings):
    settings.RATELIMIT_ENABLED = False
    images.save("cats/01.png", ContentFile(PNG))
    campaign = make_campaign(owner=owner, schema=SCHEMA, slug="photos")
    Item.objects.create(campaign=campaign, external_id="r1", slots_wanted=3, data={
        "photo": "cats/01.png", "photo_alt": 'A "cat" <b>', "caption": "c"})
    assignment = start(client, campaign, PROLIFIC)
    html = client.get(item_url(assignment)).content.decode()
    assert '<img class="item-image" src="/item-images/cats/01.png" ' \
           'alt="A &quot;cat&quot; &lt;b&gt;">' in html
    image = client.get("/item-images/cats/01.png")
    assert image.status_code == 200 and image["Content-Type"] == "image/png"
    assert b"".join(image.streaming_content) == PNG


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["../settings.py", "cats/missing.png", "cats/01.txt",
                                  "%2e%2e/x.png"])
def test_only_uploaded_images_are_served(client, images, name):
    images.save("cats/01.txt", ContentFile(b"secret"))
    assert client.get(f"/item-images/{name}").status_code == 404


def test_instructions_keep_images_from_allowed_hosts_only(settings):
    settings.IMAGE_HOSTS = ["img.example.org"]
    html = str(render_markdown(
        "![ok](https://img.example.org/a.png) ![no](https://evil.example.com/b.png) "
        "![up](/item-images/cats/01.png) ![js](javascript:alert(1)) "
        "<img src=x onerror=alert(1)>"))
    assert '<img alt="ok" src="https://img.example.org/a.png">' in html
    assert '<img alt="up" src="/item-images/cats/01.png">' in html
    assert "evil.example.com" not in html and "javascript" not in html
    assert "onerror" not in html


def _csp_img_src(env: dict) -> str:
    code = ("import django; django.setup(); from django.conf import settings; "
            "print(' '.join(settings.CONTENT_SECURITY_POLICY['DIRECTIVES']['img-src']))")
    out = subprocess.run(  # noqa: S603 - a fixed command
        [sys.executable, "-c", code], env={**os.environ, **env}, check=True,
        capture_output=True, text=True, cwd=os.getcwd())
    return out.stdout.strip()


def test_the_csp_img_src_is_widened_only_for_the_configured_hosts():
    assert _csp_img_src({"IMAGE_HOSTS": ""}) == "'self' data:"
    assert _csp_img_src({"IMAGE_HOSTS": "img.example.org, CDN.example.net"}) == (
        "'self' data: https://img.example.org https://cdn.example.net")


@pytest.mark.django_db
def test_researchers_upload_images_all_or_none_and_items_name_them(researcher_client,
                                                                   researcher, images):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    campaign = make_campaign(owner=researcher, schema=SCHEMA, slug="photos")
    url = reverse("admin:campaigns_campaign_images", args=[campaign.pk])
    fake = SimpleUploadedFile("page.png", b"<html><script>alert(1)</script>")
    response = researcher_client.post(url, {"images": [
        SimpleUploadedFile("a cat.png", PNG), fake]}, follow=True)
    assert "page.png: the content is not a PNG image" in response.content.decode()
    assert not images.exists("photos")
    response = researcher_client.post(url, {"images": [SimpleUploadedFile("a cat.png", PNG)]},
                                      follow=True)
    assert "Stored 1 image(s): photos/a_cat.png." in response.content.decode()
    assert "photos/a_cat.png" in researcher_client.get(url).content.decode()
    [item] = parse_items(rows("photos/a_cat.png"), "jsonl", parse_schema(SCHEMA))
    assert item.data["photo"] == "photos/a_cat.png"
