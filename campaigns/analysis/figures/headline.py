"""The first screen's headline: which systems are distinguishable, and with what agreement,
in a few sentences read from the statistics."""
from __future__ import annotations

from collections import defaultdict


def _groups_sentence(label: str, rows: list[dict], correction: str, alpha: float) -> str:
    groups = defaultdict(list)
    for r in sorted(rows, key=lambda r: (r["rank"], str(r["system"]))):
        groups[r.get("cluster")].append(str(r["system"]))
    if len(rows) < 2:
        return ""
    if len(groups) == 1:
        return (f"{label}: the {len(rows)} systems are not distinguishable ({correction}-"
                f"corrected at alpha = {alpha}).")
    ordered = " > ".join("{" + ", ".join(g) + "}" for _, g in sorted(groups.items(),
                                                                        key=lambda kv: kv[0]))
    return (f"{label}: {len(groups)} distinguishable groups of systems, best first: {ordered} "
            f"({correction}-corrected at alpha = {alpha}).")


def _ranking_sentences(statistics: dict) -> list[str]:
    options = statistics.get("options", {})
    by_part = defaultdict(list)
    for r in statistics.get("ranking", []):
        by_part[r["question"], r["part"]].append(r)
    chosen = [k for k in by_part if k[1] in ("", "total")] or list(by_part)
    out = []
    for question, part in chosen:
        label = f"{question}.{part}" if part else question
        sentence = _groups_sentence(label, by_part[question, part],
                                    options.get("correction", "holm"), options.get("alpha", 0.05))
        if sentence:
            out.append(sentence)
    return out


def _preference_sentences(statistics: dict) -> list[str]:
    out = []
    for e in statistics.get("pairwise_preference", []):
        strengths = e.get("bradley_terry") or []
        if len(strengths) < 2:
            continue
        top = strengths[0]
        clear = [r["system"] for r in strengths if r["rank_low"] == r["rank_high"]]
        out.append(f"{e['question']}: {top['system']} ranks first (Bradley-Terry, 95% rank "
                   f"range {top['rank_low']}-{top['rank_high']}); "
                   + (f"rank certain for {', '.join(map(str, clear))}." if clear else
                      "no system's rank is certain at 95%."))
    return out


def _agreement_sentence(statistics: dict) -> str:
    pooled = [r for r in statistics.get("agreement", [])
              if r.get("alpha") is not None and not r.get("subset")]
    if not pooled:
        return "Agreement: not computable yet (no item with two ratings)."
    parts = [f"{r['question']}{'.' + r['part'] if r['part'] else ''} "
             f"{r['alpha']:.2f}" + ("" if r.get("ci_low") is None else
                                    f" [{r['ci_low']:.2f}, {r['ci_high']:.2f}]")
             for r in pooled[:4]]
    more = f" and {len(pooled) - 4} more" if len(pooled) > 4 else ""
    return f"Agreement (Krippendorff's alpha, 95% CI): {'; '.join(parts)}{more}."


def headline(statistics: dict) -> list[str]:
    """Sentences: per question, which systems are distinguishable; then the agreement."""
    return [*_ranking_sentences(statistics), *_preference_sentences(statistics),
            _agreement_sentence(statistics)]
