"""Worker quality flags: the quality table of the human raters and the workers it flags."""
from __future__ import annotations

import pandas as pd

from ...analysis import (
    answer_provenance,
    quality,
    reliability,
)
from ...models import Campaign, Item
from ...schema import parse_schema
from ..answer_provenance import provenance_flag_counts
from .frames import _agreement_input, annotations_frame, split_frame


def _quality(humans: pd.DataFrame, campaign: Campaign | None = None) -> pd.DataFrame:
    """Quality checks per worker (with the campaign's speed floors), and the leave-one-out
    correlation (which flags)."""
    rules, humans = speed_rules(humans, campaign)
    named = humans.assign(worker=humans["worker_name"])
    table = quality.worker_quality(named, rules)
    table = reliability.with_loo_flags(table, reliability.loo_correlations(_rated_units(named)))
    if campaign is None:
        return table
    names = dict(zip(humans["worker"], humans["worker_name"], strict=True))
    by_worker = provenance_flag_counts(campaign=campaign, by="worker")
    return answer_provenance.add_to_quality(
        table, "worker", {names[w]: c for w, c in by_worker.items() if w in names})


def _rated_units(named: pd.DataFrame) -> pd.DataFrame:
    """Rated regular-item judgments with `item` set to the unit of agreement (a summary line
    is its own unit) and `worker` to the pseudonym."""
    rated = named[named["rated"] & named["control"].eq("")]
    return _agreement_input(rated).assign(item=lambda f: f["unit"])


def speed_rules(humans: pd.DataFrame, campaign: Campaign | None
                ) -> tuple[quality.QualityRules, pd.DataFrame]:
    """The campaign's speed floors (its per-word floor, else the default reading floor:
    quality.effective_word_floor), and each row's item word count when a floor is per word."""
    if campaign is None:
        return quality.QualityRules(), humans
    word_floor = quality.effective_word_floor(campaign.min_seconds_per_word)
    rules = quality.QualityRules(min_seconds_per_item=campaign.min_seconds_per_item,
                                 min_seconds_per_word=word_floor)
    if word_floor is not None and not humans.empty:
        fields = [d.field for d in parse_schema(campaign.schema).display]
        words = {pk: sum(len(str(data.get(f) or "").split()) for f in fields)
                 for pk, data in Item.objects.filter(campaign=campaign).values_list("pk", "data")}
        humans = humans.assign(words=humans["item"].map(words))
    return rules, humans


def _flagged_names(quality_table: pd.DataFrame) -> set[str]:
    """The pseudonyms (worker_name) of the workers quality control flags."""
    return set(quality_table[quality_table["flagged"].astype(bool)]["worker"])


def flagged_worker_ids(*, campaign: Campaign) -> set[int]:
    """Database ids of the human workers that quality control flags in this campaign."""
    frame = annotations_frame(campaign=campaign)
    humans, _ = split_frame(frame)
    if humans.empty:
        return set()
    flagged_names = _flagged_names(_quality(humans, campaign))
    names = humans.drop_duplicates("worker")
    return {int(w) for w, n in zip(names["worker"], names["worker_name"], strict=True)
            if n in flagged_names}
