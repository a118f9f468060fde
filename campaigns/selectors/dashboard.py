"""A campaign's progress and score figures for the admin dashboard, in a fixed number of queries."""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db.models import Count, F, FloatField, Q, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce, TruncDate
from django.utils import timezone

from ..models import Annotation, Assignment, Campaign, Item
from ..schema import SchemaInvalid, TaskSchema, parse_schema
from ..schema.base import as_int

SLIDER_BINS = 10
NO_SYSTEM = "(no system)"


@dataclass
class Progress:
    """Annotation slots of regular items: done, held by an active assignment, still free."""

    system: str
    items: int = 0
    items_complete: int = 0
    wanted: int = 0
    done: int = 0
    in_progress: int = 0
    remaining: int = 0

    @property
    def percent_done(self) -> float:
        return round(100 * self.done / self.wanted, 1) if self.wanted else 0.0


@dataclass
class Chart:
    """One distribution: categories on the x axis, one series (counts or means) per system."""

    question: str
    title: str
    labels: list[str]
    series: dict[str, list[float]] = field(default_factory=dict)
    kind: str = "count"  # "count" (how many answers) or "mean" (average score)

    @property
    def wide(self) -> bool:
        """Many categories, or long names (drawn as horizontal bars): give it the full width."""
        return len(self.labels) > 8 or any(len(label) > 14 for label in self.labels)

    def as_json(self) -> dict[str, Any]:
        return {"question": self.question, "title": self.title, "labels": self.labels,
                "kind": self.kind, "wide": self.wide,
                "series": [{"label": s, "data": d} for s, d in self.series.items()]}


@dataclass
class Dashboard:
    overall: Progress
    per_system: list[Progress]
    per_day: list[tuple[str, int]]
    workers_total: int
    workers_active: int
    assignments: dict[str, int]
    control_items: int
    annotations: int
    median_seconds: float | None
    charts: list[Chart]

    def charts_json(self) -> dict[str, Any]:
        return {"per_day": {"labels": [d for d, _ in self.per_day],
                            "data": [n for _, n in self.per_day]},
                "progress": {"labels": [p.system for p in self.per_system],
                             "done": [p.done for p in self.per_system],
                             "in_progress": [p.in_progress for p in self.per_system],
                             "remaining": [p.remaining for p in self.per_system]},
                "distributions": [c.as_json() for c in self.charts]}


def campaign_dashboard(*, campaign: Campaign, now=None) -> Dashboard:
    """Every dashboard figure of one campaign; the query count does not grow with the data."""
    now = now or timezone.now()
    overall, per_system = campaign_progress(campaign=campaign)
    assignments = Assignment.objects.filter(campaign=campaign).aggregate(
        workers_total=Count("worker", distinct=True),
        workers_active=Count("worker", distinct=True,
                             filter=Q(status=Assignment.Status.ACTIVE, deadline__gt=now)),
        **{s.value: Count("id", filter=Q(status=s.value)) for s in Assignment.Status},
    )
    annotations, median = _timing(campaign)
    return Dashboard(
        overall=overall,
        per_system=per_system,
        per_day=_per_day(campaign),
        workers_total=assignments.pop("workers_total"),
        workers_active=assignments.pop("workers_active"),
        assignments=assignments,
        control_items=Item.objects.filter(campaign=campaign).exclude(control="").count(),
        annotations=annotations,
        median_seconds=median,
        charts=score_distributions(campaign=campaign),
    )


def campaign_progress(*, campaign: Campaign) -> tuple[Progress, list[Progress]]:
    """(overall, per system) annotation slots of regular items, in one query."""
    per_system = _progress_per_system(campaign)
    overall = Progress(system="All systems")
    for p in per_system:
        for name in ("items", "items_complete", "wanted", "done", "in_progress", "remaining"):
            setattr(overall, name, getattr(overall, name) + getattr(p, name))
    return overall, per_system


def _progress_per_system(campaign: Campaign) -> list[Progress]:
    rows = (
        Item.objects.filter(campaign=campaign, control="")
        .values("system")
        .annotate(
            items=Count("id"),
            items_complete=Count("id", filter=Q(annotations_done__gte=F("slots_wanted"))),
            wanted=Coalesce(Sum("slots_wanted"), 0),
            taken=Coalesce(Sum("slots_taken"), 0),
            done=Coalesce(Sum("annotations_done"), 0),
        )
        .order_by("system")
    )
    return [
        Progress(system=r["system"] or NO_SYSTEM, items=r["items"],
                 items_complete=r["items_complete"], wanted=r["wanted"], done=r["done"],
                 in_progress=r["taken"] - r["done"], remaining=r["wanted"] - r["taken"])
        for r in rows
    ]


def _per_day(campaign: Campaign) -> list[tuple[str, int]]:
    """Annotations created per day, with the days without any filled in as zeros."""
    rows = (
        Annotation.objects.filter(campaign=campaign)
        .annotate(day=TruncDate("created_at"))
        .values("day")
        .annotate(n=Count("id"))
        .order_by("day")
    )
    counts = {r["day"]: r["n"] for r in rows}
    if not counts:
        return []
    day, last = min(counts), max(counts)
    out = []
    while day <= last:
        out.append((day.isoformat(), counts.get(day, 0)))
        day += timedelta(days=1)
    return out


def _timing(campaign: Campaign) -> tuple[int, float | None]:
    """(annotations, median seconds per regular item), the median without loading every row."""
    timed = Annotation.objects.filter(campaign=campaign, item__control="",
                                      seconds_spent__isnull=False)
    counts = Annotation.objects.filter(campaign=campaign).aggregate(
        total=Count("id"),
        timed=Count("id", filter=Q(item__control="", seconds_spent__isnull=False)),
    )
    n = counts["timed"]
    if not n:
        return counts["total"], None
    # The middle one or two values of the sorted column: one small query on either backend.
    middle = list(timed.order_by("seconds_spent").values_list("seconds_spent", flat=True)
                  [(n - 1) // 2 : n // 2 + 1])
    return counts["total"], round(sum(middle) / len(middle), 1)


def score_distributions(*, campaign: Campaign) -> list[Chart]:
    """Per question (per rubric criterion: the mean), how regular items' answers spread by system.

    Scales, choices, sliders and rubrics are counted by the database (one grouped query per
    question, whatever the number of answers); per-line labels and flags, which are JSON lists,
    are read key by key in a streamed query and counted here, with only the counters in memory.
    """
    try:
        schema = parse_schema(campaign.schema)
    except SchemaInvalid:
        return []
    counters: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    answers = Annotation.objects.filter(campaign=campaign, item__control="").order_by()
    systems: set[str] = set()
    for q in schema.questions:
        if q.kind in ("likert", "choice", "slider"):
            rows = _grouped(answers, q.id, KT(f"answers__{q.id}"))
        elif q.kind == "rubric":
            rows = _rubric_rows(answers, q)
        elif q.kind in ("lines", "flags"):
            rows = ((system, value, 1) for system, value in answers.filter(
                answers__has_key=q.id).values_list("item__system", f"answers__{q.id}")
                .iterator(chunk_size=2000))
        else:
            continue
        for system, value, n in rows:
            system = system or NO_SYSTEM
            systems.add(system)
            _count(q, value, counters[q.id][system], n)
    return _charts(schema, counters, sorted(systems))


def _grouped(answers, question_id: str, value) -> list[tuple[str, Any, int]]:
    """(system, value, how many) for one answer key, counted by the database."""
    rows = (answers.filter(answers__has_key=question_id)
            .values(s=F("item__system"), v=value).annotate(n=Count("id")))
    return [(r["s"], r["v"], r["n"]) for r in rows]


def _rubric_rows(answers, q) -> list[tuple[str, Any, int]]:
    """Sums per criterion and totals per system: ("#sums", {criterion: sum}, answers) rows and
    ("total", total, count) rows, in two grouped queries."""
    sums = {f"c{i}": Sum(Cast(KT(f"answers__{q.id}__{c.id}"), FloatField()))
            for i, c in enumerate(q.criteria)}
    rows = (answers.filter(answers__has_key=q.id).values(s=F("item__system"))
            .annotate(n=Count("id"), **sums))
    out: list[tuple[str, Any, int]] = [
        (r["s"], {"#sums": {c.id: r[f"c{i}"] or 0 for i, c in enumerate(q.criteria)}}, r["n"])
        for r in rows]
    out += [(s, {"#total": v}, n)
            for s, v, n in _grouped(answers, q.id, KT(f"answers__{q.id}__total"))]
    return out


def _count(question, value: Any, counter: Counter, n: int = 1) -> None:
    kind = question.kind
    if value is None:
        return
    if kind in ("likert", "choice"):
        counter[str(value)] += n
    elif kind == "slider":
        span = (question.max - question.min) or 1
        position = (float(value) - question.min) / span * SLIDER_BINS
        counter[min(max(int(position), 0), SLIDER_BINS - 1)] += n
    elif kind == "lines" and isinstance(value, list):
        counter.update(str(entry.get("label")) for entry in value if isinstance(entry, dict))
    elif kind == "flags" and isinstance(value, dict):
        counter.update(str(v) for v in value.get("selected", []))
        if value.get("other"):
            counter["other"] += 1
    elif kind == "rubric" and "#sums" in value:
        counter["#answers"] += n
        for part, total in value["#sums"].items():
            counter[part] += total
    elif kind == "rubric" and "#total" in value:
        total = as_int(value["#total"])
        if total is not None:
            counter[("total", total)] += n


def _charts(schema: TaskSchema, counters, systems: list[str]) -> list[Chart]:
    charts = []
    for q in schema.questions:
        categories = _categories(q)
        if categories is None:
            continue
        keys, labels = zip(*categories, strict=True) if categories else ((), ())
        chart = Chart(question=q.id, title=q.text, labels=list(labels),
                      kind="mean" if q.kind == "rubric" else "count")
        for system in systems:
            counter = counters[q.id][system]
            if q.kind == "rubric":
                n = counter["#answers"]
                chart.series[system] = [round(counter[k] / n, 2) if n else 0 for k in keys]
            else:
                chart.series[system] = [counter[k] for k in keys]
        charts.append(chart)
        if q.kind == "rubric":  # the total has its own scale: a separate distribution
            totals = range(q.max_total + 1)
            charts.append(Chart(
                question=f"{q.id}.total", title=f"{q.text} (total score)",
                labels=[str(t) for t in totals],
                series={s: [counters[q.id][s][("total", t)] for t in totals] for s in systems}))
    return charts


def _categories(q) -> list[tuple[Any, str]] | None:
    """(counter key, axis label) pairs for a question; None for kinds without a distribution."""
    if q.kind == "likert":
        return [(str(p.value), f"{p.value} {p.label}" if p.label != str(p.value) else p.label)
                for p in q.points]
    if q.kind in ("choice", "lines"):
        return [(o.value, o.label) for o in q.options]
    if q.kind == "flags":
        return [(o.value, o.label) for o in q.options] + ([("other", "Other")] if q.other else [])
    if q.kind == "slider":
        width = (q.max - q.min) / SLIDER_BINS
        return [(b, f"{q.min + b * width:g}–{q.min + (b + 1) * width:g}")
                for b in range(SLIDER_BINS)]
    if q.kind == "rubric":
        return [(c.id, c.id) for c in q.criteria]
    return None
