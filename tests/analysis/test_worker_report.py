"""Worker models, system-level intervals and the human ceiling on the statistics page and in
the report, beside the figures they qualify."""
import re

import pytest
from django.urls import reverse

from campaigns.selectors.analysis import evaluation_report
from tests.analysis.test_report import _campaign

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


def test_the_report_shows_both_worker_models_with_intervals_and_the_ceiling_used(owner):
    campaign = _campaign(owner)  # 3 workers x 24 items of a 1-5 scale, one judged item
    text = evaluation_report(campaign=campaign, n_boot=40)["markdown"]
    assert "| Worker | Labels | Dawid-Skene | MACE competence |" in text
    rows = [line for line in text.splitlines() if re.match(r"\| w\d+ \| 24 \|", line)
            or re.match(r"\| \S+ \| 24 \| \d\.\d{3} \[", line)]
    assert len(rows) == 3 and all(row.count("[") == 2 for row in rows)
    assert "System Pearson [95% CI, items resampled within systems]" in text
    assert "Human ceiling per part:" in text
    assert "- q: each human against the other humans' consensus" in text


def test_the_statistics_page_shows_the_models_the_minimum_and_the_ceiling(admin_client, owner):
    campaign = _campaign(owner)
    page = admin_client.get(reverse("admin:campaigns_campaign_statistics",
                                    args=[campaign.pk])).content.decode()
    assert "Worker reliability (categorical parts)" in page
    assert "fewer than 20 labels gets no figure" in page
    assert page.count("<td>MACE</td>") == 3 and page.count("<td>Dawid-Skene</td>") == 3
    assert "The ceiling each part&#x27;s design allows" in page \
        or "The ceiling each part's design allows" in page
    assert "each human against the others (table below)" in page


def test_a_zero_width_alignment_interval_is_marked_and_explained_on_the_page():
    from django.template.loader import render_to_string

    from campaigns.admin.statistics import _alignment

    flat = {"judge": "j", "question": "q", "part": "", "n": 12, "exact": 1.0,
            "exact_ci_low": 1.0, "exact_ci_high": 1.0, "alpha": 0.4, "alpha_ci_low": 0.1,
            "alpha_ci_high": 0.6}
    varied = {**flat, "judge": "k", "exact": 0.5, "exact_ci_low": 0.3, "exact_ci_high": 0.7}
    rows = _alignment([flat, varied])
    assert rows[0]["degenerate"] and not rows[1]["degenerate"]
    html = render_to_string("admin/campaigns/_alignment_table.html",
                            {"rows": rows, "who": "Judge"})
    assert html.count("1.00 to 1.00 †") == 1 and "0.30 to 0.70 †" not in html
    assert html.count("no evidence of certainty") == 1
