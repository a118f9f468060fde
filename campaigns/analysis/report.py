"""The evaluation report: what a paper's human-evaluation section states, from the statistics.

Follows the reporting recommendations of Howcroft et al. (2020, "Twenty years of confusion in
human evaluation", INLG) and van der Lee et al. (2021, "Human evaluation of automatically
generated text", Computer Speech & Language): the design (items, systems, raters per item, who
the raters were, payment), agreement with intervals, per-system results with intervals and
corrected comparisons, pairwise preference (win rates, Bradley-Terry) and best-worst scores,
error spans, quality control and exclusions, judge alignment, and the warnings.
Pure functions over the statistics dict (campaign_statistics) and a few design facts.
"""
from __future__ import annotations

from . import report_disagreement
from .crossed import MIN_RATERS
from .report_cells import (  # noqa: F401 - _interval and DEGENERATE_MARK are read via report
    DEGENERATE_MARK,
    _interval,
    _label,
    _md,
    _num,
    _table,
)


def build_report(statistics: dict, design: dict, planning: list[dict]) -> dict:
    """The report as JSON-ready sections (each a dict or a list of rows)."""
    significant = [r for r in statistics["comparisons"] if r["better"]]
    ranks = _ranks(statistics)
    systems = []
    for r in statistics["system_scores"]:
        ranked = ranks.get((r["question"], r["part"], r["system"]), {})
        systems.append({**r, "rank": ranked.get("rank"), "cluster": ranked.get("cluster")})
    return {
        "campaign": statistics["campaign"],
        "figures_from": statistics.get("figures_from", "humans"),
        "options": statistics.get("options", {}),
        "design": design,
        "warnings": statistics["design_warnings"],
        "agreement": statistics["agreement"],
        "disagreement": statistics.get("disagreement", []),
        "disputed_items": statistics.get("disputed_items", []),
        "systems": systems,
        "comparisons": {"n": len(statistics["comparisons"]), "significant": significant,
                        "correction": statistics.get("options", {}).get("correction"),
                        "alpha": statistics.get("options", {}).get("alpha")},
        "pairwise_preference": statistics.get("pairwise_preference", []),
        "best_worst": statistics.get("best_worst", []),
        "error_spans": statistics.get("error_spans", []),
        "quality": {"workers": statistics["counts"]["workers"],
                    "flagged": [{"worker": r["worker"], "reasons": r["reasons"]}
                                for r in statistics["quality"] if r["flagged"]],
                    "excluded": statistics["exclude_flagged"],
                    "annotations": statistics["counts"]["annotations"],
                    "annotations_used": statistics["counts"]["annotations_used"]},
        "judges": statistics["judges"],
        "human_ceiling": statistics["human_ceiling"],
        "human_ceiling_summary": statistics.get("human_ceiling_summary", []),
        "worker_reliability": statistics.get("worker_reliability", []),
        "judge_failed_outputs": statistics["judge_failed_outputs"],
        "planning": planning,
    }


def _ranks(statistics: dict) -> dict:
    return {(r["question"], r["part"], r["system"]): r for r in statistics["ranking"]}


DEGENERATE_NOTE = ("\n† A degenerate interval (zero width): every resample gave the same "
                   "value (all ratings equal, one cluster, or too few items to vary), which "
                   "is no evidence of certainty.\n")
CI_METHODS = {
    "item_rater_cluster_t": "items and raters both treated as samples (two-way cluster-robust "
                            "variance, t with the smaller of items and raters minus one "
                            "degrees of freedom)",
    "item_bootstrap": "items resampled, raters held fixed",
    "item_cluster_t": "t-interval over items, raters held fixed",
    "item_cluster_normal": "normal interval over items, raters held fixed",
}


def _ci_methods_note(systems: list[dict]) -> list[str]:
    """Which interval each system got, in words: rater leniency is in the interval only
    when raters were treated as a sample (enough raters)."""
    used = sorted({r["ci_method"] for r in systems if r.get("ci_method")})
    if not used:
        return []
    return ["Intervals: " + "; ".join(f"{_md(m)}: {CI_METHODS.get(m, m)}" for m in used)
            + f". Raters are held fixed only for systems with fewer than {MIN_RATERS} raters.",
            ""]


def report_markdown(report: dict) -> str:
    """The report as Markdown: headings, sentences and tables, every supplied text escaped."""
    out = _design_markdown(report)
    out += ["", "## Agreement (Krippendorff's alpha, 95% bootstrap interval over items)", ""]
    out += _table(["Question", "Subset", "Level", "alpha", "95% CI", "Items", "Raters"], [
        [_label(r), _md(", ".join(f"{k} = {v}" for k, v in r["subset"].items())
                        if r["subset"] else "pooled"), _md(r["level"]), _num(r["alpha"]),
         _interval(r), str(r["n_items"]), str(r["n_raters"])] for r in report["agreement"]])
    out += report_disagreement.disagreement_markdown(report)
    out += ["## Results per system", ""]
    out += _table(["Question", "System", "Items", "Mean", "95% CI", "CI method", "Rank",
                   "Cluster"], [
        [_label(r), _md(r["system"]), str(r["n_items"]), _num(r["mean"]), _interval(r),
         _md(r["ci_method"]), _md(r["rank"]), _md(r["cluster"])] for r in report["systems"]]
    ) if report["systems"] else ["No numeric question rates systems one by one: the "
                                 "systems' results are in the pairwise, best-worst and error "
                                 "span sections below.", ""]
    out += _ci_methods_note(report["systems"])
    c = report["comparisons"]
    out += ["## Comparisons", "",
            f"{c['n']} pairwise comparison(s), {_md(c['correction'])}-corrected per question "
            f"at alpha = {c['alpha']}; {len(c['significant'])} significant after correction.",
            ""]
    out += _table(["Question", "Better", "Than", "Test", "p (adjusted)", "Effect [95% CI]"], [
        [_label(r), _md(r["better"]), _md(r["system_b"] if r["better"] == r["system_a"]
                                          else r["system_a"]),
         _md(r["test"]), f"{r['p']:.4f} ({r['p_adjusted']:.4f})",
         f"{_md(r['effect_measure'])} {_num(r['effect'])} {_interval(r, 'effect_')}"]
        for r in c["significant"]]) if c["significant"] else [""]
    out += _preference_markdown(report.get("pairwise_preference", []))
    out += _best_worst_markdown(report.get("best_worst", []))
    out += _error_spans_markdown(report.get("error_spans", []))
    q = report["quality"]
    out += ["## Quality control and exclusions", "",
            f"{len(q['flagged'])} of {q['workers']} workers flagged; flagged workers "
            f"{'excluded' if q['excluded'] else 'kept'} ({q['annotations_used']} of "
            f"{q['annotations']} human annotations used).", ""]
    out += [f"- {_md(f['worker'])}: {_md('; '.join(f['reasons']))}" for f in q["flagged"]]
    out += _reliability_markdown(report.get("worker_reliability", []))
    out += _judges_markdown(report)
    out += ["## Planning", ""]
    out += [f"Planned for {p['systems']} systems ({p['pairs']} pairs, {p['correction']} "
            f"correction, {'paired' if p['paired'] else 'unpaired'}) by {p['planned_by']}"
            + (f"; simulated power per true difference {_num(p['simulated_power'], 2)}"
               if p.get("simulated_power") is not None else "") + "."
            for p in report["planning"] if "planned_by" in p] + [""]
    out += _table(["Question", "Effect", "Power", "Items/system now", "Items/system needed",
                   "Ratings/item now", "Ratings/item needed"], [
        [_md(p["question"]), _num(p["effect"], 2), _num(p["power"], 2),
         str(p["items_per_system"]), str(p["items_per_system_needed"]),
         _num(p["ratings_per_item"], 1), _md(p["ratings_per_item_needed"] or "no number")]
        for p in report["planning"]]) if report["planning"] else ["No numeric question.", ""]
    return with_notes("\n".join(out).rstrip() + "\n")


def with_notes(text: str) -> str:
    """The report's text with the note on degenerate intervals when one is marked in it."""
    return text + DEGENERATE_NOTE if DEGENERATE_MARK in text else text


def _design_markdown(report: dict) -> list[str]:
    d = report["design"]
    platforms = ", ".join(f"{n} via {_md(p)}" for p, n in d["raters_by_platform"].items())
    out = [f"# Evaluation report: {_md(report['campaign'])}", "", "## Design", "",
           f"- Items: {d['items']} regular items from {d['systems']} system(s) "
           f"({d['items_per_system_min']}-{d['items_per_system_max']} per system"
           + (f"; an item carries up to {d['outputs_per_item_max']} systems' outputs"
              if d.get("outputs_per_item_max") else "") + "); "
           f"{d['control_items']} attention or gold items besides.",
           f"- Raters: {d['raters']} human rater(s) ({platforms or 'none'}); ratings per "
           f"item: median {_num(d['raters_per_item_median'], 1)} (range "
           f"{d['raters_per_item_min']}-{d['raters_per_item_max']}).",
           f"- LLM judges: {', '.join(_md(j) for j in d['judges']) or 'none'}.",
           f"- Payment: {_md(d['payment']) if d.get('payment') else 'not recorded'}.",
           *([f"- Allocation: {_md(d['allocation'])}"] if d.get("allocation") else []),
           f"- Figures from: {_md(report['figures_from'])}.", ""]
    out += ["## Design warnings", ""]
    out += [f"- **{_md(w['code'])}**: {_md(w['message'])}" for w in report["warnings"]] or [
        "- None."]
    return out


def _judges_markdown(report: dict) -> list[str]:
    out = ["", "## Judge alignment (against the human consensus)", ""]
    if report["judge_failed_outputs"]:
        kept = report["options"].get("include_failed_judge_outputs")
        listed = ", ".join(f"{_md(f['judge'])}/{_md(f['item'])} ({_md(f['reason'])})"
                           for f in report["judge_failed_outputs"])
        out += [f"{len(report['judge_failed_outputs'])} failed judge output(s) "
                f"{'included' if kept else 'left out'}: {listed}", ""]
    rows = [[_md(r["judge"]), _label(r), str(r["n"]), _num(r["exact"]),
             _kappa_cell(r),
             f"{_num(r['alpha'])} {_interval(r, 'alpha_')}", _num(r.get("spearman")),
             f"{_num(r.get('system_pearson'))} {_interval(r, 'system_pearson_boot_')}",
             _num(r.get("system_kendall"))]
            for r in [*report["judges"], *report["human_ceiling"]]]
    header = ["Judge (or human)", "Question", "Items", "Exact",
              "kappa [95% CI] (quadratic-weighted on ordered scales)",
              "alpha [95% CI]", "Spearman",
              "System Pearson [95% CI, items resampled within systems]", "System Kendall"]
    out += _table(header, rows) if rows else ["No judge or human ceiling figures.", ""]
    return out + _ceiling_markdown(report.get("human_ceiling_summary", []))


def _reliability_markdown(rows: list[dict]) -> list[str]:
    """Dawid-Skene and MACE per worker with their intervals; none below the minimum."""
    if not rows:
        return []
    by_worker: dict = {}
    for r in rows:
        cell = (f"{_num(r['reliability'])} {_interval(r)}" if r["reliability"] is not None
                else f"– ({_md(r['note'])})")
        by_worker.setdefault(r["worker"], {"n": r["n_labels"]})[r["model"]] = cell
    return ["", "Worker reliability (categorical parts; 95% intervals resample items; no "
            "figure below the minimum number of labels):", "",
            *_table(["Worker", "Labels", "Dawid-Skene", "MACE competence"], [
                [_md(w), str(v["n"]), v.get("dawid_skene", "–"), v.get("mace", "–")]
                for w, v in by_worker.items()])]


def _ceiling_markdown(summary: list[dict]) -> list[str]:
    """Per part, the human ceiling its design allows (or why there is none)."""
    if not summary:
        return []
    out = ["Human ceiling per part:", ""]
    for r in summary:
        label = _md(r["question"] + (f".{r['part']}" if r["part"] else ""))
        if r["method"] == "leave_one_out":
            text = "each human against the other humans' consensus (rows above)"
        elif r["method"] == "system_split_half":
            text = (f"system-level Pearson at most {_num(r['ceiling_pearson'], 2)} (split-half "
                    f"r {_num(r['split_half_r'], 2)} over {r['systems']} systems, "
                    f"Spearman-Brown {_num(r['spearman_brown'], 2)}); {_md(r['reason'])}")
        else:
            text = _md(r["reason"])
        out.append(f"- {label}: {text}")
    return [*out, ""]


def _kappa_cell(row: dict) -> str:
    """Quadratic-weighted kappa for ordered parts (unweighted kappa for totals is withheld),
    Cohen's unweighted kappa for nominal ones."""
    if row.get("kappa_quadratic") is not None:
        return f"{_num(row['kappa_quadratic'])} {_interval(row, 'kappa_quadratic_')} (q)"
    return f"{_num(row.get('kappa'))} {_interval(row, 'kappa_')}"


def _error_spans_markdown(entries: list[dict]) -> list[str]:
    """Per spans question: MQM per system (lower is better) and the span agreement."""
    out = []
    for e in entries:
        out += [f"## Error spans: {_md(e['question'])} (MQM penalties, lower is better)", "",
                f"{e['answers']} answer(s); the spans' weights summed per answer, averaged over "
                "an item's workers, then over the system's items; 95% intervals resample "
                "items.", ""]
        out += _table(["Rank", "System", "Items", "Errors", "MQM [95% CI]",
                       "Per 100 source words [95% CI]", "Mean z"], [
            [str(r["rank"]), _md(r["system"]), str(r["items"]), str(r["errors"]),
             f"{_num(r['mqm'])} {_interval(r)}",
             f"{_num(r['mqm_per_100_words'])} {_interval(r, 'per_100_')}", _num(r["mqm_z"])]
            for r in e["mqm"]]) if e["mqm"] else ["No answers yet.", ""]
        agreement = [f"{_md(r['severity'] or 'all spans')} {_num(r['f1'])} {_interval(r)} "
                     f"({r['pairs']} pairs)" for r in e["agreement"]]
        out += [f"Span agreement (character-level F1 between workers on the same item): "
                f"{'; '.join(agreement) if agreement else 'no item has two answers'}.", ""]
        if e.get("score_question"):
            out += _table([f"{_md(e['score_question'])}: system", "n", "Mean", "95% CI"], [
                [_md(r["system"]), str(r["n"]), _num(r["mean"]), _interval(r)]
                for r in e["scores"]])
    return out


def _preference_markdown(entries: list[dict]) -> list[str]:
    """Per pairwise question: win/tie/loss per pair, win rates, Bradley-Terry strengths with
    intervals and ranks (and the tie model), and the position bias."""
    out = []
    for e in entries:
        out += [f"## Pairwise preference: {_md(e['question'])} ({e['judgments']} judgment(s))",
                ""]
        if not e["judgments"]:
            out += ["No judgments yet.", ""]
            continue
        out += ["Wins, ties and losses per pair of systems:", ""]
        out += _table(["System A", "System B", "A wins", "Ties", "B wins", "n", "A's win rate"], [
            [_md(r["system_a"]), _md(r["system_b"]), str(r["wins_a"]), str(r["ties"]),
             str(r["wins_b"]), str(r["n"]), _num(r["win_rate_a"])] for r in e["pairs"]])
        out += ["Win rates over all pairs (a tie counts as half a win):", ""]
        out += _table(["System", "Wins", "Ties", "Losses", "n", "Win rate"], [
            [_md(r["system"]), str(r["wins"]), str(r["ties"]), str(r["losses"]), str(r["n"]),
             _num(r["win_rate"])] for r in e["win_rates"]])
        ties = (f"ties by Davidson's model (tie parameter nu = {_num(e['tie_parameter'])})"
                if e["ties"] == "davidson" else "ties split as half a win for each side")
        strengths = e["bradley_terry"]
        resamples = (f" from {strengths[0]['n_boot_used']} item-bootstrap resamples"
                     if strengths else "")
        out += [f"Bradley-Terry log-strengths (mean 0; a difference of 1 is odds of e to 1), "
                f"{ties}; 95% intervals{resamples}:", ""]
        out += _table(["Rank", "Rank 95% range", "System", "Strength [95% CI]", "n"], [
            [str(r["rank"]), "–" if r["rank_low"] is None
             else f"{r['rank_low']}-{r['rank_high']}", _md(r["system"]),
             f"{_num(r['strength'])} {_interval(r)}", str(r["n"])]
            for r in strengths]) if strengths else [
            "No finite Bradley-Terry fit yet: some system has never won, or never lost, "
            "across a split of the systems.", ""]
        out += [_position_bias_sentence(e["position_bias"]), ""]
        out += _position_adjusted_markdown(e)
        out += report_disagreement.style_markdown(e)
    return out


def _position_adjusted_markdown(e: dict) -> list[str]:
    """The strengths with the position term, said to be the default when the order was
    unbalanced (then the plain table above credits systems for where they sat)."""
    rows = e.get("bradley_terry_position") or []
    effect = e.get("position_effect")
    if not rows or effect is None:
        return []
    lead = ("The display order was unbalanced, so these position-adjusted strengths are the "
            "result to report (the plain fit above credits systems for sitting first)"
            if e.get("order_unbalanced") else "The display order was balanced; for reference")
    out = [f"{lead}: Bradley-Terry with a first-position term, gamma = "
           f"{_num(effect['gamma'])} {_interval(effect)} on the log-odds scale:", ""]
    return out + _table(["Rank", "Rank 95% range", "System", "Strength [95% CI]", "Elo",
                         "Shown first"], [
        [str(r["rank"]), "–" if r["rank_low"] is None else f"{r['rank_low']}-{r['rank_high']}",
         _md(r["system"]), f"{_num(r['strength'])} {_interval(r)}", _num(r["elo"], 0),
         f"{r['first_share']:.0%}"] for r in rows])


def _position_bias_sentence(b: dict) -> str:
    if b["first_win_rate"] is None:
        return "Position bias: no pair shown both ways round with a decided judgment yet."
    return (f"Position bias: on the {b['pairs_both_ways']} pair(s) shown both ways round, the "
            f"output shown first won {b['first_wins']} and the second {b['second_wins']} "
            f"({b['ties']} tie(s) left out): first-position win rate {_num(b['first_win_rate'])} "
            f"(95% Wilson CI {_interval(b)}; exact binomial test against one half, "
            f"p = {b['p_value']:.4f}).")


def _best_worst_markdown(entries: list[dict]) -> list[str]:
    """Per best-worst question: best-minus-worst score per system with its interval."""
    out = []
    for e in entries:
        out += [f"## Best-worst: {_md(e['question'])} ({e['answers']} answer(s))", "",
                "Score = (times best - times worst) / appearances, from -1 to 1; 95% intervals "
                "resample items.", ""]
        out += _table(["Rank", "System", "Best", "Worst", "Appearances", "Score [95% CI]"], [
            [str(r["rank"]), _md(r["system"]), str(r["best"]), str(r["worst"]),
             str(r["appearances"]), f"{_num(r['score'])} {_interval(r)}"]
            for r in e["scores"]]) if e["scores"] else ["No answers yet.", ""]
    return out
