"""Benchmark: the statistics job's memory and time at 100,000 and 1,000,000 annotations.

Usage (not part of the test suite; needs PostgreSQL):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotate_stats_bench \\
        .venv/bin/python bench/stats_scale.py [--sizes 100000,1000000] [--n-boot 1000] [--rebuild]

For each size, a synthetic campaign is built once in SQL by bench/synthetic.py: 4 systems,
items rated by 5 workers each out of a pool of 1 per 1,000 annotations, one 1-5 likert question
(each item has a true score, a worker adds noise and a personal offset), one submitted
assignment per worker. Then, each in a child process of its own (peak RSS from the
kernel's ru_maxrss, and the parent stops a child that passes --max-rss-mb so the shared machine
never swaps):

  job:        campaign_statistics(n_boot=...), the whole statistics job as the Celery task runs
              it, and the report built from it (evaluation_report's markdown);
  reference:  the same data read once (COPY BINARY of item, system, worker, value) and the same
              intervals with plain numpy on the same clusters: WMT z-scores (pandas), each
              system's mean with a 1,000-resample item bootstrap, each system pair's
              Mann-Whitney U (scipy), Cliff's delta and mean difference of item means with a
              1,000-resample item bootstrap, Krippendorff's alpha (the `krippendorff` package,
              point estimate) and its unit bootstrap done by the same resampling of units;
  recompute:  the job as the Celery task runs it, then 100 new answers (rolled back at the
              end), then a recomputation (reusing the first one's intervals) and a full one;
  exports:    the analysis exports (analysis-csv and analysis-json by default, which holds the
              report; BENCH_EXPORT_FORMATS names others) as the export job writes them;
  figures:    each figure's point estimate (n_boot=0) beside a reference computing the same
              figures in the same process, alternating in BLOCKS blocks (median of the per-block
              ratios): scores.system_scores vs one pandas groupby giving n, items, raters, mean
              and sd per (question, part, system); comparisons.compare_systems vs item means of z
              (pandas), scipy's mannwhitneyu and a sorted-search Cliff's delta per pair;
              agreement's alpha vs the `krippendorff` package on the reliability matrix.

It prints wall time and peak RSS of each, the job's ratios to the reference, and a table of the
growth from the smallest to the largest size.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotate.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/annotate_stats_bench")

RATERS_PER_ITEM = 5
BLOCKS = 7  # alternating blocks of ours and the reference per point estimate


def slug(size: int) -> str:
    return f"bench-stats-{size}"


def build(size: int, rebuild: bool):
    """The campaign of `size` annotations (bench/synthetic.py), kept between runs."""
    from django.contrib.auth import get_user_model

    from bench.synthetic import kept_or_built

    owner, _ = get_user_model().objects.get_or_create(username="bench-owner")
    return kept_or_built(owner, slug=slug(size), items=size // RATERS_PER_ITEM, rebuild=rebuild,
                         raters_per_item=RATERS_PER_ITEM,
                         workers=max(RATERS_PER_ITEM, size // 1000))


# --- the children ------------------------------------------------------------------------------

def child_job(size: int, n_boot: int, report: bool = True) -> dict:
    from campaigns.models import Campaign
    from campaigns.selectors.analysis import campaign_statistics, evaluation_report

    campaign = Campaign.objects.get(slug=slug(size))
    started = time.perf_counter()
    out = campaign_statistics(campaign=campaign, n_boot=n_boot)
    job = time.perf_counter() - started
    started = time.perf_counter()
    if report:
        evaluation_report(campaign=campaign, n_boot=n_boot)
    report_seconds = time.perf_counter() - started if report else float("nan")
    return {"seconds": job, "report_seconds": report_seconds,
            "resamples": out.get("resamples", {"used": n_boot}),
            "alpha": next((r["alpha"] for r in out["agreement"] if r.get("subset") is None), None)}


def _ratings(size: int):
    """(item, system, worker, value) of the campaign as numpy arrays, read once."""
    from django.db import connection

    from campaigns.models import Campaign

    campaign = Campaign.objects.get(slug=slug(size))
    import numpy as np

    with connection.cursor() as cur:
        cur.execute("""SELECT a.item_id, substr(i.system, 5)::int, a.worker_id,
                              (a.answers->>'quality')::float8
                       FROM campaigns_annotation a JOIN campaigns_item i ON i.id = a.item_id
                       WHERE a.campaign_id = %s""", [campaign.pk])
        rows = np.array(cur.fetchall(), dtype=float)
    return (rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64),
            rows[:, 2].astype(np.int64), rows[:, 3])


def child_reference(size: int, n_boot: int) -> dict:
    """The same intervals with plain numpy on the same clusters (see the module docstring)."""
    import numpy as np
    import pandas as pd
    from scipy import stats

    started = time.perf_counter()
    item, system, worker, value = _ratings(size)
    frame = pd.DataFrame({"item": item, "system": system, "worker": worker, "value": value})
    groups = frame.groupby("worker")["value"]
    frame["z"] = ((frame["value"] - groups.transform("mean")) / groups.transform("std")).fillna(0)
    rng = np.random.default_rng(0)
    means = {}
    for s, g in frame.groupby("system"):
        per_item = g.groupby("item").agg(y=("value", "sum"), m=("value", "size"),
                                         z=("z", "mean"))
        y, m = per_item["y"].to_numpy(), per_item["m"].to_numpy(float)
        k = len(y)
        draws = [rng.integers(0, k, k) for _ in range(n_boot)]
        np.percentile([y[d].sum() / m[d].sum() for d in draws], [2.5, 97.5])
        means[s] = per_item["z"].to_numpy()
    for a, b in itertools.combinations(sorted(means), 2):
        xa, xb = means[a], means[b]
        stats.mannwhitneyu(xa, xb)
        deltas, diffs = [], []
        for _ in range(n_boot):
            ra = xa[rng.integers(0, len(xa), len(xa))]
            rb = np.sort(xb[rng.integers(0, len(xb), len(xb))])
            greater = np.searchsorted(rb, ra, side="left").sum()
            less = len(rb) * len(ra) - np.searchsorted(rb, ra, side="right").sum()
            deltas.append((greater - less) / (len(ra) * len(rb)))
            diffs.append(ra.mean() - rb.mean())
        np.percentile(deltas, [2.5, 97.5]), np.percentile(diffs, [2.5, 97.5])
    alpha = _reference_alpha(item, worker, value, n_boot, rng)
    return {"seconds": time.perf_counter() - started, "alpha": alpha}


def _reference_alpha(item, worker, value, n_boot, rng) -> float:
    """krippendorff.alpha on the reliability matrix, and the unit bootstrap by computing the
    ordinal alpha of resampled units from per-unit coincidences (plain numpy)."""
    import krippendorff
    import numpy as np
    import pandas as pd

    units, unit = np.unique(item, return_inverse=True)
    raters, rater = np.unique(worker, return_inverse=True)
    matrix = np.full((len(raters), len(units)), np.nan)
    matrix[rater, unit] = value
    alpha = float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal"))
    del matrix
    counts = pd.crosstab(unit, value.astype(int)).to_numpy(float)  # units x 5 values
    n_u = counts.sum(axis=1)
    keep = n_u >= 2
    counts, n_u = counts[keep], n_u[keep]
    # Per-unit coincidences o_u[c, k] = n_uc (n_uk - [c == k]) / (n_u - 1), flattened.
    o = (counts[:, :, None] * counts[:, None, :]
         - np.einsum("uc,ck->uck", counts, np.eye(counts.shape[1]))) / (n_u - 1)[:, None, None]
    o = o.reshape(len(o), -1)
    marginal = counts.sum(axis=0)
    cum = np.cumsum(marginal)
    v = counts.shape[1]
    delta = np.array([[(sum(marginal[min(c, k):max(c, k) + 1]) - (marginal[c] + marginal[k]) / 2)
                       ** 2 for k in range(v)] for c in range(v)]).reshape(-1)
    del cum
    for start in range(0, n_boot, 100):
        size = min(100, n_boot - start)
        weights = rng.multinomial(len(o), np.full(len(o), 1 / len(o)), size=size)
        coincidences = weights @ o
        n = coincidences.sum(axis=1, keepdims=True)
        margins = coincidences.reshape(size, v, v).sum(axis=2)
        expected = (margins[:, :, None] * margins[:, None, :]
                    - np.eye(v)[None] * margins[:, :, None]).reshape(size, -1) / (n - 1)
        1 - (coincidences @ delta) / (expected @ delta)
    return alpha


def child_figures(size: int) -> dict:
    """Each figure's point estimate beside its reference, timed in this process."""
    import krippendorff
    import numpy as np
    import pandas as pd
    from scipy import stats

    from campaigns.analysis import comparisons, scores
    from campaigns.analysis.agreement import krippendorff_alpha

    item, system, worker, value = _ratings(size)
    frame = pd.DataFrame({"item": item, "system": system.astype(str), "worker": worker,
                          "value": value, "question": "quality", "part": ""})
    out = {}

    def timed(name, ours, reference):
        """Ours and the reference alternate, BLOCKS times (the machine is shared and its speed
        drifts): median seconds of each and the median of the per-block ratios."""
        mine, theirs = [], []
        for _ in range(BLOCKS):
            started = time.perf_counter()
            ours()
            mine.append(time.perf_counter() - started)
            started = time.perf_counter()
            reference()
            theirs.append(time.perf_counter() - started)
        out[name] = [float(np.median(mine)), float(np.median(theirs)),
                     float(np.median(np.array(mine) / np.array(theirs)))]

    def reference_scores():
        """What system_scores gives without an interval, straight from pandas: per question,
        part and system the ratings, items, raters, mean and sd."""
        frame.groupby(["question", "part", "system"]).agg(
            n=("value", "size"), n_items=("item", "nunique"), mean=("value", "mean"),
            sd=("value", "std"), n_raters=("worker", "nunique"))

    timed("system_scores", lambda: scores.system_scores(frame, n_boot=0), reference_scores)
    design = scores.z_scores(frame)

    def reference_pairs():
        item_means = design.groupby(["system", "item"])["z"].mean()
        systems = sorted(set(frame["system"]))
        for a, b in itertools.combinations(systems, 2):
            xa, xb = item_means[a].to_numpy(), np.sort(item_means[b].to_numpy())
            stats.mannwhitneyu(xa, xb)
            (np.searchsorted(xb, xa, "left").sum()
             - (len(xb) * len(xa) - np.searchsorted(xb, xa, "right").sum()))

    timed("compare_systems", lambda: comparisons.compare_systems(design, n_boot=0),
          reference_pairs)

    def reference_alpha():
        units, unit = np.unique(item, return_inverse=True)
        raters, rater = np.unique(worker, return_inverse=True)
        matrix = np.full((len(raters), len(units)), np.nan)
        matrix[rater, unit] = value
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")

    timed("alpha", lambda: krippendorff_alpha(item, worker, value, level="ordinal"),
          reference_alpha)
    return {name: list(pair) for name, pair in out.items()}


def child_recompute(size: int, n_boot: int) -> dict:
    """The statistics job as the Celery task runs it (campaigns.services.statistics, figures
    drawn), then 100 new answers (a new worker's, on the first 100 items), then a
    recomputation (which reuses the first one's intervals: 100 answers are within
    STATISTICS_REFRESH_FRACTION), then a full one on the same data as the reference: what a
    recompute after a few answers costs against the first computation. The new answers are
    rolled back at the end, so the campaign stays as built. `n_boot` is the job's own (1,000).
    BENCH_RECOMPUTE_BLOCKS (default 3) blocks of (100 answers, recompute, full recompute,
    rollback); the ratio reported is the median of the blocks' recompute / full."""
    from django.db import connection, transaction

    from annotate.celery import app
    from campaigns.models import Campaign
    from campaigns.services.statistics import Kind, statistics_request

    app.conf.task_always_eager = True  # the job runs here, as the embedded mode runs it
    campaign = Campaign.objects.get(slug=slug(size))
    campaign.statistics_results.all().delete()

    def timed(**asked):
        started = time.perf_counter()
        cached = statistics_request(campaign=campaign, kind=Kind.STATISTICS, options={},
                                    **asked)
        cached.row.refresh_from_db()
        return time.perf_counter() - started, cached.row.result

    first, _ = timed()
    blocks = []
    for _ in range(int(os.environ.get("BENCH_RECOMPUTE_BLOCKS", "3"))):
        with transaction.atomic():  # each block from the first computation's result again
            with connection.cursor() as cur:
                cur.execute(NEW_ANSWERS_SQL, {"c": campaign.pk})
            again, reused = timed(recompute=True)
            full, computed = timed(recompute=True, full=True)
            transaction.set_rollback(True)
        blocks.append((again, full))
    ratios = sorted(again / full for again, full in blocks)
    return {"seconds": first, "recompute_seconds": blocks[0][0], "full_seconds": blocks[0][1],
            "blocks": blocks, "median_ratio": ratios[len(ratios) // 2],
            "annotations": reused["counts"]["annotations"],
            "intervals": reused["computation"]["intervals"],
            "same_points": _same_points(reused, computed)}


def _same_points(reused: dict, computed: dict) -> bool:
    """Whether every point estimate of the system scores, comparisons and agreement of the
    recomputation that reused intervals equals the full computation's."""
    for table in ("system_scores", "comparisons", "agreement", "ranking", "quality"):
        for a, b in zip(reused[table], computed[table], strict=True):
            if {k: v for k, v in a.items() if "_ci_" not in k and not k.startswith("ci_")} != {
                    k: v for k, v in b.items() if "_ci_" not in k and not k.startswith("ci_")}:
                return False
    return True


NEW_ANSWERS_SQL = """
    WITH w AS (INSERT INTO campaigns_worker (campaign_id, platform, platform_id,
                   created_at, screened_out_reason)
               VALUES (%(c)s, 'link', 'late-rater', now(), '') RETURNING id),
         a AS (INSERT INTO campaigns_assignment (campaign_id, worker_id, token,
                   status, started_at, deadline, submitted_at, completion_code,
                   study_id, session_id, mturk_assignment_id, mturk_hit_id,
                   turk_submit_to)
               SELECT %(c)s, w.id, md5(random()::text), 'submitted', now(), now(),
                      now(), '', '', '', '', '', '' FROM w RETURNING id, worker_id)
    INSERT INTO campaigns_annotation (campaign_id, assignment_id, item_id,
        worker_id, answers, seconds_spent, created_at, updated_at)
    SELECT %(c)s, a.id, i.id, a.worker_id,
           jsonb_build_object('quality', 1 + i.id %% 5), 20, now(), now()
    FROM a CROSS JOIN (SELECT id FROM campaigns_item WHERE campaign_id = %(c)s
                       ORDER BY id LIMIT 100) AS i"""


def child_exports(size: int, n_boot: int) -> dict:
    """Each analysis export format (campaigns/exporting/analysis.py) as the export job writes
    it (services.exports.write_analysis), to a file; seconds and bytes per format."""
    import tempfile
    from types import SimpleNamespace

    from campaigns.models import Campaign, ExportJob
    from campaigns.services.exports import write_analysis

    campaign = Campaign.objects.get(slug=slug(size))
    out = {}
    for fmt in os.environ.get("BENCH_EXPORT_FORMATS", "analysis-csv,analysis-json").split(","):
        job = SimpleNamespace(campaign=campaign, options={}, format=ExportJob.Format(fmt))
        with tempfile.TemporaryFile("w+", encoding="utf-8") as stream:
            started = time.perf_counter()
            write_analysis(job=job, stream=stream)
            out[fmt] = [time.perf_counter() - started, stream.tell()]
    return out


CHILDREN = {"job": child_job, "job-only": lambda size, n_boot: child_job(size, n_boot, False),
            "reference": child_reference, "figures": child_figures,
            "recompute": child_recompute, "exports": child_exports}


def run_child(kind: str, size: int, n_boot: int, max_rss_mb: int) -> dict:
    """Run one child; its result, wall time and peak RSS (the parent stops it past the cap)."""
    import psutil

    command = [sys.executable, __file__, "--child", kind, "--sizes", str(size),
               "--n-boot", str(n_boot)]
    started = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    watched, peak, stopped = psutil.Process(proc.pid), 0, False
    while proc.poll() is None:
        try:
            peak = max(peak, watched.memory_info().rss)
        except psutil.Error:
            break
        if peak > max_rss_mb * 2**20:
            proc.kill()
            stopped = True
            break
        time.sleep(0.05)
    output, _ = proc.communicate()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = json.loads(output.strip().splitlines()[-1]) if proc.returncode == 0 else {}
    result.update(wall=time.perf_counter() - started, stopped=stopped,
                  peak_mb=max(peak, 0) / 2**20, maxrss_mb=usage.ru_maxrss / 1024,
                  returncode=proc.returncode)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--max-rss-mb", type=int, default=6000,
                        help="stop a child past this RSS (the machine is shared)")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--only", default="figures,reference,job,recompute,exports",
                        help="children to run; job-only: the job without the report")
    parser.add_argument("--child", default="")
    args = parser.parse_args()

    import django

    django.setup()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.child:
        print(json.dumps(CHILDREN[args.child](sizes[0], *(
            [] if args.child == "figures" else [args.n_boot]))))
        return 0
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    rows = []
    for size in sizes:
        build(size, args.rebuild)
        results = {kind.removesuffix("-only"): run_child(kind, size, args.n_boot,
                                                          args.max_rss_mb)
                   for kind in args.only.split(",")}
        report(size, results)
        rows.append((size, results))
    growth(rows)
    return 0


def report(size: int, results: dict) -> None:
    print(f"\n{size:,} annotations (shared 2-core machine, {time.strftime('%Y-%m-%d')}):")
    for kind, r in results.items():
        state = "STOPPED past the RSS cap" if r["stopped"] else (
            "ok" if r["returncode"] == 0 else f"failed ({r['returncode']})")
        print(f"  {kind:<9} wall {r['wall']:7.1f}s  peak RSS {r['peak_mb']:7.0f} MB  {state}")
    figures = results.get("figures", {})
    for name, pair in figures.items():
        if isinstance(pair, list):
            print(f"    {name:<16} ours {pair[0]:7.3f}s  reference {pair[1]:7.3f}s  "
                  f"ratio {pair[2]:5.2f} (medians of {BLOCKS} alternating blocks)")
    report_more(results)
    job, reference = results.get("job"), results.get("reference")
    if job and "seconds" in job:
        print(f"  job {job['seconds']:.1f}s (+ report {job['report_seconds']:.1f}s); resamples "
              f"{job['resamples']}; alpha {job['alpha']}")
    if job and reference and "seconds" in job and "seconds" in reference:
        print(f"  vs plain-numpy reference {reference['seconds']:.1f}s: ratio "
              f"{job['seconds'] / reference['seconds']:.2f}; alpha {reference['alpha']}")


def report_more(results: dict) -> None:
    again = results.get("recompute", {})
    if "recompute_seconds" in again:
        pairs = ", ".join(f"{a:.1f}/{f:.1f}s" for a, f in again["blocks"])
        print(f"  recompute after 100 new answers ({again['intervals']} intervals) / a full "
              f"recompute of the same data, per block: {pairs}; median ratio "
              f"{again['median_ratio']:.2f}. The first computation (imports and caches "
              f"cold) {again['seconds']:.1f}s. Point estimates equal to the full one's: "
              f"{again['same_points']} (peak RSS {again['peak_mb']:.0f} MB)")
    exports = results.get("exports", {})
    for fmt, pair in exports.items():
        if isinstance(pair, list):
            print(f"  export {fmt:<14} {pair[0]:7.1f}s  {pair[1] / 2**20:6.1f} MB written")
    if "peak_mb" in exports:
        print(f"  exports child: peak RSS {exports['peak_mb']:.0f} MB")


def growth(rows: list) -> None:
    print("\n| annotations | job s | job peak MB | reference s | reference peak MB | ratio "
          "| recompute after 100 answers / full | exports peak MB |")
    print("|---|---|---|---|---|---|---|---|")
    for size, results in rows:
        job, ref = results.get("job", {}), results.get("reference", {})
        again, exports = results.get("recompute", {}), results.get("exports", {})
        ratio = (f"{job['seconds'] / ref['seconds']:.2f}"
                 if "seconds" in job and "seconds" in ref else "n/a")
        recompute = (f"{again['median_ratio']:.2f}" if "median_ratio" in again else "n/a")
        print(f"| {size:,} | {job.get('seconds', float('nan')):.1f} | "
              f"{job.get('peak_mb', 0):.0f} | {ref.get('seconds', float('nan')):.1f} | "
              f"{ref.get('peak_mb', 0):.0f} | {ratio} | {recompute} | "
              f"{exports.get('peak_mb', 0):.0f} |")


if __name__ == "__main__":
    sys.exit(main())
