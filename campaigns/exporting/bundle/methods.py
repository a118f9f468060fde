"""The bundle's methods paragraph (LaTeX with \\cite, and plain text) and its HEDS-style
datasheet (Shimorina and Belz 2022), from the evaluation report's design, quality and options.

Each sentence states a count the statistics report or a method with its assumption; the
references cited are collected so that references.bib holds exactly those.
"""
from __future__ import annotations

from .latex import escape

AUTHORS = {"krippendorff2004": "Krippendorff, 2004", "efron1993": "Efron and Tibshirani, 1993",
           "holm1979": "Holm, 1979", "benjamini1995": "Benjamini and Hochberg, 1995",
           "bradley1952": "Bradley and Terry, 1952", "davidson1970": "Davidson, 1970",
           "louviere2015": "Louviere et al., 2015", "lommel2014": "Lommel et al., 2014",
           "freitag2021": "Freitag et al., 2021", "kocmi2024esa": "Kocmi et al., 2024",
           "dawid1979": "Dawid and Skene, 1979", "hovy2013": "Hovy et al., 2013",
           "howcroft2020": "Howcroft et al., 2020",
           "vanderlee2021": "van der Lee et al., 2021",
           "shimorina2022": "Shimorina and Belz, 2022"}
CORRECTIONS = {"holm": ("Holm's step-down procedure", "holm1979"),
               "bh": ("the Benjamini-Hochberg procedure", "benjamini1995")}


def _design(report: dict) -> list[tuple[str, list[str]]]:
    d, q = report["design"], report["quality"]
    platforms = ", ".join(f"{n} via {p}" for p, n in sorted(d["raters_by_platform"].items()))
    median = d.get("raters_per_item_median")
    out = [(f"We evaluated {d['items']} items from {d['systems']} system(s) "
            f"({d['items_per_system_min']}-{d['items_per_system_max']} items per system), "
            f"with {d['control_items']} attention or gold-standard control item(s).", []),
           (f"{d['raters']} human raters took part ({platforms or 'no platform recorded'}); "
            f"each item received a median of {median if median is not None else 0:g} "
            f"ratings (range {d['raters_per_item_min']}-{d['raters_per_item_max']}).", [])]
    if d.get("payment"):
        out.append((f"Raters were paid {d['payment']}.", []))
    flagged = len(q["flagged"])
    out.append((f"Quality control flagged {flagged} of {q['workers']} workers "
                f"({'excluded from' if q['excluded'] else 'kept in'} the analysis); "
                f"{q['annotations_used']} of {q['annotations']} annotations were analysed.", []))
    if d.get("judges"):
        out.append((f"LLM judges ({', '.join(d['judges'])}) were compared with the human "
                    "consensus and are not part of the human figures.", []))
    return out


def _statistics(report: dict) -> list[tuple[str, list[str]]]:
    options = report.get("options", {})
    provenance = report.get("provenance", {}).get("bootstrap", {})
    resamples, seed = provenance.get("resamples", "1000"), provenance.get("seed", 0)
    out = [("Inter-annotator agreement is Krippendorff's alpha at each question's level of "
            f"measurement, with 95% intervals from {resamples} bootstrap resamples of items "
            f"(seed {seed})", ["krippendorff2004", "efron1993"])]
    if report.get("systems"):
        name, key = CORRECTIONS.get(options.get("correction") or "holm", CORRECTIONS["holm"])
        c = report["comparisons"]
        out.append(("System means are given with 95% intervals that treat the ratings of one "
                    "item as a cluster; systems were compared pairwise on z-scored ratings, "
                    f"with p-values adjusted by {name} at alpha = {options.get('alpha', 0.05)} "
                    f"per question ({c['n']} comparisons, {len(c['significant'])} significant)",
                    [key]))
    if report.get("pairwise_preference"):
        davidson = any(e.get("ties") == "davidson" for e in report["pairwise_preference"])
        out.append(("Pairwise preferences were fitted with the Bradley-Terry model"
                    + (", ties by Davidson's extension" if davidson else
                       ", a tie counting half a win to each side")
                    + ", with item-bootstrap intervals and rank ranges",
                    ["bradley1952", *(["davidson1970"] if davidson else [])]))
    if report.get("best_worst"):
        out.append(("Best-worst answers are scored as (times best - times worst) / "
                    "appearances", ["louviere2015"]))
    for e in report.get("error_spans", []):
        keys = ["lommel2014", "freitag2021"] + (["kocmi2024esa"] if e.get("score_question")
                                                 else [])
        out.append((f"Error spans of {e['question']} ({e['answers']} answers) are scored with "
                    "MQM severity weights per answer, averaged per item then per system", keys))
    if report.get("bundle_facts", {}).get("worker_reliability"):
        out.append(("Worker reliability is estimated with the Dawid-Skene model and MACE, with "
                    "intervals from resampling items, for workers with at least 20 labels",
                    ["dawid1979", "hovy2013"]))
    out.append(("The study is reported following the recommendations of", [
        "howcroft2020", "vanderlee2021"]))
    return out


def methods(report: dict) -> dict:
    """{"latex": ..., "text": ..., "cited": [keys in order]}."""
    sentences = _design(report) + _statistics(report)
    latex, text, cited = [], [], []
    for sentence, keys in sentences:
        cited += keys
        end = "" if sentence.endswith(".") else "."
        latex.append(escape(sentence) + (f"~\\cite{{{','.join(keys)}}}" if keys else "") + end)
        text.append(sentence + (f" ({'; '.join(AUTHORS[k] for k in keys)})" if keys else "")
                    + end)
    return {"latex": " ".join(latex) + "\n", "text": " ".join(text) + "\n",
            "cited": list(dict.fromkeys(cited))}


TO_ADD = "**[TO ADD]**"


def datasheet(report: dict, provenance: dict) -> str:
    """A HEDS-style datasheet: what the product knows filled in, the rest marked TO ADD."""
    d, q = report["design"], report["quality"]
    rows = [
        ("1 Paper and resources", [("Paper citation, link to resources", TO_ADD)]),
        ("2 Evaluated system(s)", [
            ("Number of systems", str(d["systems"])),
            ("What the systems do, their input and output", TO_ADD),
            ("Language(s)", TO_ADD)]),
        ("3 Sample of system outputs", [
            ("Number of items evaluated", str(d["items"])),
            ("Items per system", f"{d['items_per_system_min']}-{d['items_per_system_max']}"),
            ("How the sample was selected, statistical power", TO_ADD +
             " (the report's planning table gives the items needed for a chosen effect)")]),
        ("3.2 Evaluators", [
            ("Number of evaluators", str(d["raters"])),
            ("Recruitment platform(s)", ", ".join(f"{p} ({n})" for p, n in
                                                    sorted(d["raters_by_platform"].items()))
             or TO_ADD),
            ("Ratings per item", f"median {d.get('raters_per_item_median')}, range "
                                 f"{d['raters_per_item_min']}-{d['raters_per_item_max']}"),
            ("Payment", d.get("payment") or TO_ADD),
            ("Expertise, native language, training, demographics", TO_ADD)]),
        ("3.3 Experimental design", [
            ("Quality control", f"{d['control_items']} control item(s); {len(q['flagged'])} of "
                                f"{q['workers']} workers flagged, "
                                f"{'excluded' if q['excluded'] else 'kept'}"),
            ("Annotations analysed", f"{q['annotations_used']} of {q['annotations']}"),
            ("Instructions shown to evaluators, interface", TO_ADD +
             " (the campaign's instructions and item page are in the product)"),
            ("Ethics approval, consent", TO_ADD)]),
        ("4 Quality criteria", [
            ("Criteria, their definitions and scales", TO_ADD + " (the campaign's schema)"),
            ("Statistics", "see methods.txt and the tables")]),
        ("Reproducibility", [
            ("Product and version", f"{provenance.get('product')} {provenance.get('version')}"),
            ("Statistics options", ", ".join(f"{k}={v}" for k, v in
                                             sorted(provenance.get("options", {}).items()))),
            ("Resampling", f"{provenance['bootstrap']['resamples']} resamples, seed "
                           f"{provenance['bootstrap']['seed']}, "
                           f"{provenance['bootstrap']['generator']}"),
            ("Annotations digest", f"sha256 {provenance['annotations']['sha256']} over "
                                   f"{provenance['annotations']['annotations']} annotations")]),
    ]
    out = ["# Human Evaluation Datasheet (HEDS, Shimorina and Belz 2022): filled in by the "
           "product", "", f"Fields marked {TO_ADD} are for the researcher to complete.", ""]
    for section, fields in rows:
        out += [f"## {section}", ""] + [f"- {name}: {value}" for name, value in fields] + [""]
    return "\n".join(out)
