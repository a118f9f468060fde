"""Coverage of the style-adjusted Bradley-Terry intervals (campaigns/analysis/preference_style.py)
by simulation, beside the unadjusted fit of the same model, and the time of one fit.

Usage: .venv/bin/python bench/style_control.py [--reps 100] [--boot 200] [--seed 0]

Each simulated study: 4 systems with true centred strengths 0.4, 0, 0, -0.4; the system `v`
(true strength 0) writes longer answers (words drawn from 150-400 against 40-200); each
judgment's outcome is logistic(theta_first - theta_second + 0.8 z_length), z as the module
computes it, 2 judgments per item, a random order. Printed per number of items: how often the
95% interval of v's strength covers 0 (style-adjusted, and the position-only fit of
preference_position.py, which credits v for its length), how often the length coefficient's
interval covers its true value, and the time of one fit at 5,000 judgments with 1,000
resamples beside the no-resample fit (the reference measured in the same run).
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from campaigns.analysis.preference_position import bradley_terry_position  # noqa: E402
from campaigns.analysis.preference_style import (  # noqa: E402
    bradley_terry_style,
    style_covariates,
)

THETA = {"s": 0.4, "v": 0.0, "u": 0.0, "w": -0.4}
BETA = 0.8


def study(items: int, rng: np.random.Generator, per_item: int = 2):
    names = np.array(list(THETA))
    pairs = np.array([rng.choice(4, 2, replace=False) for _ in range(items * per_item)])
    first, second = names[pairs[:, 0]], names[pairs[:, 1]]
    words = np.where(np.isin(np.c_[first, second], ["v"]), rng.integers(150, 400, pairs.shape),
                     rng.integers(40, 200, pairs.shape))
    counts = [np.column_stack([words[:, i], np.zeros((len(words), 3), int)]) for i in (0, 1)]
    z, _, _ = style_covariates(*counts)
    theta = np.array([THETA[s] for s in first]) - np.array([THETA[s] for s in second])
    wins = rng.random(len(z)) < 1 / (1 + np.exp(-(theta + BETA * z[:, 0])))
    frame = pd.DataFrame({"item": np.repeat(np.arange(items), per_item), "worker": "w",
                          "first": first, "second": second, "score": wins.astype(float)})
    return frame, counts


def coverage(items: int, reps: int, boot: int, rng) -> dict:
    adjusted = unadjusted = beta = 0
    for _ in range(reps):
        frame, counts = study(items, rng)
        out = bradley_terry_style(frame, *counts, n_boot=boot, seed=int(rng.integers(1 << 30)))
        v = out["table"].set_index("system").loc["v"]
        adjusted += v["ci_low"] <= 0 <= v["ci_high"]
        effect = out["effects"].set_index("term").loc["length"]
        beta += effect["ci_low"] <= BETA <= effect["ci_high"]
        # the same model without the style term: the position-adjusted fit of the statistics
        plain = bradley_terry_position(frame, n_boot=boot)["table"].set_index("system").loc["v"]
        unadjusted += plain["ci_low"] <= 0 <= plain["ci_high"]
    return {"items": items, "style_adjusted_covers_v": adjusted / reps,
            "position_only_covers_v": unadjusted / reps, "length_coefficient_covers": beta / reps}


def timing(rng) -> dict:
    frame, counts = study(2500, rng)
    start = time.perf_counter()
    bradley_terry_style(frame, *counts, n_boot=0)
    reference = time.perf_counter() - start
    start = time.perf_counter()
    out = bradley_terry_style(frame, *counts, n_boot=1000)
    return {"judgments": len(frame), "fit_s": round(reference, 3),
            "fit_with_1000_resamples_s": round(time.perf_counter() - start, 2),
            "resamples_used": out["n_boot_used"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--boot", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    rows = [coverage(items, args.reps, args.boot, rng) for items in (25, 100, 400)]
    print(pd.DataFrame(rows).to_string(index=False))
    frame, counts = study(400, rng)
    table = bradley_terry_style(frame, *counts, n_boot=0)["table"].set_index("system")
    print(f"one study at 400 items: v unadjusted {table.at['v', 'unadjusted_strength']:.3f}, "
          f"adjusted {table.at['v', 'strength']:.3f} (true 0)")
    print(timing(rng))
    print(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
