"""A campaign's progress and score figures for the admin dashboard, in a fixed number of queries."""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import connection
from django.db.models import Count, F, FloatField, Q, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce, TruncDate
from django.utils import timezone

from ..models import Annotation, Assignment, Campaign, Item, Worker
from ..schema import Capability, SchemaInvalid, TaskSchema, parse_schema
from ..schema.base import ChartSpec
from .qualification import qualification_counts

NO_SYSTEM = "(no system)"


def _human(annotations):
    """Annotations by people: LLM judges' answers never enter the dashboard's human figures."""
    return annotations.exclude(worker__platform=Worker.Platform.LLM)


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
    judge_annotations: int = 0  # LLM judges' answers, counted apart from human annotations
    # Participants the intake's rules screened out (no assignment): reason -> how many.
    screened_out: dict[str, int] = field(default_factory=dict)
    # The qualification test by status (passed, failed, active); None: the campaign has none.
    qualification: dict[str, int] | None = None

    @property
    def screened_out_total(self) -> int:
        return sum(self.screened_out.values())

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
        judge_annotations=Annotation.objects.filter(
            campaign=campaign, worker__platform=Worker.Platform.LLM).count(),
        screened_out=screened_out_counts(campaign=campaign),
        qualification=(qualification_counts(campaign=campaign) if campaign.qualification
                       else None),
    )


def screened_out_counts(*, campaign: Campaign) -> dict[str, int]:
    """How many participants each screening rule left out ("ineligible:<question id>",
    "quota:<question id>"), most first."""
    rows = (Worker.objects.filter(campaign=campaign, screened_out_at__isnull=False)
            .values_list("screened_out_reason").annotate(n=Count("id"))
            .order_by("-n", "screened_out_reason"))
    return dict(rows)


def campaign_progress(*, campaign: Campaign) -> tuple[Progress, list[Progress]]:
    """(overall, per system) annotation slots of regular items.

    An item with several outputs counts for each of its systems (so the systems' figures
    add up to more than the overall ones, which count items); one query, two with such items.
    """
    per_system = _progress_per_system(campaign)
    several = _progress_of_outputs(campaign)
    overall = Progress(system="All systems")
    for p in per_system:
        for name in ("items", "items_complete", "wanted", "done", "in_progress", "remaining"):
            setattr(overall, name, getattr(overall, name) + getattr(p, name))
    if several:
        overall_several = several.pop(None)
        for name in ("items", "items_complete", "wanted", "done", "in_progress", "remaining"):
            setattr(overall, name, getattr(overall, name) + getattr(overall_several, name))
        merged = {p.system: p for p in per_system}
        for system, p in several.items():
            if system in merged:
                for name in ("items", "items_complete", "wanted", "done", "in_progress",
                             "remaining"):
                    setattr(merged[system], name, getattr(merged[system], name) + getattr(p, name))
            else:
                merged[system] = p
        per_system = sorted(merged.values(), key=lambda p: (p.system == NO_SYSTEM, p.system))
    return overall, per_system


_OUTPUTS_PROGRESS_SQL = """
    WITH items AS (
        SELECT i.data, i.slots_wanted, i.slots_taken, i.annotations_done
        FROM campaigns_item i
        WHERE i.campaign_id = %s AND i.control = '' AND jsonb_exists(i.data, 'outputs'))
    SELECT o.system, count(*), count(*) FILTER (WHERE annotations_done >= slots_wanted),
           coalesce(sum(slots_wanted), 0), coalesce(sum(slots_taken), 0),
           coalesce(sum(annotations_done), 0)
    FROM items CROSS JOIN LATERAL (
        SELECT DISTINCT e->>'system' AS system FROM jsonb_array_elements(
            CASE jsonb_typeof(data->'outputs') WHEN 'array' THEN data->'outputs'
            ELSE '[]'::jsonb END) e) o
    WHERE o.system IS NOT NULL
    GROUP BY o.system
    UNION ALL
    SELECT NULL, count(*), count(*) FILTER (WHERE annotations_done >= slots_wanted),
           coalesce(sum(slots_wanted), 0), coalesce(sum(slots_taken), 0),
           coalesce(sum(annotations_done), 0)
    FROM items
"""


def _progress_of_outputs(campaign: Campaign) -> dict[str | None, Progress]:
    """Per system (and None: overall, counting items), the figures of items with outputs."""
    with connection.cursor() as cursor:
        cursor.execute(_OUTPUTS_PROGRESS_SQL.replace("campaigns_item", Item._meta.db_table),
                       [campaign.pk])
        rows = cursor.fetchall()
    if not any(r[0] is None and r[1] for r in rows):  # no item with outputs
        return {}
    out: dict[str | None, Progress] = {}
    for system, items, complete, wanted, taken, done in rows:
        out[system] = Progress(system="All systems" if system is None else system, items=items,
                               items_complete=complete, wanted=wanted, done=done,
                               in_progress=taken - done, remaining=wanted - taken)
    return out


def _progress_per_system(campaign: Campaign) -> list[Progress]:
    rows = (
        Item.objects.filter(campaign=campaign, control="")
        .exclude(data__has_key="outputs")
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
        _human(Annotation.objects.filter(campaign=campaign))
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
    timed = _human(Annotation.objects.filter(campaign=campaign, item__control="",
                                             seconds_spent__isnull=False))
    counts = _human(Annotation.objects.filter(campaign=campaign)).aggregate(
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
    """Per question, how regular items' answers spread by system, as each kind counts them.

    Single values (scales, choices, sliders, rubric criteria) are counted or summed by the
    database (one grouped query each, whatever the number of answers); answers that are JSON
    lists or objects (per-line labels, flags) are streamed and counted here, with only the
    counters in memory.
    """
    try:
        schema = parse_schema(campaign.schema)
    except SchemaInvalid:
        return []
    counters: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    reader = _Reader(_human(Annotation.objects.filter(campaign=campaign, item__control=""))
                     .order_by())
    systems: set[str] = set()
    for q in schema.questions:
        if not q.supports(Capability.DASHBOARD):
            continue
        for system, value, n in q.dashboard_rows(reader):
            system = system or NO_SYSTEM
            systems.add(system)
            if value is not None:
                q.dashboard_count(value, counters[q.id][system], n)
    return _charts(schema, counters, sorted(systems))


class _Reader:
    """The answers of regular items, as the question kinds ask to read them (AnswerReader)."""

    def __init__(self, answers):
        self.answers_qs = answers

    def values(self, question_id: str, part: str = "") -> list[tuple[str, Any, int]]:
        """(system, value, how many) for one answer key, counted by the database."""
        path = f"answers__{question_id}" + (f"__{part}" if part else "")
        rows = (self.answers_qs.filter(answers__has_key=question_id)
                .values(s=F("item__system"), v=KT(path)).annotate(n=Count("id")))
        return [(r["s"], r["v"], r["n"]) for r in rows]

    def sums(self, question_id: str, parts: list[str]) -> list[tuple[str, dict, int]]:
        """(system, {part: sum}, answers), summed by the database in one grouped query."""
        sums = {f"c{i}": Sum(Cast(KT(f"answers__{question_id}__{p}"), FloatField()))
                for i, p in enumerate(parts)}
        rows = (self.answers_qs.filter(answers__has_key=question_id).values(s=F("item__system"))
                .annotate(n=Count("id"), **sums))
        return [(r["s"], {p: r[f"c{i}"] or 0 for i, p in enumerate(parts)}, r["n"])
                for r in rows]

    def answers(self, question_id: str):
        """(system, answer, 1) for every answer, streamed."""
        return ((system, value, 1) for system, value in self.answers_qs.filter(
            answers__has_key=question_id).values_list("item__system", f"answers__{question_id}")
            .iterator(chunk_size=2000))


def _charts(schema: TaskSchema, counters, systems: list[str]) -> list[Chart]:
    charts = []
    for q in (q for q in schema.questions if q.supports(Capability.DASHBOARD)):
        for spec in q.dashboard_charts():
            charts.append(_chart(q.id, spec, counters[q.id], systems))
    return charts


def _chart(question_id: str, spec: ChartSpec, counters, systems: list[str]) -> Chart:
    keys, labels = zip(*spec.categories, strict=True) if spec.categories else ((), ())
    chart = Chart(question=question_id + spec.suffix, title=spec.title, labels=list(labels),
                  kind="mean" if spec.mean_of else "count")
    for system in systems:
        counter = counters[system]
        if spec.mean_of:
            n = counter[spec.mean_of]
            chart.series[system] = [round(counter[k] / n, 2) if n else 0 for k in keys]
        else:
            chart.series[system] = [counter[k] for k in keys]
    return chart
