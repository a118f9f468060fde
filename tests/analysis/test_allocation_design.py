"""campaigns/analysis/allocation_design.py: the analysis frame carries the design each
annotation was handed out under, and the statistics and the report say what the figures
assume, per strategy and with each strategy's share when it changed mid-campaign; the wording
is docs/analysis.md's."""
import re
from pathlib import Path

import pandas as pd
import pytest

from campaigns.analysis.allocation_design import (
    DESIGNS,
    design_assumptions,
    design_note,
    design_periods,
)
from campaigns.analysis.report_cells import _md
from campaigns.exporting.analysis import statistics_tables
from campaigns.models import Annotation, Item
from campaigns.selectors.analysis import annotations_frame, campaign_statistics
from campaigns.selectors.analysis.report import evaluation_report
from campaigns.services.allocation import campaign_allocate
from campaigns.services.campaigns import campaign_update
from campaigns.work import annotation_submit, assignment_claim, worker_get_or_create
from tests.analysis.helpers import annotate
from tests.factories import make_campaign

DOCS = Path(__file__).resolve().parents[2] / "docs" / "analysis.md"


def test_the_report_words_each_design_as_the_docs_table_does():
    rows = {}
    for line in DOCS.read_text().splitlines():
        found = re.match(r"\| `(\w+)` \|", line)
        if found and found.group(1) in DESIGNS:
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            rows[found.group(1)] = cells
    assert set(rows) == set(DESIGNS) - {""}
    for key, cells in rows.items():
        design = DESIGNS[key]
        affects = ", ".join(f"`{t}`" for t in design.affects) or "none"
        assert cells[3:6] == [design.valid, design.biased, affects], key


def test_runs_of_epochs_under_one_strategy_are_one_period_each():
    counts = {("uniform", 0): 4, ("uniform", 1): 2, ("dynamic_redundancy", 2): 3,
              ("dynamic_redundancy", 5): 1, ("uniform", 6): 5, ("", None): 5}
    assert design_periods(counts) == [
        {"allocation": "", "first_epoch": None, "last_epoch": None, "annotations": 5,
         "share": 0.25},
        {"allocation": "uniform", "first_epoch": 0, "last_epoch": 1, "annotations": 6,
         "share": 0.3},
        {"allocation": "dynamic_redundancy", "first_epoch": 2, "last_epoch": 5,
         "annotations": 4, "share": 0.2},
        {"allocation": "uniform", "first_epoch": 6, "last_epoch": 6, "annotations": 5,
         "share": 0.25},
    ]
    strategies = design_assumptions(counts)
    assert [(s["allocation"], s["annotations"], s["adaptive"], s["epochs"])
            for s in strategies] == [("", 5, False, []), ("uniform", 11, False, ["0-1", "6"]),
                                     ("dynamic_redundancy", 4, True, ["2-5"])]
    assert strategies[1]["share"] == pytest.approx(0.55)
    note = design_note(strategies, current="uniform")
    assert note.startswith("The strategy changed during the campaign.")
    assert "Uniform (55% of the annotations, epochs 0-1; 6)" in note
    assert "Dynamic redundancy (20% of the annotations, epochs 2-5)" in note
    assert ("Figures affected: agreement, disagreement, disputed_items, human_ceiling, "
            "system_scores.") in note


def test_a_campaign_without_annotations_states_its_current_strategy():
    note = design_note([], current="adaptive_ranking", changes=1, stopped="Target met.")
    assert note == ("adaptive ranking: the next judgments went to the system pairs whose "
                    "order was least certain. The strategy or target changed 1 time(s) "
                    "during the campaign. The hand-out stopped at its target: Target met.")


def work_once(campaign, name, value):
    worker = worker_get_or_create(campaign=campaign, platform="link", platform_id=name)
    assignment = assignment_claim(campaign=campaign, worker=worker)
    for slot in assignment.slots.order_by("position"):
        annotation_submit(assignment=assignment, position=slot.position,
                          answers={"coherence": value, "sentiment": 3}, seconds_spent=1)


@pytest.mark.django_db
def test_a_switch_to_dynamic_redundancy_mid_campaign_is_in_the_frame_statistics_and_report(
        owner):
    campaign = make_campaign(owner=owner, annotations_per_item=2)
    for n, system in enumerate(["A", "B", "A", "B"]):
        Item.objects.create(campaign=campaign, external_id=f"i{n}", system=system,
                            data={"prompt": "p", "completion": "c"}, slots_wanted=2)
    for n in range(4):
        work_once(campaign, f"u{n}", 1 + n % 5)
    campaign_update(campaign=campaign, allocation="dynamic_redundancy",
                    min_annotations_per_item=2, max_annotations_per_item=4)
    for n in range(6):
        work_once(campaign, f"d{n}", 5 - n % 5)
    campaign_allocate(campaign=campaign)
    # A judgment imported afterwards: its assignment records no design.
    annotate(campaign, "expert", Item.objects.get(external_id="i0"),
             {"coherence": 4, "sentiment": 2}, platform="account")

    # The frame: each row carries its assignment's recorded design (read back by the ORM).
    recorded = {a: (alloc, epoch) for a, alloc, epoch in Annotation.objects.values_list(
        "id", "assignment__allocation", "assignment__allocation_epoch")}
    frame = annotations_frame(campaign=campaign)
    assert str(frame["allocation"].dtype) == "category"
    seen = {a: (str(alloc), None if pd.isna(epoch) else int(epoch))
            for a, alloc, epoch in frame[["annotation", "allocation", "allocation_epoch"]]
            .itertuples(index=False)}
    assert seen == recorded
    assert {alloc for alloc, _ in recorded.values()} == {"", "uniform", "dynamic_redundancy"}

    # The statistics: per strategy, its share of the annotations and its periods.
    statistics = campaign_statistics(campaign=campaign, n_boot=0)
    design = statistics["allocation_design"]
    counted = {}
    for alloc, _ in recorded.values():
        counted[alloc] = counted.get(alloc, 0) + 1
    assert {d["allocation"]: d["annotations"] for d in design} == counted
    assert [d["allocation"] for d in design] == ["", "uniform", "dynamic_redundancy"]
    assert sum(d["share"] for d in design) == pytest.approx(1.0)
    redundancy = design[2]
    assert redundancy["adaptive"] and "agreement" in redundancy["affects"]
    first = min(e for a, e in recorded.values() if a == "dynamic_redundancy")
    last = max(e for a, e in recorded.values() if a == "dynamic_redundancy")
    assert redundancy["epochs"] == [f"{first}-{last}" if first != last else str(first)]
    assert [(p["allocation"], p["annotations"]) for p in statistics["allocation_periods"]] == [
        (d["allocation"], d["annotations"]) for d in design]
    assert statistics_tables(statistics)["allocation_periods"] == statistics[
        "allocation_periods"]

    # The report: the same shares, what stays valid, what is biased, the figures affected.
    built = evaluation_report(campaign=campaign)
    line = built["design"]["allocation"]
    assert f"- Allocation: {_md(line)}" in built["markdown"].splitlines()
    assert built["design"]["allocation_design"] == design
    total = len(recorded)
    assert line.startswith("The strategy changed during the campaign. Not recorded "
                           f"({counted[''] / total:.0%} of the annotations): imported")
    assert f"Uniform ({counted['uniform'] / total:.0%} of the annotations, epochs" in line
    assert (f"Dynamic redundancy ({counted['dynamic_redundancy'] / total:.0%} of the "
            "annotations, epochs") in line
    assert "Biased: per-item agreement and inter-rater reliability, towards disagreement" in line
    assert "Figures affected: agreement, disagreement, disputed_items" in line
    assert "The strategy or target changed 1 time(s)" in line
