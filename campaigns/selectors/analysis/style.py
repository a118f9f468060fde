"""Style-adjusted Bradley-Terry (analysis/preference_style.py) of a pairwise question: the
style counts of the outputs each judgment showed, read from the items' stored outputs."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...analysis import N_BOOT, preference_style
from ...models import Campaign, Item
from ...schema.conversations import shared_turns
from ...schema.outputs import OUTPUTS, output_text
from .frames import records


def _shown_texts(outputs: list) -> dict[str, str]:
    """system -> the text a worker compares: an output's text, or the assistant turns of its
    conversation after those every output shares (the context shown once above them)."""
    outputs = [o for o in outputs if isinstance(o, dict) and "system" in o]
    conversations = [o.get("messages") for o in outputs]
    if outputs and all(isinstance(c, list) for c in conversations):
        shared = shared_turns(conversations)
        return {str(o["system"]): "\n\n".join(
            str(t.get("content") or "") for t in o["messages"][shared:]
            if isinstance(t, dict) and t.get("role") == "assistant") for o in outputs}
    return {str(o["system"]): output_text(o) for o in outputs}


def output_style_counts(*, campaign: Campaign, items) -> dict[tuple, tuple[int, ...]]:
    """(item id, system) -> style_counts of that output, for the given item ids."""
    counts = {}
    rows = (Item.objects.filter(campaign=campaign, id__in=list(items)).order_by()
            .values_list("id", f"data__{OUTPUTS}"))
    for item, outputs in rows.iterator():
        for system, text in _shown_texts(outputs if isinstance(outputs, list) else []).items():
            counts[item, system] = preference_style.style_counts(text)
    return counts


def style_statistics(*, campaign: Campaign, frame: pd.DataFrame,
                     n_boot: int = N_BOOT) -> dict:
    """The style-adjusted strengths of one question's preference frame as JSON-ready data:
    `bradley_terry_style` (per system), `style_effects` (per term), `style_dropped`."""
    if frame.empty:
        fitted = preference_style.bradley_terry_style(frame, np.empty((0, 4)),
                                                      np.empty((0, 4)), n_boot=0)
    else:
        counts = output_style_counts(campaign=campaign, items=frame["item"].unique())
        blank = (0,) * len(preference_style.STYLE_FEATURES)
        first = np.array([counts.get(key, blank) for key in zip(
            frame["item"], frame["first"].astype(str), strict=True)])
        second = np.array([counts.get(key, blank) for key in zip(
            frame["item"], frame["second"].astype(str), strict=True)])
        fitted = preference_style.bradley_terry_style(frame, first, second, n_boot=n_boot)
    return {"bradley_terry_style": records(fitted["table"]),
            "style_effects": records(fitted["effects"]), "style_dropped": fitted["dropped"]}
