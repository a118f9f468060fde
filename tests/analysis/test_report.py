"""The evaluation report: the page, the Markdown and JSON exports agree with the statistics."""
import json

import pytest
from django.core.files.storage import storages

from campaigns.analysis.report import report_markdown
from campaigns.selectors.analysis import campaign_statistics, evaluation_report
from campaigns.services.exports import export_job_create, export_job_run
from tests.analysis.helpers import add_item, annotate
from tests.exports.test_analysis import Z, best_worst_campaign, pairwise_campaign
from tests.factories import make_campaign

pytestmark = pytest.mark.django_db

LIKERT = {"display": [{"field": "prompt"}],
          "questions": [{"id": "q", "kind": "likert", "text": "Good?",
                         "points": [{"value": v, "label": str(v)} for v in range(1, 6)]}]}


@pytest.fixture
def export_storage(settings, tmp_path):
    settings.STORAGES = {**settings.STORAGES, "exports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path)}}}


def _campaign(owner):
    campaign = make_campaign(owner=owner, schema=LIKERT)
    for n in range(24):
        system = "<b>A|x</b>" if n % 2 else "B"
        item = add_item(campaign, f"i{n}", system=system)
        for k, worker in enumerate(("w1", "w2", "w3")):
            annotate(campaign, worker, item, {"q": 1 + (n + k + (2 if n % 2 else 0)) % 5})
    annotate(campaign, "gpt", item, {"q": 3}, platform="llm")
    return campaign


def test_the_report_lays_out_design_agreement_results_comparisons_and_planning(owner):
    campaign = _campaign(owner)
    built = evaluation_report(campaign=campaign, n_boot=100)
    statistics = campaign_statistics(campaign=campaign, n_boot=100)
    design = built["design"]
    assert (design["items"], design["systems"], design["raters"]) == (24, 2, 3)
    assert design["judges"] == ["gpt"]
    assert built["agreement"] == statistics["agreement"]
    assert [r["mean"] for r in built["systems"]] == [r["mean"] for r in statistics[
        "system_scores"]]
    assert built["comparisons"]["n"] == len(statistics["comparisons"])
    (plan,) = built["planning"]
    assert plan["question"] == "q" and plan["items_per_system"] == 12
    text = built["markdown"]
    for heading in ("## Design", "## Design warnings", "## Agreement", "## Results per system",
                    "## Comparisons", "## Quality control", "## Judge alignment",
                    "## Planning"):
        assert heading in text
    # A system name with Markdown and HTML in it is escaped, never markup.
    assert "<b>" not in text and r"\<b\>A\|x\</b\>" in text
    assert report_markdown({k: v for k, v in built.items() if k != "markdown"}) == text


def test_the_markdown_and_json_exports_carry_the_report(owner, export_storage):
    campaign = _campaign(owner)
    job = export_job_create(campaign=campaign, requested_by=owner, fmt="analysis-md",
                            enqueue=False)
    export_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "done" and job.file.endswith(".md")
    with storages["exports"].open(job.file, "rb") as handle:
        assert handle.read().decode().startswith("# Evaluation report: ")
    job = export_job_create(campaign=campaign, requested_by=owner, fmt="analysis-json",
                            enqueue=False)
    export_job_run(job_id=job.pk)
    job.refresh_from_db()
    with storages["exports"].open(job.file, "rb") as handle:
        document = json.loads(handle.read())
    assert document["report"]["design"]["items"] == 24
    assert document["comparisons"] == document["pairwise"]


def _between(text: str, start: str, end: str = "\n## ") -> str:
    section = text[text.index(start):]
    return section[:section.index(end, len(start))] if end in section[len(start):] else section


def test_the_report_has_a_pairwise_preference_section_with_the_statistics_numbers(owner):
    campaign = pairwise_campaign(owner)
    statistics = campaign_statistics(campaign=campaign, n_boot=200)
    built = evaluation_report(campaign=campaign, statistics=statistics)
    assert built["pairwise_preference"] == statistics["pairwise_preference"]
    [entry] = statistics["pairwise_preference"]
    text = built["markdown"]
    section = _between(text, "## Pairwise preference: preference (8 judgment(s))")
    z = r"\<b\>z\|w\</b\>"  # the system name escaped: never markup, never a table column
    assert "<b>" not in text and "| " + z + " | x | 2 | 0 | 0 | 2 | 1.000 |" in section
    assert "| x | y | 2 | 1 | 1 | 4 | 0.625 |" in section
    # Win rates (ties as half): y 3 wins, 1 tie, 2 losses of 6.
    assert "| y | 3 | 1 | 2 | 6 | 0.583 |" in section
    assert "| x | 2 | 1 | 3 | 6 | 0.417 |" in section
    # Resamples without a finite fit (a system never beaten in it) are left out.
    used = entry["bradley_terry"][0]["n_boot_used"]
    assert 100 < used <= 200
    assert (f"ties split as half a win for each side; 95% intervals from {used} "
            "item-bootstrap resamples:") in section
    for r in entry["bradley_terry"]:
        name = z if r["system"] == Z else r["system"]
        assert (f"| {r['rank']} | {r['rank_low']}-{r['rank_high']} | {name} | "
                f"{r['strength']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}] | {r['n']} |"
                in section), r
    b = entry["position_bias"]
    assert ("Position bias: on the 3 pair(s) shown both ways round, the output shown first won "
            "4 and the second 3 (1 tie(s) left out): first-position win rate 0.571 (95% Wilson "
            f"CI [{b['ci_low']:.3f}, {b['ci_high']:.3f}]; exact binomial test against one half, "
            f"p = {b['p_value']:.4f}).") in section
    assert "## Best-worst" not in text
    assert text.index("## Comparisons") < text.index("## Pairwise preference") < text.index(
        "## Quality control")


def test_the_report_names_davidsons_tie_parameter_when_asked(owner):
    built = evaluation_report(campaign=pairwise_campaign(owner), n_boot=50, ties="davidson")
    [entry] = built["pairwise_preference"]
    assert entry["ties"] == "davidson" and entry["tie_parameter"] > 0
    assert (f"ties by Davidson's model (tie parameter nu = {entry['tie_parameter']:.3f})"
            in built["markdown"])


def test_the_report_has_a_best_worst_section_with_the_scores_and_intervals(owner):
    campaign = best_worst_campaign(owner)
    statistics = campaign_statistics(campaign=campaign, n_boot=200)
    built = evaluation_report(campaign=campaign, statistics=statistics)
    assert built["best_worst"] == statistics["best_worst"]
    text = built["markdown"]
    section = _between(text, "## Best-worst: bestworst (3 answer(s))")
    assert "<i>" not in text and r"| 1 | \<i\>p\</i\> | 3 | 0 | 3 | 1.000 [1.000, 1.000]† |" \
        in section
    for r in statistics["best_worst"][0]["scores"][1:]:
        assert (f"| 2 | {r['system']} | 0 | 1 | 3 | -0.333 [{r['ci_low']:.3f}, "
                f"{r['ci_high']:.3f}] |") in section
    assert "## Pairwise preference" not in text


def test_a_pairwise_campaign_without_answers_says_so(owner):
    from tests.factories import PAIRWISE_SCHEMA

    text = evaluation_report(campaign=make_campaign(owner=owner, schema=PAIRWISE_SCHEMA),
                             n_boot=10)["markdown"]
    assert "## Pairwise preference: preference (0 judgment(s))\n\nNo judgments yet." in text


def test_a_degenerate_interval_is_marked_and_explained():
    from campaigns.analysis.report import DEGENERATE_MARK, _interval, with_notes

    flat = _interval({"ci_low": 0.0, "ci_high": 0.0})
    assert flat == "[0.000, 0.000]" + DEGENERATE_MARK
    assert _interval({"ci_low": 0.1, "ci_high": 0.2}) == "[0.100, 0.200]"
    assert "no evidence of certainty" in with_notes(f"| kappa | {flat} |\n")
    assert with_notes("| kappa | [0.100, 0.200] |\n") == "| kappa | [0.100, 0.200] |\n"
