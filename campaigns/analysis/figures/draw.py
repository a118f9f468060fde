"""Drawing a plan's `values` (plans.py): one function per kind, each given only what the plan
records, so that what is drawn is what the side record says."""
from __future__ import annotations

import math

import numpy as np

from .style import FLAGGED, HEATMAP, NEUTRAL, PALETTE, ROW_HEIGHT, new_figure


def _finite(value) -> bool:
    return value is not None and math.isfinite(value)


def _short(text: str, limit: int = 26) -> str:
    """A tick label short enough to leave the plot its width (the table has it whole)."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def forest(values: dict):
    """Dot and 95% interval per row, first row on top; rows of one significance group share a
    colour and a marker."""
    n = len(values["labels"])
    figure = new_figure(0.5 + ROW_HEIGHT * n)
    ax = figure.add_subplot()
    groups = values.get("groups") or [None] * n
    markers = "osD^v<>p"
    seen = set()
    for i, (est, low, high, group) in enumerate(zip(
            values["estimate"], values["low"], values["high"], groups, strict=True)):
        y = n - 1 - i
        colour = PALETTE[(group - 1) % len(PALETTE)] if group else PALETTE[0]
        marker = markers[(group - 1) % len(markers)] if group else "o"
        label = f"group {group}" if group and group not in seen else None
        seen.add(group)
        if _finite(low) and _finite(high):
            ax.plot([low, high], [y, y], color=colour, linewidth=1.2, solid_capstyle="butt")
        ax.plot([est], [y], marker=marker, color=colour, markersize=4, linestyle="",
                label=label)
    ax.set_yticks(range(n), [_short(t) for t in reversed(values["labels"])])
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel(values["xlabel"])
    ax.grid(axis="x", color="#dddddd", linewidth=0.5)
    ax.set_axisbelow(True)
    for i, note in enumerate(values.get("notes") or []):
        ax.annotate(note, (1.0, n - 1 - i), xycoords=("axes fraction", "data"),
                    xytext=(3, 0), textcoords="offset points", va="center", fontsize=6,
                    color=NEUTRAL)
    if len(seen - {None}) > 1:
        ax.legend(title="significance group", loc="best", frameon=False)
    return figure


def heatmap(values: dict):
    matrix = np.array([[np.nan if v is None else v for v in row] for row in values["matrix"]],
                      dtype=float)
    n_rows, n_cols = matrix.shape
    figure = new_figure(0.8 + 0.32 * n_rows)
    ax = figure.add_subplot()
    image = ax.imshow(matrix, cmap=HEATMAP, vmin=values.get("vmin"), vmax=values.get("vmax"),
                      aspect="auto")
    finite = matrix[np.isfinite(matrix)]
    middle = (finite.min() + finite.max()) / 2 if finite.size else 0
    for i in range(n_rows):
        for j in range(n_cols):
            text = values["text"][i][j]
            if text:
                dark = np.isfinite(matrix[i, j]) and matrix[i, j] < middle
                ax.text(j, i, text, ha="center", va="center", fontsize=5.5,
                        color="white" if dark else "black")
    ax.set_xticks(range(n_cols), [_short(t, 16) for t in values["columns"]], rotation=30,
                  ha="right")
    ax.set_yticks(range(n_rows), [_short(t, 16) for t in values["rows"]])
    if values.get("xlabel"):
        ax.set_xlabel(values["xlabel"])
    if values.get("ylabel"):
        ax.set_ylabel(values["ylabel"])
    figure.colorbar(image, ax=ax, label=values.get("colorbar", ""), shrink=0.8)
    return figure


def stacked(values: dict):
    n = len(values["labels"])
    figure = new_figure(0.8 + ROW_HEIGHT * n + 0.1 * len(values["series"]))
    ax = figure.add_subplot()
    left = np.zeros(n)
    y = np.arange(n)[::-1]
    for k, series in enumerate(values["series"]):
        counts = np.array(series["counts"], dtype=float)
        ax.barh(y, counts, left=left, color=PALETTE[k % len(PALETTE)], label=series["name"],
                height=0.7, hatch=None if k < len(PALETTE) else "//")
        left += counts
    ax.set_yticks(y, [_short(t) for t in values["labels"]])
    ax.set_xlabel(values["xlabel"])
    figure.legend(loc="outside lower center", ncols=2, frameon=False)
    return figure


def scatter(values: dict):
    figure = new_figure(2.6)  # square enough for a scatter
    ax = figure.add_subplot()
    ax.plot(values["x"], values["y"], "o", color=PALETTE[0], markersize=4)
    for x, y, label in zip(values["x"], values["y"], values["labels"], strict=True):
        ax.annotate(label, (x, y), xytext=(3, 2), textcoords="offset points", fontsize=5.5)
    low = min(min(values["x"]), min(values["y"]))
    high = max(max(values["x"]), max(values["y"]))
    ax.plot([low, high], [low, high], color="#bbbbbb", linewidth=0.6, linestyle="--")
    ax.set_xlabel(values["xlabel"])
    ax.set_ylabel(values["ylabel"])
    ax.set_title(values["note"], loc="left")
    return figure


MAX_POINTS = 300  # workers drawn one by one per panel; beyond, a histogram keeps the SVG small


def strip(values: dict):
    """Per panel each worker's value, flagged workers as crosses; a panel of more workers than
    MAX_POINTS draws the kept (and, if as many, the flagged) as a histogram instead, so that a
    campaign of thousands of workers still gives a figure of a few tens of KB."""
    panels = values["panels"]
    figure = new_figure(0.4 + 0.9 * len(panels))
    axes = figure.subplots(len(panels), 1, squeeze=False)[:, 0]
    rng = np.random.default_rng(0)  # fixed jitter: the same drawing every time
    for ax, panel in zip(axes, panels, strict=True):
        v = np.array(panel["values"], dtype=float)
        flagged = np.array(panel["flagged"], dtype=bool)
        jitter = rng.uniform(-0.25, 0.25, len(v))
        edges = np.histogram_bin_edges(v[np.isfinite(v)], bins=40)
        for chosen, style in ((~flagged, {"color": PALETTE[0], "label": "kept"}),
                              (flagged, {"color": FLAGGED, "label": "flagged"})):
            if chosen.sum() > MAX_POINTS:
                _histogram(ax, v[chosen], edges, style)
            elif style["label"] == "kept":
                ax.plot(v[chosen], jitter[chosen], "o", markersize=3, alpha=0.8, **style)
            else:
                ax.plot(v[chosen], jitter[chosen], "x", markersize=4, **style)
        ax.set_yticks([])
        ax.set_ylim(-0.5, 0.5)
        ax.set_xlabel(panel["name"])
        ax.spines["left"].set_visible(False)
    axes[0].legend(loc="upper right", frameon=False, ncols=2, bbox_to_anchor=(1, 1.35))
    return figure


def _histogram(ax, v, edges, style) -> None:
    counts, _ = np.histogram(v[np.isfinite(v)], bins=edges)
    height = counts / max(counts.max(), 1) * 0.8
    ax.stairs(height - 0.4, edges, baseline=-0.4, fill=True, alpha=0.5, color=style["color"],
              label=f"{style['label']}, histogram")


def line(values: dict):
    figure = new_figure(1.6)
    ax = figure.add_subplot()
    x = np.arange(len(values["x"]))
    ax.plot(x, values["y"], marker="o", markersize=2.5, color=PALETTE[0])
    step = max(1, len(x) // 6)
    ax.set_xticks(x[::step], values["x"][::step], rotation=30, ha="right")
    ax.set_ylabel(values["ylabel"])
    ax.set_ylim(bottom=0)
    return figure


DRAW = {"forest": forest, "heatmap": heatmap, "stacked": stacked, "scatter": scatter,
        "strip": strip, "line": line}
