"""The admin's analysis pages (campaigns/admin/statistics.py): the statistics and report pages,
cached or being computed, and the LLM-judgment upload form."""
import re

import pytest
from django.contrib.messages.storage.fallback import FallbackStorage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import RequestFactory
from django.urls import reverse

from campaigns.admin.statistics import judgments_upload_view
from campaigns.models import Annotation, ImportJob, StatisticsResult
from campaigns.services.statistics import statistics_compute
from tests.analysis.helpers import add_item
from tests.analysis.test_report import _campaign
from tests.api.conftest import make_items
from tests.api.test_judgments import _file
from tests.exports.conftest import make_annotation
from tests.factories import BWS_SCHEMA, RUBRIC_SCHEMA, make_campaign
from tests.schema.test_pairwise import SCHEMA as PAIRWISE_SCHEMA
from tests.selectors.test_analysis import _study
from tests.services.test_statistics import queued  # noqa: F401 - the fixture

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager", "few_resamples")]


# The statistics admin page and the LLM-judgment upload form.


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


# The statistics and report pages show cached figures with their time and a Recompute button; with
# none yet, a "being computed" page that refreshes itself.


REFRESH = '<meta http-equiv="refresh" content="5">'


@pytest.mark.parametrize("page", ["statistics", "report"])
def test_a_first_visit_shows_a_refreshing_page_then_the_figures(
        researcher_client, owner, queued, page,  # noqa: F811
        django_capture_on_commit_callbacks):
    campaign = _study(owner)
    url = reverse(f"admin:campaigns_campaign_{page}", args=[campaign.pk])
    with django_capture_on_commit_callbacks(execute=True):
        pending = researcher_client.get(url)
    assert pending.status_code == 200
    body = pending.content.decode()
    assert "being computed" in body and REFRESH in body
    for pk in queued:
        statistics_compute(result_id=pk)
    with django_capture_on_commit_callbacks(execute=True):
        shown = researcher_client.get(url).content.decode()
    assert "Computed from the data as of" in shown and "Recompute" in shown
    if page == "statistics":  # the side-by-side table is its own cached job
        assert REFRESH in shown
        for pk in queued[1:]:
            statistics_compute(result_id=pk)
        shown = researcher_client.get(url).content.decode()
    assert REFRESH not in shown and "Out of date" not in shown


def test_recompute_queues_a_job_and_comes_back_to_the_page(
        researcher_client, owner, queued,  # noqa: F811
        django_capture_on_commit_callbacks):
    campaign = _study(owner)
    url = reverse("admin:campaigns_campaign_statistics", args=[campaign.pk])
    researcher_client.get(url + "?exclude_flagged=1")
    row = StatisticsResult.objects.get(kind="statistics")
    statistics_compute(result_id=row.pk)
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(url + "?exclude_flagged=1")
    assert response.status_code == 302 and response["Location"].endswith("?exclude_flagged=1")
    assert row.pk in queued
    page = researcher_client.get(url + "?exclude_flagged=1").content.decode()
    assert "Recomputing" in page and REFRESH in page


def test_another_researcher_cannot_recompute(other_client, owner):
    campaign = _study(owner)
    url = reverse("admin:campaigns_campaign_statistics", args=[campaign.pk])
    assert other_client.post(url).status_code in (302, 403, 404)
    assert not StatisticsResult.objects.exists()


def test_recompute_also_recomputes_the_side_by_side_table_shown(
        researcher_client, owner, queued,  # noqa: F811
        django_capture_on_commit_callbacks):
    campaign = _study(owner)
    url = reverse("admin:campaigns_campaign_statistics", args=[campaign.pk])
    for _ in range(2):  # the statistics, then the side-by-side table of the first judged item
        with django_capture_on_commit_callbacks(execute=True):
            researcher_client.get(url)
        for pk in queued:
            statistics_compute(result_id=pk)
    assert StatisticsResult.objects.filter(status="done").count() == 2
    queued.clear()
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.post(url)
    assert sorted(queued) == sorted(StatisticsResult.objects.values_list("pk", flat=True))


# The statistics page's section for pairwise preference and best-worst questions.


# (choice, order shown): x beats y 2-1 with a tie, y beats <z> twice, <z> beats x twice.
JUDGED = [("A", ["x", "y"]), ("A", ["y", "x"]), ("B", ["y", "x"]), ("tie", ["x", "y"]),
          ("A", ["y", "<z>"]), ("B", ["<z>", "y"]), ("A", ["<z>", "x"]), ("B", ["x", "<z>"])]


def test_long_tables_are_bounded_keeping_flagged_workers_and_the_item_shown(
        admin_client, owner, monkeypatch):
    """Per-worker tables and the judged items' list show at most PAGE_ROWS rows (here the
    flagged workers and one more) and say where the rest are; flagged workers and the item
    asked for are kept before the others."""
    campaign = _study(owner)
    _page(admin_client, campaign)
    whole = StatisticsResult.objects.get(campaign=campaign, kind="statistics").result
    flagged = set(whole["flagged_workers"])
    assert flagged and len(whole["quality"]) > len(flagged) + 1
    monkeypatch.setattr("campaigns.admin.bounded.PAGE_ROWS", len(flagged) + 1)
    page = _page(admin_client, campaign, item="i3")
    table = page[page.index("Attention failed"):]
    shown = re.findall(r"<tr[^>]*>\s*<td>(.*?)</td>", table[:table.index("</table>")])
    first = next(r["worker"] for r in whole["quality"] if r["worker"] not in flagged)
    assert sorted(shown) == sorted(flagged | {first})
    assert f"{len(whole['quality'])} workers, " in page and "statistics API" in page
    assert 'list="stats-items" value="i3"' in page  # the item asked for is listed
    assert 'option value="i3"' in page
    figure = _cells(page, "Workers: reliability and speed</caption>")
    assert {row[0] for row in figure[1:] if row[-1] == "yes"} == flagged


def _page(client, campaign, **query):
    url = reverse("admin:campaigns_campaign_statistics", args=[campaign.pk])
    response = client.get(url, query)
    assert response.status_code == 200
    return response.content.decode()


def _pairwise(owner):
    campaign = make_campaign(owner=owner, schema=PAIRWISE_SCHEMA)
    for n, (choice, order) in enumerate(JUDGED):
        make_annotation(campaign, item=f"i{n}", system="", platform_id=f"W{n % 3}",
                        answers={"pref": {"choice": choice, "order": order}})
    return campaign


def _cells(page, caption):
    table = page[page.index(caption):]
    table = table[:table.index("</table>")]
    return [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)
            for row in re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)]


def test_a_pairwise_campaign_shows_the_matrix_win_rates_strengths_and_position_bias(
        admin_client, owner):
    page = _page(admin_client, _pairwise(owner))
    assert "Pairwise preference" in page and "pref: 8 judgments" in page
    matrix = _cells(page, "Wins – ties – losses of the row system")
    assert matrix[0] == ["system", "&lt;z&gt;", "x", "y"]  # system names escaped
    assert matrix[2] == ["x", "0 – 0 – 2", "·", "2 – 1 – 1"]
    rates = {row[0]: row[1:] for row in _cells(page, "Win rates over all pairs")[1:]}
    assert rates["y"] == ["3", "1", "2", "6", "0.583"]
    strengths = _cells(page, "Bradley-Terry log-strengths")
    assert strengths[0][:4] == ["Rank", "Rank 95% range", "System", "Strength"]
    assert [row[2] for row in strengths[1:]] == ["y", "&lt;z&gt;", "x"]
    assert all(" to " in row[4] for row in strengths[1:])  # bootstrap intervals
    assert "split as half a win" in page
    # Shown both ways: x-y (4 judgments: first won 2, second 1, a tie) and x-<z> (2: first 1,
    # second 1); y-<z> too (2: first won 1, second 1).
    assert re.search(r"on the 3 pairs shown both ways round, the output shown first won 4 and "
                     r"the second 3 \(1 tie left out\): first-position win rate 0\.571", page)


def test_the_ties_switch_fits_davidsons_model_and_shows_its_parameter(admin_client, owner):
    page = _page(admin_client, _pairwise(owner), ties="davidson")
    assert re.search(r"ties by Davidson's model \(tie parameter ν = 0\.\d{3}\)", page)
    assert '<option value="davidson" selected>' in page
    assert '<input type="hidden" name="ties" value="davidson">' in page  # kept by the other form
    assert "split as half a win" in _page(admin_client, _pairwise(owner), ties="bogus")


def test_a_best_worst_campaign_shows_best_minus_worst_with_intervals(admin_client, owner):
    campaign = make_campaign(owner=owner, schema=BWS_SCHEMA)
    data = {"prompt": "p", "outputs": [{"system": s, "text": s} for s in "pqrs"]}
    for n, (best, worst, order) in enumerate([("A", "D", ["p", "q", "r", "s"]),
                                              ("B", "A", ["r", "p", "s", "q"]),
                                              ("A", "C", ["p", "s", "q", "r"])]):
        make_annotation(campaign, item=f"i{n}", system="", data=data, platform_id=f"W{n}",
                        answers={"bestworst": {"best": best, "worst": worst, "order": order}})
    page = _page(admin_client, campaign)
    assert "Best-worst scaling" in page and "Pairwise preference" not in page
    rows = _cells(page, "bestworst: best-minus-worst score per system (3 answers")
    assert rows[1][:6] == ["1", "p", "3", "0", "3", "1.000"]
    assert rows[1][6] == "1.000 to 1.000"
    assert {row[1]: row[5] for row in rows[2:]} == {"q": "-0.333", "r": "-0.333",
                                                     "s": "-0.333"}


def test_a_rating_campaign_has_no_preference_section(admin_client, owner):
    from tests.factories import RUBRIC_SCHEMA

    page = _page(admin_client, make_campaign(owner=owner, schema=RUBRIC_SCHEMA))
    assert "Pairwise preference" not in page and "Best-worst scaling" not in page


# The admin's evaluation report page: rendered from the escaped Markdown, options checked.


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


# The admin's judgment upload: a big file is stored and imported in the background, and the page
# lists the job's progress and outcome.


def test_a_big_upload_becomes_a_job_listed_with_its_outcome(
        researcher_client, campaign, settings, django_capture_on_commit_callbacks):
    settings.IMPORT_BACKGROUND_BYTES = 1000
    make_items(campaign, 60)
    url = reverse("admin:campaigns_campaign_judgments", args=[campaign.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(url, {
            "file": SimpleUploadedFile("j.csv", _file(60)), "platform": "llm"})
    assert response.status_code == 302 and response["Location"] == url
    job = ImportJob.objects.get()
    assert (job.kind, job.status, job.created) == ("judgments", "done", 60)
    assert Annotation.objects.count() == 60
    page = researcher_client.get(url).content.decode()
    assert "Background imports" in page and "Imported judgments of gpt-4o: 60 new" in page


def test_a_failed_background_upload_lists_its_row_numbered_problems(
        researcher_client, campaign, settings, django_capture_on_commit_callbacks):
    settings.IMPORT_BACKGROUND_BYTES = 1000
    make_items(campaign, 60)
    url = reverse("admin:campaigns_campaign_judgments", args=[campaign.pk])
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.post(url, {"file": SimpleUploadedFile("j.csv", _file(60, bad_row=7)),
                                     "platform": "llm"})
    page = researcher_client.get(url).content.decode()
    assert "Nothing was imported: 1 problem" in page and "row 7" in page
    assert not Annotation.objects.exists()


def test_a_recomputation_that_reused_intervals_says_so_and_offers_a_full_one(admin_client,
                                                                            owner):
    campaign = _study(owner)
    url = reverse("admin:campaigns_campaign_statistics", args=[campaign.pk])
    first = admin_client.get(url).content.decode()
    assert "Recompute in full" in first and "stats-reused" not in first
    admin_client.post(url)  # nothing changed since: the intervals are reused
    page = admin_client.get(url).content.decode()
    assert 'class="stats-reused"' in page and "Intervals and worker reliability from the " \
        "computation over" in page
    admin_client.post(url, {"full": "1"})
    assert "stats-reused" not in admin_client.get(url).content.decode()
