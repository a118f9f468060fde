"""What the figures assume about the allocation design: which share of the annotations was
handed out under which strategy (and over which priority epochs), and, per adaptive strategy,
what stays valid, what it biases and which of the statistics' tables that touches.

The wording is docs/analysis.md's "Adaptive designs" table (tests/analysis/
test_allocation_design.py holds the two equal), so the report says what the docs say.
Pure functions over per-annotation (allocation, epoch) counts from the analysis frame.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

NOT_RECORDED = ""  # assignments that recorded no design: imported judgments


@dataclass(frozen=True)
class Design:
    """One strategy as the analysis sees it."""

    label: str
    did: str  # what it did with the budget, in a few words
    valid: str  # what stays valid (the docs' "what stays valid")
    biased: str  # what it biases (the docs' "what it biases")
    affects: tuple[str, ...] = ()  # the statistics' tables whose figures it biases

    @property
    def adaptive(self) -> bool:
        return bool(self.affects)


DESIGNS = {
    NOT_RECORDED: Design(
        "not recorded", "imported or handed out before the design was recorded",
        "", ""),
    "uniform": Design(
        "uniform", "every item was handed out for the same number of annotations, "
        "least-filled first", "everything", "nothing"),
    "dynamic_redundancy": Design(
        "dynamic redundancy", "items whose raters agreed early stopped at the minimum, the "
        "others got more, and an audit sample went on to the maximum to check that agreement "
        "settles items",
        "per-item means and majority labels (each item's own answers are an unselected "
        "sample of raters)",
        "per-item agreement and inter-rater reliability, towards disagreement (items that "
        "disagreed got more raters, so alpha is computed on a sample enriched in hard "
        "items); rating-weighted system means over-weight contested items (average per item "
        "first, as the ranking does); an item closed at the minimum has the mean of its first "
        "raters only, so where agreement does not settle items an order of items by their "
        "means is noisier than uniform allocation's with the same budget (the audit checks "
        "this and, when it fails, hands out as uniform allocation does)",
        ("agreement", "disagreement", "disputed_items", "human_ceiling", "system_scores")),
    "adaptive_ranking": Design(
        "adaptive ranking", "the next judgments went to the system pairs whose order was "
        "least certain",
        "Bradley-Terry strengths and their likelihood-based intervals: the pair chosen next "
        "depends only on outcomes already seen, so the likelihood of the data is the same as "
        "under a fixed design (the design is ignorable for likelihood inference); "
        "position-bias estimates (the order shown is still random per assignment)",
        "raw win rates per pair (pairs got different numbers of judgments, chosen by earlier "
        "outcomes); the item bootstrap resamples as if the design were fixed, so its "
        "intervals are approximate",
        ("pairwise_preference",)),
    "adaptive_precision": Design(
        "adaptive precision", "items of the systems with the widest intervals got more "
        "ratings",
        "per-system means and intervals (within a system, which items are rated is still "
        "least-filled first)",
        "ratings per system are an outcome, not a design constant: compare systems by their "
        "intervals, not their counts; the per-rating t interval of the stopping rule ignores "
        "clustering of ratings within items",
        ("system_scores",)),
}


def _design(allocation: str) -> Design:
    return DESIGNS.get(allocation) or Design(allocation, "", "", "")


def design_periods(counts: Mapping[tuple[str, int | None], int]) -> list[dict]:
    """Annotations per design period: consecutive priority epochs under one strategy make one
    period. `counts` maps (allocation, epoch) to annotations; rows of allocation,
    first_epoch, last_epoch, annotations and share, in epoch order (unrecorded epochs
    first)."""
    total = sum(counts.values())
    periods: list[dict] = []
    order = sorted(counts, key=lambda k: (k[1] is not None, k[1] or 0, k[0]))
    for allocation, epoch in order:
        last = periods[-1] if periods else None
        if last and last["allocation"] == allocation and (epoch is None) == (
                last["last_epoch"] is None):
            last["last_epoch"] = epoch
            last["annotations"] += counts[(allocation, epoch)]
        else:
            periods.append({"allocation": allocation, "first_epoch": epoch, "last_epoch": epoch,
                            "annotations": counts[(allocation, epoch)]})
    for period in periods:
        period["share"] = period["annotations"] / total if total else 0.0
    return periods


def design_assumptions(counts: Mapping[tuple[str, int | None], int]) -> list[dict]:
    """Per strategy the annotations were handed out under (first used first): its share of
    the annotations, the epochs of its periods ("2-5"), whether it is adaptive, what stays
    valid, what it biases and the statistics' tables it affects. Flat rows (lists of
    strings at most), as every statistics table."""
    periods = design_periods(counts)
    out: dict[str, dict] = {}
    for period in periods:
        design = _design(period["allocation"])
        row = out.setdefault(period["allocation"], {
            "allocation": period["allocation"], "label": design.label, "annotations": 0,
            "share": 0.0, "epochs": [], "adaptive": design.adaptive, "did": design.did,
            "valid": design.valid, "biased": design.biased, "affects": list(design.affects)})
        row["annotations"] += period["annotations"]
        row["share"] += period["share"]
        if period["first_epoch"] is not None:
            row["epochs"].append(_epochs(period))
    return list(out.values())


def period_rows(periods: list[dict]) -> list[dict]:
    """design_periods' rows as a page lists them: each with its strategy's label and its
    epochs ("2-5"; "" for annotations that recorded none)."""
    return [{**p, "label": _design(p["allocation"]).label,
             "epochs": "" if p["first_epoch"] is None else _epochs(p)} for p in periods]


def design_note(assumptions: list[dict], *, current: str, changes: int = 0,
                stopped: str = "", audit: str = "") -> str:
    """The report's paragraph on the allocation design: per strategy the annotations came
    from, with its share when there were several, what it did, what stays valid, what it
    biases and the figures that touches. With no annotations yet, the current strategy's."""
    if not assumptions:
        assumptions = [{"label": _design(current).label, "did": _design(current).did,
                        "share": 1.0, "epochs": [], "valid": "", "biased": "",
                        "affects": [], "adaptive": False}]
    several = len(assumptions) > 1
    parts = []
    for row in assumptions:
        head = row["label"]
        if several:  # sentences after "The strategy changed ...": capitalised
            head = f"{head[:1].upper()}{head[1:]} ({_share(row)})"
        sentence = f"{head}: {row['did']}." if row["did"] else f"{head}."
        if row["adaptive"]:
            sentence += (f" Stays valid: {row['valid']}. Biased: {row['biased']}. Figures "
                         f"affected: {', '.join(row['affects'])}.")
        parts.append(sentence)
    note = " ".join(parts)
    if several:
        note = "The strategy changed during the campaign. " + note
    if changes:
        note += f" The strategy or target changed {changes} time(s) during the campaign."
    if stopped:
        note += f" The hand-out stopped at its target: {stopped}"
    if audit:
        note += f" {audit}"
    return note


def _share(row: dict) -> str:
    where = f", epochs {'; '.join(row['epochs'])}" if row["epochs"] else ""
    return f"{row['share']:.0%} of the annotations{where}"


def _epochs(period: dict) -> str:
    first, last = period["first_epoch"], period["last_epoch"]
    return str(first) if first == last else f"{first}-{last}"
