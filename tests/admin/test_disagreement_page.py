"""The statistics page's disagreement section and the pairwise style-control table."""
import pytest
from django.urls import reverse

from tests.selectors.test_disagreement import _campaign as story_campaign
from tests.selectors.test_style import hh_campaign
from tests.services.test_statistics import queued  # noqa: F401 - the fixture

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager", "few_resamples")]


def test_the_page_shows_disagreement_and_the_most_disputed_stories(admin_client, owner):
    campaign, expected = story_campaign(owner)
    url = reverse("admin:campaigns_campaign_statistics", args=[campaign.pk])
    page = admin_client.get(url).content.decode()
    assert "Disagreement between raters" in page and "Most disputed items" in page
    section = page.split('class="stats-table stats-disputed"', 1)[1].split("</table>", 1)[0]
    first_row = section.split("<tbody>", 1)[1].split("</tr>", 1)[0]
    story = next(k for k in expected if f"<td>{k}</td>" in first_row)
    counts = {}
    for v in expected[story]:
        counts[str(v)] = counts.get(str(v), 0) + 1
    assert len(counts) == 3  # the most disputed story: three raters, three different labels


def test_the_style_option_adds_the_style_adjusted_table_with_elo(admin_client, owner):
    campaign, *_ = hh_campaign(owner)
    url = reverse("admin:campaigns_campaign_statistics", args=[campaign.pk])
    plain = admin_client.get(url).content.decode()
    assert "stats-bt-position" in plain and "stats-bt-style" not in plain
    styled = admin_client.get(url, {"style": "1"}).content.decode()
    assert "Style control: Bradley-Terry" in styled and "stats-bt-style" in styled
    assert 'name="style" value="1" checked' in styled
    table = styled.split('class="stats-table stats-bt-style"', 1)[1].split("</table>", 1)[0]
    assert table.count("<tr>") == 4  # the header and the three systems
