"""Admin pages of the analysis: a campaign's statistics and report pages and the LLM-judgment
upload form.

The views receive a Campaign the admin already checked the user may see (the upload also needs
change permission); they adapt the request and call the cached-statistics or import services.
"""
from __future__ import annotations

import functools

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, reverse

from annotate.http.outage import retry_later

from ..analysis.allocation_design import design_note, period_rows
from ..errors import ServiceError
from ..importing import ImportRejected
from ..models import Campaign, ImportJob, Worker
from ..schema import Capability, SchemaInvalid, parse_schema
from ..services.bundles import report_bundle
from ..services.imports import import_is_background, import_job_create, import_job_progress
from ..services.judgments import judgments_import, read_judgment_file
from ..services.statistics import Cached, Kind, statistics_request
from .bounded import bounded
from .figures import figures_context

CHART_PARTS = ("", "total")  # one score chart per question (a rubric's total, not each criterion)


def _url(name: str, campaign: Campaign) -> str | None:
    try:
        return reverse(name, args=[campaign.pk])
    except NoReverseMatch:  # the admin wires these; a page without the link beats a 500
        return None


def _context(request: HttpRequest, campaign: Campaign, title: str, **extra) -> dict:
    return {
        **admin.site.each_context(request),
        "opts": Campaign._meta,
        "original": campaign,
        "campaign": campaign,
        "title": title,
        "has_view_permission": True,
        **extra,
    }


def _charts(statistics: dict) -> dict:
    """The figures the page's script draws: alpha per part, mean score per system with CI."""
    agreement = [r for r in statistics["agreement"]
                 if r["alpha"] is not None and r.get("subset") is None]
    scores = {}
    for r in statistics["system_scores"]:
        if r["part"] in CHART_PARTS:
            chart = scores.setdefault(f"{r['question']}{'.' + r['part'] if r['part'] else ''}",
                                      {"labels": [], "mean": [], "ci": []})
            chart["labels"].append(r["system"] or "(no system)")
            chart["mean"].append(r["mean"])
            chart["ci"].append([r["ci_low"], r["ci_high"]] if r["ci_low"] is not None else None)
    judges: dict[str, dict] = {}
    for r in statistics["judges"]:
        chart = judges.setdefault(r["judge"], {"labels": [], "exact": []})
        chart["labels"].append(f"{r['question']}.{r['part']}" if r["part"] else r["question"])
        chart["exact"].append(r["exact"])
    return {
        "agreement": {"labels": [f"{r['question']}.{r['part']}" if r["part"] else r["question"]
                                 for r in agreement],
                      "alpha": [r["alpha"] for r in agreement]},
        "scores": [{"title": k, **v} for k, v in scores.items()],
        "judges": [{"title": k, **v} for k, v in judges.items()],
    }


ALIGNMENT_FIGURES = ("exact", "kappa", "kappa_weighted", "kappa_quadratic", "alpha", "pearson",
                     "spearman", "kendall")


def _alignment(rows: list[dict]) -> list[dict]:
    """Alignment rows with their figures as (value, low, high) in column order, for the
    template."""
    out = [{**r, "figures": [{"value": r.get(f), "low": r.get(f"{f}_ci_low"),
                              "high": r.get(f"{f}_ci_high")} for f in ALIGNMENT_FIGURES]}
           for r in rows]
    for r in out:  # a zero-width interval is marked; the table then explains the mark
        for f in r["figures"]:
            f["degenerate"] = f["low"] is not None and f["low"] == f["high"]
        r["degenerate"] = any(f["degenerate"] for f in r["figures"])
    return out


def _confusion(statistics: dict) -> list[dict]:
    """Confusion matrices with their rows zipped to labels, for the template."""
    return [{**m, "rows": list(zip(m["labels"], m["matrix"], strict=True))}
            for m in statistics["confusion"]]


def _error_spans(statistics: dict, campaign: Campaign) -> list[dict]:
    """Each spans question's entry with its error counts pivoted for the page: one row per
    system, one column per severity (and per category) in the schema's order, cells (errors,
    per answer)."""
    out = []
    try:
        questions = {q.id: q for q in parse_schema(campaign.schema).questions}
    except SchemaInvalid:  # changed since the figures were computed: the values' own order
        questions = {}
    for entry in statistics.get("error_spans", []):
        question = questions.get(entry["question"])
        labels = (question.span_labels() if question is not None
                  and question.supports(Capability.ERROR_SPANS) else {})
        answers = sorted((r["system"], r["answers"]) for r in entry["mqm"])
        tables = {}
        for by in ("severity", "category"):
            rows = entry[f"errors_by_{by}"]
            found = {r[by] for r in rows}
            # The schema's order (minor before major), then values it no longer lists.
            columns = [v for v in labels.get(by, []) if v in found]
            columns += sorted(found - set(columns), key=str)
            cells = {(r["system"], r[by]): r for r in rows}
            tables[by] = {"columns": columns, "rows": [
                {"system": system, "answers": n,
                 "cells": [cells.get((system, c)) for c in columns]}
                for system, n in answers] if rows else []}
        out.append({**entry, "counts": tables})
    return out


TIE_MODELS = ("split", "davidson")  # as campaigns.analysis.preference, without loading it here


def _preference(statistics: dict) -> list[dict]:
    """Each pairwise question's win/tie/loss matrix (row system against column system, None
    on the diagonal and for pairs never judged), for the template."""
    out = []
    for question in statistics["pairwise_preference"]:
        systems = [r["system"] for r in question["win_rates"]]
        cells: dict[tuple, tuple] = {}
        for p in question["pairs"]:
            cells[p["system_a"], p["system_b"]] = (p["wins_a"], p["ties"], p["wins_b"])
            cells[p["system_b"], p["system_a"]] = (p["wins_b"], p["ties"], p["wins_a"])
        matrix = [(row, [cells.get((row, column)) for column in systems]) for row in systems]
        out.append({**question, "systems": systems, "matrix": matrix})
    return out


def _recompute_or_read(request: HttpRequest, campaign: Campaign, kind: str, options: dict):
    """POST: queue a recomputation and come back to the page (GET); GET: the cached figures,
    the first computation started if there are none."""
    if request.method == "POST":
        statistics_request(campaign=campaign, kind=kind, options=options, recompute=True)
        messages.info(request, "Recomputing: the page shows the new figures once they are ready.")
        return redirect(request.get_full_path())
    return statistics_request(campaign=campaign, kind=kind, options=options)


def _pending(request: HttpRequest, campaign: Campaign, title: str,
             cached: Cached) -> HttpResponse:
    """The "being computed" page (refreshing itself), or why the computation failed."""
    return TemplateResponse(request, "admin/campaigns/statistics_pending.html", _context(
        request, campaign, title, cached=cached, refresh=cached.computing))


def queue_down_is_503(view):
    """A computation that cannot be queued (the broker is down) answers the 503 "try again
    in a few seconds" page, not a 500: the row already records why."""
    @functools.wraps(view)
    def wrapped(request: HttpRequest, campaign: Campaign) -> HttpResponse:
        try:
            return view(request, campaign)
        except ServiceError as exc:
            if exc.code != "broker_unreachable":
                raise
            return retry_later(request)
    return wrapped


@queue_down_is_503
def campaign_statistics_view(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """GET: every table and chart, from the cached figures (the first computation started if
    there are none); POST: recompute them and the side-by-side table shown. ?exclude_flagged=1
    leaves flagged workers out and shows what that changes; ?item=<external id> picks the item
    of the judge-vs-human table; ?ties=split|davidson overrides how pairwise questions'
    Bradley-Terry fits treat ties; ?style=1 adds their style-adjusted strengths."""
    exclude = request.GET.get("exclude_flagged") in ("1", "on", "true")
    ties = request.GET.get("ties") if request.GET.get("ties") in TIE_MODELS else None
    style = request.GET.get("style") in ("1", "on", "true")
    title = f"Statistics: {campaign.name}"
    recompute = request.method == "POST"
    cached = statistics_request(campaign=campaign, kind=Kind.STATISTICS,
                                options={"exclude_flagged": exclude, "ties": ties, "style": style},
                                recompute=recompute, full=request.POST.get("full") == "1")
    statistics = cached.result
    chosen = request.GET.get("item") or ""
    judged = statistics["judged_items"] if statistics else []
    if statistics and chosen not in judged:
        chosen = judged[0] if judged else ""
    side = (statistics_request(campaign=campaign, kind=Kind.SIDE_BY_SIDE,
                               options={"external_id": chosen}, recompute=recompute)
            if chosen else None)
    if recompute:
        messages.info(request, "Recomputing: the page shows the new figures once they are ready.")
        return redirect(request.get_full_path())
    if statistics is None:
        return _pending(request, campaign, title, cached)
    names = statistics["counts"]["judges"]
    side_by_side = [{**r, "values": [r.get(n) for n in names]}
                    for r in (side.result["rows"] if side and side.result else [])]
    return TemplateResponse(request, "admin/campaigns/statistics.html", _context(
        request, campaign, title, cached=cached,
        refresh=cached.computing or bool(side and side.computing),
        statistics=statistics, charts=_charts(statistics), confusion=_confusion(statistics),
        alignment_judges=_alignment(statistics["judges"]),
        alignment_ceiling=_alignment(statistics["human_ceiling"]),
        error_spans=_error_spans(statistics, campaign),
        exclude_flagged=exclude, chosen_item=chosen, side_by_side=side_by_side,
        preference=_preference(statistics), allocation=_allocation(statistics, campaign),
        ties=ties or "", tie_models=TIE_MODELS, style=style,
        side_by_side_judges=statistics["counts"]["judges"],
        upload_url=_url("admin:campaigns_campaign_judgments", campaign),
        export_url=_url("admin:campaigns_campaign_export", campaign),
        report_url=_url("admin:campaigns_campaign_report", campaign),
        **_bounded_tables(statistics, campaign, chosen),
        **figures_context(cached, statistics),
    ))


def _allocation(statistics: dict, campaign: Campaign) -> dict | None:
    """The allocation design the figures assume, in the report's wording (allocation_design.py):
    per strategy in force its share, epochs, what stays valid and what it biases, and the
    periods in epoch order; with no annotations yet, the current strategy's note. None for
    figures computed before the statistics recorded the design."""
    strategies = statistics.get("allocation_design")
    if strategies is None:
        return None
    return {"strategies": strategies,
            "periods": period_rows(statistics.get("allocation_periods", [])),
            "note": "" if strategies else design_note([], current=campaign.allocation)}


def _bounded_tables(statistics: dict, campaign: Campaign, chosen: str) -> dict:
    """The per-worker tables and the judged items' list, bounded (bounded.py): every flagged
    worker and the item shown stay on the page."""
    flagged = set(statistics["flagged_workers"])
    judged = bounded(statistics["judged_items"], keep=lambda i: i == chosen)
    return {"quality": bounded(statistics["quality"], keep=lambda r: r["flagged"]),
            "reliability": bounded(statistics["worker_reliability"],
                                   keep=lambda r: r["worker"] in flagged),
            "judged_items": judged, "stats_api_url": reverse("api:stats", args=[campaign.slug])}


class ReportOptionsForm(forms.Form):
    exclude_flagged = forms.BooleanField(required=False, label="Exclude flagged workers")
    correction = forms.ChoiceField(choices=[("holm", "Holm"), ("bh", "Benjamini-Hochberg")],
                                   required=False, initial="holm")
    effect = forms.FloatField(required=False, min_value=1e-9, label="Effect to detect",
                              help_text="In the scale's units; empty: 0.2 sd of the ratings.")
    power = forms.FloatField(required=False, min_value=0.5, max_value=0.99, initial=0.8)


def _report_options(cleaned: dict) -> dict:
    """The report's options from the form's cleaned data (its defaults for an empty form)."""
    return {"exclude_flagged": bool(cleaned.get("exclude_flagged")),
            "correction": cleaned.get("correction") or "holm", "effect": cleaned.get("effect"),
            "power": cleaned.get("power") or 0.8}


@queue_down_is_503
def evaluation_report_view(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """GET: the evaluation report (design, agreement, results, comparisons, quality, judges,
    warnings, planning) from the cached figures, rendered from its Markdown, which every
    supplied text reaches escaped and which is sanitised on display; bad options show the
    form's errors; POST: recompute."""
    from ..pages import render_markdown

    form = ReportOptionsForm(request.GET or None)
    title = f"Evaluation report: {campaign.name}"
    cached = None
    if not request.GET or form.is_valid():
        cached = _recompute_or_read(request, campaign, Kind.REPORT, _report_options(
            form.cleaned_data if request.GET else {}))
        if isinstance(cached, HttpResponse):
            return cached
        if cached.result is None:
            return _pending(request, campaign, title, cached)
    built = cached.result if cached else None
    return TemplateResponse(request, "admin/campaigns/report.html", _context(
        request, campaign, title, form=form, cached=cached,
        refresh=bool(cached and cached.computing),
        report=built, report_html=render_markdown(built["markdown"]) if built else "",
        export_url=_url("admin:campaigns_campaign_export", campaign),
        bundle_url=_url("admin:campaigns_campaign_report_bundle", campaign),
        bundle_query=request.GET.urlencode(),
        **figures_context(cached, None, (built or {}).get("headline")),
    ))


@queue_down_is_503
def report_bundle_view(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """GET: the paper bundle of the report for the report page's options, or back to the
    report page (which shows the computation's progress) while it is being computed."""
    form = ReportOptionsForm(request.GET or None)
    if request.GET and not form.is_valid():
        return redirect(reverse("admin:campaigns_campaign_report", args=[campaign.pk])
                        + "?" + request.GET.urlencode())
    bundle = report_bundle(campaign=campaign,
                           options=_report_options(form.cleaned_data if request.GET else {}))
    if bundle.content is None:
        messages.info(request, "The report and its figures are being computed: the bundle can "
                      "be downloaded once they are ready.")
        return redirect(reverse("admin:campaigns_campaign_report", args=[campaign.pk])
                        + ("?" + request.GET.urlencode() if request.GET else ""))
    response = HttpResponse(bundle.content, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{bundle.filename}"'
    return response


class JudgmentUploadForm(forms.Form):
    file = forms.FileField(help_text="CSV, TSV or JSONL with columns item, judge, output. The "
                           "output is the judge's dict literal, e.g. {\"1\": 1, ..., \"15\": 0}.")
    judge = forms.CharField(required=False, max_length=200,
                            help_text="Judge name for files without a judge column.")
    platform = forms.ChoiceField(
        choices=[(Worker.Platform.LLM, "LLM judge"),
                 (Worker.Platform.ACCOUNT, "Human (e.g. published expert scores)")],
        initial=Worker.Platform.LLM)

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > settings.IMPORT_MAX_BYTES:
            raise forms.ValidationError(
                f"The file is larger than {settings.IMPORT_MAX_BYTES // (1024 * 1024)} MB.")
        return upload


def judgments_upload_view(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """GET: the form and the last background imports; POST: import every judgment of the file
    or none (errors by row), in a background job when the file is big."""
    form = JudgmentUploadForm(request.POST or None, request.FILES or None)
    errors = None
    if request.method == "POST" and form.is_valid():
        upload, judge = form.cleaned_data["file"], form.cleaned_data["judge"] or None
        platform = form.cleaned_data["platform"]
        try:
            if import_is_background(size=upload.size):  # past a web request's time: a job
                import_job_create(campaign=campaign, requested_by=request.user, upload=upload,
                                  filename=upload.name or "", kind=ImportJob.Kind.JUDGMENTS,
                                  options={"judge": judge or "", "platform": platform})
                messages.info(request, "The file is stored and imported in the background; "
                              "its progress and outcome are listed below.")
                return redirect(request.path)
            rows = read_judgment_file(upload.read(), upload.name, judge=judge)
            result = judgments_import(campaign=campaign, rows=rows, platform=platform)
        except ImportRejected as exc:
            errors = {"items": [str(e) for e in exc.errors],
                      "more": exc.total - len(exc.errors)}
        else:
            messages.success(request, f"Imported judgments of {', '.join(result.judges)}: "
                             f"{result.created} new, {result.updated} updated.")
            return redirect(_url("admin:campaigns_campaign_statistics", campaign)
                            or request.path)
    jobs = campaign.import_jobs.filter(kind=ImportJob.Kind.JUDGMENTS)[:10]
    return TemplateResponse(request, "admin/campaigns/judgments_upload.html", _context(
        request, campaign, f"Import LLM judgments: {campaign.name}", form=form, errors=errors,
        import_jobs=[(job, import_job_progress(job=job)) for job in jobs]))
