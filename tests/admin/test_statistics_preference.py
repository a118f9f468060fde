"""The statistics page's section for pairwise preference and best-worst questions."""
import re

import pytest
from django.urls import reverse

from tests.exports.conftest import make_annotation
from tests.factories import BWS_SCHEMA, make_campaign
from tests.schema.test_pairwise import SCHEMA as PAIRWISE_SCHEMA

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]

# (choice, order shown): x beats y 2-1 with a tie, y beats <z> twice, <z> beats x twice.
JUDGED = [("A", ["x", "y"]), ("A", ["y", "x"]), ("B", ["y", "x"]), ("tie", ["x", "y"]),
          ("A", ["y", "<z>"]), ("B", ["<z>", "y"]), ("A", ["<z>", "x"]), ("B", ["x", "<z>"])]


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
