"""The worker pages' language: chosen per campaign (or by the browser among the shipped
ones), stated in <html lang dir>, and every string the product writes translated in every
shipped language."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from campaigns.models import Campaign
from campaigns.pages.language import shipped_language, worker_language
from tests.factories import make_campaign, make_items
from tests.views.conftest import PROLIFIC

SHIPPED = ["de", "es", "fr", "zh_Hans", "ja", "ar"]
ROOT = Path(settings.BASE_DIR)


@pytest.fixture(autouse=True)
def _no_rate_limits(settings):
    settings.RATELIMIT_ENABLED = False


def test_every_shipped_language_has_a_catalogue_and_a_setting():
    assert sorted(code for code, _ in settings.LANGUAGES) == sorted(
        ["en", "de", "es", "fr", "zh-hans", "ja", "ar"])
    for locale in SHIPPED:
        assert (ROOT / "locale" / locale / "LC_MESSAGES" / "django.mo").is_file(), locale


@pytest.mark.parametrize(("tag", "shipped"), [
    ("de", "de"), ("de-AT", "de"), ("zh-Hans", "zh-hans"), ("zh-CN", "zh-hans"), ("ar", "ar"),
    ("ar-EG", "ar"), ("ko", None), ("pt-BR", None), ("en-GB", "en")])
def test_a_tag_reads_its_nearest_shipped_translation(tag, shipped):
    assert shipped_language(tag) == shipped


@pytest.mark.parametrize(("language", "from_browser", "accept", "expected"), [
    ("de", False, "fr-FR,fr;q=0.9", "de"),        # the campaign decides
    ("de", True, "fr-FR,fr;q=0.9", "fr-fr"),      # the browser prefers a shipped one
    ("de", True, "ko,pt;q=0.5", "de"),            # none shipped: the campaign's
    ("ko", True, "", "ko"),
])
def test_the_campaign_or_the_browser_chooses(language, from_browser, accept, expected):
    campaign = Campaign(language=language, language_from_browser=from_browser)
    assert worker_language(campaign, accept) == expected


@pytest.mark.django_db
@pytest.mark.parametrize(("language", "lang", "direction", "start"), [
    ("ar", "ar", "rtl", "ابدأ"), ("de", "de", "ltr", "Beginnen"), ("ja", "ja", "ltr", "始める"),
    ("zh-Hans", "zh-Hans", "ltr", "开始"), ("en", "en", "ltr", "Start"),
    ("ko", "ko", "ltr", "Start")])   # not shipped: its lang, the product's words in English
def test_the_study_page_says_its_language_and_direction(owner, language, lang, direction,
                                                        start):
    campaign = make_campaign(owner=owner, language=language)
    make_items(campaign, 1)
    response = Client().get(reverse("campaigns:entry", args=[campaign.slug]), PROLIFIC)
    html = response.content.decode()
    assert f'<html lang="{lang}" dir="{direction}">' in html
    assert f">{start}</button>" in html
    assert response["Content-Language"] == lang


@pytest.mark.django_db
def test_a_researcher_page_after_a_worker_page_is_in_english(owner, admin_client):
    campaign = make_campaign(owner=owner, language="de")
    make_items(campaign, 1)
    client = Client()
    assert "Beginnen" in client.get(reverse("campaigns:entry", args=[campaign.slug]),
                                    PROLIFIC).content.decode()
    page = admin_client.get(reverse("admin:campaigns_campaign_changelist")).content.decode()
    assert '<html lang="en-us"' in page and "Beginnen" not in page


@pytest.mark.django_db
def test_an_item_page_in_german_has_its_widgets_and_scripts_words_in_german(owner):
    from tests.views.conftest import start
    campaign = make_campaign(owner=owner, language="de")
    make_items(campaign, 2)
    english = make_campaign(owner=owner)
    make_items(english, 2)
    client = Client()
    german_page = client.get(reverse("campaigns:item", args=[start(client, campaign).token, 1]))
    html = german_page.content.decode()
    assert "Speichern und abschließen" in html and "0 von 1 beantwortet" in html
    assert 'id="worker-strings"' in html and "Abschnitt markieren" in html
    # The widgets' cached blank HTML is kept per language: the English campaign reads English.
    other = Client()
    english_html = other.get(reverse("campaigns:item", args=[
        start(other, english, {**PROLIFIC, "PROLIFIC_PID": "a" * 24}).token, 1])).content.decode()
    assert "Tip: press a number key" in english_html and "Tipp" not in english_html
    assert 'id="worker-strings"' not in english_html


needs_gettext = pytest.mark.skipif(
    not shutil.which("xgettext") and not os.environ.get("CI"),
    reason="gettext's tools are not installed (apt-get install gettext); CI fails instead")


@needs_gettext
def test_every_worker_facing_string_is_translated_in_every_shipped_language(tmp_path,
                                                                           settings,
                                                                           monkeypatch):
    """makemessages over a copy of the code as it is now, merged into a copy of the
    catalogues: a string marked for translation that a catalogue lacks comes out untranslated
    and fails. (A copy: makemessages writes into the locale folder it finds beside the code.)"""
    source = tmp_path / "src"
    for part in ("annotate", "campaigns", "templates", "static", "locale"):
        shutil.copytree(ROOT / part, source / part,
                        ignore=shutil.ignore_patterns("__pycache__", "vendor", "*.mo"))
    settings.LOCALE_PATHS = [source / "locale"]
    monkeypatch.chdir(source)
    call_command("makemessages", locale=SHIPPED, verbosity=0, no_location=True)
    problems = []
    for locale in SHIPPED:
        po = source / "locale" / locale / "LC_MESSAGES" / "django.po"
        checked = subprocess.run(  # noqa: S603 (gettext's own checker on our catalogue)
            [shutil.which("msgfmt") or "msgfmt", "-c", "--statistics", "-o", os.devnull,
             str(po)], capture_output=True, text=True, check=False)
        stats = checked.stderr.strip().splitlines()[-1]
        if checked.returncode or "untranslated" in stats or "fuzzy" in stats:
            problems.append(f"{locale}: {stats}")
            problems += [f"  {m}" for m in _untranslated(po.read_text(encoding="utf-8"))]
    assert not problems, "\n".join(problems)


def _untranslated(po: str) -> list[str]:
    """The msgids of entries whose translation is empty or fuzzy (for the failure message)."""
    out = []
    for block in po.split("\n\n")[1:]:
        msgid = "".join(re.findall(r'^(?:msgid )?"(.*)"$', block.split("msgstr")[0], re.M))
        if "#, fuzzy" in block or re.search(r'msgstr(\[\d\])? ""\n*$', block):
            out.append(msgid[:80])
    return out


@pytest.mark.django_db
def test_a_rejected_answer_is_explained_in_the_pages_language(owner):
    from tests.views.conftest import item_url, start
    campaign = make_campaign(owner=owner, language="de")
    make_items(campaign, 2)
    client = Client()
    assignment = start(client, campaign)
    page = client.get(item_url(assignment)).content.decode()
    form_key = re.search(r'name="form_key" value="([^"]+)"', page).group(1)
    response = client.post(item_url(assignment), {"form_key": form_key, "q-coherence": "3"})
    html = response.content.decode()
    assert response.status_code == 400
    assert "Bitte beantworten Sie diese Frage." in html
    assert "Please answer this question." not in html
