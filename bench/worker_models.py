"""Dawid-Skene and MACE against crowd-kit itself, on the scratchplot story ratings (three
aspects, 300 ratings of 100 stories each, 9-11 workers, 5 classes), and the cost of the
reliability table with its bootstrap.

crowd-kit is not a dependency (it needs transformers and nltk); install it beside the
project for this run only, for example:

    .venv/bin/pip install --target /tmp/crowdkit --no-deps crowd-kit==1.4.2 tqdm
    .venv/bin/pip install --target /tmp/crowdkit scikit-learn nltk
    PYTHONPATH=/tmp/crowdkit SHARED_DATA_DIR=/path/to/shared .venv/bin/python bench/worker_models.py

Printed per aspect: the largest difference in worker reliability between crowd-kit's
DawidSkene and ours with crowd-kit's settings (smoothing 0, ELBO stop) and with our defaults;
MACE's variational weights from crowd-kit's start after 50 iterations against crowd-kit's
`spamming_` (workers and labels renamed so that they first appear in sorted order: crowd-kit
matches sorted counts to parameters in order of appearance) and how much crowd-kit's own
figures move when the same ratings come in another row order; the time of
`reliability_table` with 100 refits next to one crowd-kit DawidSkene fit.
"""
import csv
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# The shared data folder beside the checkout, as for the tests; SHARED_DATA_DIR points elsewhere.
DATA = (Path(os.environ.get("SHARED_DATA_DIR") or ROOT.parent / "shared")
        / "realdata" / "story_rating")

from campaigns.analysis.reliability import dawid_skene_accuracy  # noqa: E402
from campaigns.analysis.worker_models import mace, reliability_table  # noqa: E402


def ratings(aspect: str) -> pd.DataFrame:
    path = DATA / f"scratchplot_{aspect}_full-annotation-result-new.tsv"
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return pd.DataFrame({"task": [r["INPUT:story"] for r in rows],
                         "worker": [r["ASSIGNMENT:worker_id"] for r in rows],
                         "label": [int(r["OUTPUT:category"]) for r in rows]})


def ours(data: pd.DataFrame, **options) -> pd.Series:
    items, _ = pd.factorize(data["task"])
    workers, names = pd.factorize(data["worker"])
    labels, _ = pd.factorize(data["label"], sort=True)
    return pd.Series(dawid_skene_accuracy(items, workers, labels, **options), index=names)


def crowdkit_reliability(model, data: pd.DataFrame) -> pd.Series:
    errors, priors = model.errors_, model.priors_
    return pd.Series({w: sum(priors[c] * (errors.loc[(w, c), c] if (w, c) in errors.index
                                          else 0.0) for c in priors.index)
                      for w in data["worker"].unique()})


def mace_against_crowdkit(data: pd.DataFrame, crowdkit_mace) -> tuple[float, float]:
    renamed = data.assign(worker=pd.factorize(data["worker"])[0],
                          label=pd.factorize(data["label"])[0])
    fitted = crowdkit_mace(n_restarts=1).fit(renamed)
    tasks, _ = pd.factorize(renamed["task"])
    w, k = renamed["worker"].nunique(), renamed["label"].nunique()
    spam = stats.uniform(1, 1.5).rvs(size=(w, 2), random_state=0)
    strategy = stats.uniform(1, 1.5).rvs(size=(w, k), random_state=0)
    start = (spam / spam.sum(axis=1, keepdims=True),
             strategy / strategy.sum(axis=1, keepdims=True))
    spamming = mace(tasks, renamed["worker"].to_numpy(), renamed["label"].to_numpy(),
                    init=start, iterations=50, tolerance=-1)[0]
    shuffled = crowdkit_mace(n_restarts=1).fit(data.sample(frac=1, random_state=1))
    plain = crowdkit_mace(n_restarts=1).fit(data)
    moved = np.abs(pd.Series(shuffled.spamming_[:, 1], pd.unique(
        data.sample(frac=1, random_state=1)["worker"])).reindex(pd.unique(data["worker"]))
        .to_numpy() - plain.spamming_[:, 1]).max()
    return float(np.abs(spamming - fitted.spamming_).max()), float(moved)


def main() -> None:
    from crowdkit.aggregation import MACE, DawidSkene

    for aspect in ("coherence", "interestingness", "naturalness"):
        data = ratings(aspect)
        fitted = DawidSkene(n_iter=100).fit(data)
        reference = crowdkit_reliability(fitted, data)
        same = ours(data, smoothing=0.0, stop="elbo", tolerance=1e-5)
        default = ours(data)
        mace_gap, order_moves = mace_against_crowdkit(data, MACE)
        gap_same = np.abs(same - reference[same.index]).max()
        gap_default = np.abs(default - reference[default.index]).max()
        print(f"{aspect}: Dawid-Skene, crowd-kit's settings {gap_same:.1e}, "
              f"our defaults {gap_default:.3f} "
              f"(crowd-kit stopped after {len(fitted.loss_history_)} iterations); "
              f"MACE weights {mace_gap:.1e}; crowd-kit's MACE competence moves by "
              f"{order_moves:.3f} with the row order")
        frame = pd.DataFrame({"item": data["task"], "worker": data["worker"],
                              "value": data["label"], "question": aspect, "part": "",
                              "level": "ordinal"})
        start = time.perf_counter()
        DawidSkene(n_iter=100).fit(data)
        one_fit = time.perf_counter() - start
        start = time.perf_counter()
        reliability_table(frame, n_boot=100)
        table = time.perf_counter() - start
        print(f"  reliability_table, both models, 100 refits: {table:.2f} s; one crowd-kit "
              f"DawidSkene fit {one_fit:.3f} s ({table / one_fit:.0f}x)")


if __name__ == "__main__":
    main()
