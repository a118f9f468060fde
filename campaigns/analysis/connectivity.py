"""How raters connect systems: whether per-rater normalisations can compare systems at all.

A per-rater normalisation (WMT z-scores, an MQM rater's z, any per-worker centring) removes
each rater's leniency by comparing the rater with themself. Two systems are compared on it only
through raters who rated both, directly or through a chain of shared raters. A rater who saw
one system centres that system's scores on 0 whatever its quality. When most of a system's
ratings come from such raters, the system's normalised mean says more about its raters than
about it, and one crossover rating is enough to switch off a yes/no "nested" test while leaving
the confound in place.

So the measure is graded. Per (question, part) with two or more systems:

- `share_crossed`: the share of all ratings given by raters who rated two or more systems;
- `min_system_share_crossed`: the same share within each system's ratings, at its lowest;
- `min_shared_raters`: per system, the raters who rated it and another system, at the lowest;
- `components`: connected components of the graph whose nodes are systems and where a rater
  who rated two systems joins them (one component: every pair is linked by a chain of raters).

`adequate` holds when the graph is one component, every system has at least
MIN_SYSTEM_SHARE_CROSSED of its ratings from crossed raters and at least MIN_SHARED_RATERS such
raters (or all its raters, when it has fewer: one rater who rated everything is comparable with
themself). Below that, normalised comparisons are off and raw means are shown with a caveat
(comparisons.design_checks). The thresholds follow the reasoning of WMT's own design
(Kocmi et al. 2022, "Findings of WMT22", human evaluation: raters see several systems per
document) rather than an estimate: half of a system's ratings from crossed raters keeps the
leniency confound to at most half its ratings, and two shared raters keep one rater's
leniency from being the only link.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

MIN_SYSTEM_SHARE_CROSSED = 0.5
MIN_SHARED_RATERS = 2

FIELDS = ["systems", "raters", "crossed_raters", "share_crossed", "min_system_share_crossed",
          "weakest_system", "min_shared_raters", "components", "adequate"]


def rater_connectivity(frame: pd.DataFrame) -> dict:
    """The connectivity figures (FIELDS) of one set of ratings with columns system, worker;
    with fewer than two systems there is nothing to connect and `adequate` is True."""
    counts = frame.groupby(["worker", "system"], sort=True).size()
    systems = sorted(frame["system"].dropna().unique().tolist())
    per_worker = counts.groupby(level="worker").size()
    crossed = set(per_worker[per_worker >= 2].index)
    out = {"systems": len(systems), "raters": int(len(per_worker)),
           "crossed_raters": len(crossed)}
    if len(systems) < 2:
        return {**out, "share_crossed": None, "min_system_share_crossed": None,
                "weakest_system": None, "min_shared_raters": None, "components": len(systems),
                "adequate": True}
    table = counts.reset_index(name="n")
    table["crossed"] = table["worker"].isin(crossed)
    by_system = table.groupby("system").apply(
        lambda g: pd.Series({"share": g.loc[g["crossed"], "n"].sum() / g["n"].sum(),
                             "shared": int(g["crossed"].sum()),
                             "short": int(g["crossed"].sum()) < min(MIN_SHARED_RATERS, len(g))}),
        include_groups=False)
    share = float(table.loc[table["crossed"], "n"].sum() / table["n"].sum())
    weakest = by_system["share"].idxmin()
    components = _components(table[table["crossed"]], systems)
    min_share = float(by_system["share"].min())
    min_shared = int(by_system["shared"].min())
    adequate = (components == 1 and min_share >= MIN_SYSTEM_SHARE_CROSSED
                and not by_system["short"].any())
    return {**out, "share_crossed": share, "min_system_share_crossed": min_share,
            "weakest_system": weakest, "min_shared_raters": min_shared,
            "components": components, "adequate": bool(adequate)}


def _components(crossed: pd.DataFrame, systems: list) -> int:
    """Connected components of systems joined by raters who rated several of them (a bipartite
    rater-system graph, counted on its system nodes)."""
    index = {s: k for k, s in enumerate(systems)}
    workers = {w: len(systems) + k for k, w in enumerate(sorted(crossed["worker"].unique()))}
    size = len(systems) + len(workers)
    rows = crossed["system"].map(index).to_numpy(dtype=int)
    cols = crossed["worker"].map(workers).to_numpy(dtype=int)
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(size, size))
    _, labels = connected_components(graph, directed=False)
    return int(len(np.unique(labels[:len(systems)])))


def connectivity_table(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """`rater_connectivity` per group of `keys` (e.g. question and part)."""
    rows = [{**dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)),
             **rater_connectivity(group)}
            for key, group in frame.groupby(keys, sort=True)]
    return pd.DataFrame(rows, columns=[*keys, *FIELDS])


def describe(label: str, figures: dict) -> str:
    """One sentence naming what is too weak, for a design warning."""
    return (f"{label}: raters connect the systems weakly ({figures['crossed_raters']} of "
            f"{figures['raters']} raters rated more than one system; "
            f"{figures['min_system_share_crossed']:.0%} of {figures['weakest_system']}'s "
            f"ratings come from them, fewest shared raters per system "
            f"{figures['min_shared_raters']}, {figures['components']} connected "
            f"component(s); needed: one component, at least "
            f"{MIN_SYSTEM_SHARE_CROSSED:.0%} and {MIN_SHARED_RATERS} per system).")
