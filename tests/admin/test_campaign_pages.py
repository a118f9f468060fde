"""The campaign's own admin pages: the dashboard, the item upload (at once or in the background),
and the preview as a worker."""
import json
import random

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from campaigns.models import Annotation, Assignment, Item, Worker
from campaigns.selectors.dashboard import campaign_dashboard, campaign_progress
from tests.admin.conftest import add_items, items_jsonl
from tests.admin.simulate import simulate
from tests.factories import RUBRIC_SCHEMA, SUMMARY_SCHEMA, TRANSLATION_SCHEMA, make_campaign

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


# The campaign dashboard: figures with data, an empty campaign, and a constant query count.


def dashboard_url(campaign):
    return reverse("admin:campaigns_campaign_dashboard", args=[campaign.pk])


def test_it_renders_progress_and_chart_data_for_a_campaign_with_answers(researcher_client,
                                                                        campaign):
    add_items(campaign, 4)
    simulate(campaign, workers=3)
    simulate(campaign, workers=1, submit=False, prefix="open")
    response = researcher_client.get(dashboard_url(campaign))
    assert response.status_code == 200
    board = response.context["dashboard"]
    assert (board.overall.done, board.overall.wanted) == (4, 12)
    assert board.overall.in_progress == 0 and board.overall.remaining == 8
    assert [p.system for p in board.per_system] == ["sys-a", "sys-b"]
    assert board.workers_total == 4 and board.workers_active == 1
    assert board.annotations == 4 and board.median_seconds is not None
    data = json.loads(json.dumps(response.context["charts"]))  # what json_script sends
    coherence = next(c for c in data["distributions"] if c["question"] == "coherence")
    assert sum(sum(s["data"]) for s in coherence["series"]) == 4
    assert [c["question"] for c in data["distributions"]] == ["coherence", "sentiment"]
    content = response.content.decode()
    assert 'id="dashboard-data"' in content
    assert "vendor/chartjs/chart.umd.min.js" in content
    assert "<script>" not in content  # data through json_script, code in static files


def test_it_renders_a_campaign_without_items_or_answers(researcher_client, campaign):
    response = researcher_client.get(dashboard_url(campaign))
    assert response.status_code == 200
    board = response.context["dashboard"]
    assert board.overall.wanted == 0 and board.median_seconds is None
    assert board.per_day == [] and board.workers_total == 0
    assert "No items yet" in response.content.decode()


def test_the_number_of_queries_does_not_grow_with_the_data(researcher_client, researcher):
    small, large = (make_campaign(owner=researcher) for _ in range(2))
    add_items(small, 2)
    add_items(large, 8)
    simulate(small, workers=1)
    simulate(large, workers=12, rng=random.Random(3))
    counts = []
    for campaign in (small, large):
        with CaptureQueriesContext(connection) as queries:
            assert researcher_client.get(dashboard_url(campaign)).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1], counts


@pytest.mark.parametrize("schema", [SUMMARY_SCHEMA, RUBRIC_SCHEMA, TRANSLATION_SCHEMA],
                         ids=["lines-choice", "rubric", "slider-flags"])
def test_every_scored_question_kind_gets_a_distribution(owner, schema):
    campaign = make_campaign(owner=owner, schema=schema)
    from campaigns.models import Item

    data = {"story": "A. B.", "summary": "One. Two.", "answer": "x", "source": "s",
            "translation": "t"}
    for i in range(3):
        Item.objects.create(campaign=campaign, external_id=f"i{i}", system=f"s{i % 2}",
                            data=data, slots_wanted=3)
    simulate(campaign, workers=3)
    charts = campaign_dashboard(campaign=campaign).charts
    assert charts, "no chart"
    for chart in charts:
        assert set(chart.series) == {"s0", "s1"}
        assert all(len(values) == len(chart.labels) for values in chart.series.values())
    if schema is RUBRIC_SCHEMA:
        assert charts[0].kind == "mean" and charts[0].labels[-1] == "C15"
        totals = charts[1]
        assert totals.question == "rubric.total" and sum(map(sum, totals.series.values())) == 3


def test_progress_is_also_available_on_its_own(owner, campaign):
    add_items(campaign, 2)
    overall, per_system = campaign_progress(campaign=campaign)
    assert overall.wanted == 6 and overall.remaining == 6 and len(per_system) == 2


@pytest.mark.parametrize("schema", [RUBRIC_SCHEMA, TRANSLATION_SCHEMA], ids=["rubric", "slider"])
def test_the_counts_made_by_the_database_match_the_stored_answers(owner, schema):
    from collections import Counter, defaultdict

    from campaigns.models import Annotation, Item

    campaign = make_campaign(owner=owner, schema=schema)
    for i in range(4):
        Item.objects.create(campaign=campaign, external_id=f"i{i}", system=f"s{i % 2}",
                            data={"answer": "x", "source": "s", "translation": "t"},
                            slots_wanted=3)
    simulate(campaign, workers=8, rng=random.Random(11))
    expected = defaultdict(Counter)
    sums = defaultdict(Counter)
    for a in Annotation.objects.filter(campaign=campaign).select_related("item"):
        first = schema["questions"][0]
        value = a.answers[first["id"]]
        if first["kind"] == "rubric":
            sums[a.item.system]["n"] += 1
            for criterion, score in value.items():
                sums[a.item.system][criterion] += score
        else:
            expected[a.item.system][min(int(value // 10), 9)] += 1
    chart = campaign_dashboard(campaign=campaign).charts[0]
    for system, values in chart.series.items():
        if schema is RUBRIC_SCHEMA:
            n = sums[system]["n"]
            assert values == [round(sums[system][f"C{k}"] / n, 2) for k in range(1, 16)]
        else:
            assert values == [expected[system][b] for b in range(10)]


def test_llm_judges_answers_stay_out_of_the_human_figures(owner):
    from tests.analysis.helpers import add_item, annotate

    campaign = make_campaign(owner=owner)
    item = add_item(campaign, "i1", system="A")
    annotate(campaign, "w1", item, {"coherence": 4, "sentiment": 2})
    before = campaign_dashboard(campaign=campaign)
    annotate(campaign, "gpt-4o", item, {"coherence": 1, "sentiment": 5}, platform="llm")
    after = campaign_dashboard(campaign=campaign)
    assert (after.annotations, after.judge_annotations) == (1, 1)
    assert after.per_day == before.per_day
    assert [c.as_json() for c in after.charts] == [c.as_json() for c in before.charts]


# The item upload form: the count imported, or row-numbered errors and nothing stored.


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


# The admin import form hands a big upload to a background job and shows its outcome.


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


# The admin upload form reports unstorable JSON (deep, NaN, huge integers) as a 400.


@pytest.mark.parametrize("completion,message", [
    ("[" * 5000 + "]" * 5000, "nested deeper than 64"),
    ("NaN", "NaN is not a JSON value"),
    ("9" * 5000, "an integer of 5000 digits"),
])
def test_refused_json_is_reported_and_nothing_stored(researcher_client, campaign, completion,
                                                      message):
    content = '{"id": "a1", "prompt": "p", "completion": ' + completion + '}'
    response = upload(researcher_client, campaign, content.encode())
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Item.objects.exists()


# Preview as a worker: the real item page for a chosen item, with nothing recorded.


def preview_url(campaign):
    return reverse("admin:campaigns_campaign_preview", args=[campaign.pk])


def test_the_chooser_lists_items_and_searches_by_id(researcher_client, campaign):
    add_items(campaign, 3)
    response = researcher_client.get(preview_url(campaign), {"q": "item-2"})
    assert response.status_code == 200
    assert [i.external_id for i in response.context["items"]] == ["item-2"]


def test_it_renders_the_worker_item_page_and_records_nothing(researcher_client, campaign):
    add_items(campaign, 2)
    item = campaign.items.first()
    response = researcher_client.get(preview_url(campaign), {"item": item.pk})
    assert response.status_code == 200
    text = response.content.decode()
    assert "nothing you enter here is recorded" in text.lower()
    assert item.data["prompt"] in text
    assert (Worker.objects.count(), Assignment.objects.count(), Annotation.objects.count()) == (
        0, 0, 0)


def test_an_item_of_another_campaign_or_garbage_is_refused_politely(researcher_client,
                                                                     researcher, campaign):
    from tests.factories import make_campaign

    other = make_campaign(owner=researcher)
    add_items(other, 1)
    for value in (str(other.items.get().pk), "abc", "9" * 30):
        response = researcher_client.get(preview_url(campaign), {"item": value}, follow=True)
        assert response.status_code == 200
        assert "This campaign has no item with id" in response.content.decode()


def test_the_dashboard_counts_the_screened_out_by_rule(researcher_client, campaign):
    from django.utils import timezone
    for n, reason in enumerate(["ineligible:adult", "quota:l1", "ineligible:adult"]):
        Worker.objects.create(campaign=campaign, platform="link", platform_id=f"s{n}",
                              screened_out_at=timezone.now(), screened_out_reason=reason)
    assert campaign_dashboard(campaign=campaign).screened_out == {"ineligible:adult": 2,
                                                                  "quota:l1": 1}
    page = researcher_client.get(dashboard_url(campaign)).content.decode()
    assert '<span class="dash-number">3</span> screened out' in page
    assert "2 ineligible:adult; 1 quota:l1" in page
