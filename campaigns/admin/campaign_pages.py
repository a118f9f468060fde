"""The campaign's own admin pages: dashboard, import, preview, statistics, exports, status.

Each view receives a campaign the CampaignAdmin already checked the user may see (and, for
writes, change); the views only adapt the request and call services and selectors.
"""
from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from annotate.http.limits import takes_uploads

from ..errors import ServiceError
from ..importing import ImportRejected
from ..models import Campaign, ExportJob, ImportJob, Item
from ..selectors.dashboard import campaign_dashboard
from ..selectors.platforms import campaign_places_to_open
from ..services import campaigns as campaign_services
from ..services.imports import import_is_background, import_job_create, import_job_progress
from ..services.items import items_import
from ..services.schema_changes import answered_questions, answers_rename
from .forms import ExportRequestForm, ItemImportForm, QuestionRenameForm

PREVIEW_LIST_SIZE = 50
STATUS_SERVICES = {
    "publish": (campaign_services.campaign_publish, "published"),
    "pause": (campaign_services.campaign_pause, "paused"),
    "close": (campaign_services.campaign_close, "closed"),
}


def _context(model_admin, request: HttpRequest, campaign: Campaign, title: str, **extra) -> dict:
    return {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "original": campaign,
        "campaign": campaign,
        "title": title,
        "has_view_permission": True,
        **extra,
    }


def _change_url(campaign: Campaign) -> str:
    return reverse("admin:campaigns_campaign_change", args=[campaign.pk])


def dashboard_view(model_admin, request: HttpRequest, campaign: Campaign) -> HttpResponse:
    dashboard = campaign_dashboard(campaign=campaign)
    return TemplateResponse(
        request, "admin/campaigns/campaign/dashboard.html",
        _context(model_admin, request, campaign, f"Dashboard: {campaign.name}",
                 dashboard=dashboard, charts=dashboard.charts_json(),
                 places=campaign_places_to_open(campaign=campaign),
                 export_form=ExportRequestForm(),
                 recent_exports=ExportJob.objects.filter(campaign=campaign)[:5]),
    )


@takes_uploads
def import_view(model_admin, request: HttpRequest, campaign: Campaign) -> HttpResponse:
    form = ItemImportForm(request.POST or None, request.FILES or None)
    rejected = None
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        transcripts = form.cleaned_data["transcripts"] or "messages"
        if import_is_background(size=upload.size):  # past a web request's time: a job
            job = import_job_create(campaign=campaign, requested_by=request.user, upload=upload,
                                    filename=upload.name, fmt=form.cleaned_data["format"] or None,
                                    options={"transcripts": transcripts})
            messages.info(request, f"“{job.filename}” is being imported in the background; "
                          "its outcome appears below (reload to follow it).")
            return redirect(request.path)
        try:
            result = items_import(campaign=campaign, content=upload.read(),
                                  filename=upload.name, fmt=form.cleaned_data["format"] or None,
                                  transcripts=transcripts)
        except ImportRejected as exc:
            rejected = exc
        else:
            messages.success(request, f"Imported {result.created} items into “{campaign.name}” "
                             f"({result.control_items} of them control items).")
            return redirect(f"{reverse('admin:campaigns_item_changelist')}"
                            f"?campaign__id__exact={campaign.pk}")
    return TemplateResponse(
        request, "admin/campaigns/campaign/import.html",
        _context(model_admin, request, campaign, f"Import items into “{campaign.name}”",
                 form=form, rejected=rejected,
                 not_shown=(rejected.total - len(rejected.errors)) if rejected else 0,
                 import_jobs=[(job, import_job_progress(job=job)) for job in
                              campaign.import_jobs.filter(kind=ImportJob.Kind.ITEMS)[:10]]),
        status=400 if rejected else 200,
    )


def images_view(model_admin, request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """Upload images that items show (display format "image"), and list those uploaded."""
    from ..services.images import item_images_list, item_images_save

    if request.method == "POST":
        try:
            names = item_images_save(campaign=campaign, files=request.FILES.getlist("images"))
        except ServiceError as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, f"Stored {len(names)} image(s): {', '.join(names)}.")
        return redirect(request.path)
    return TemplateResponse(
        request, "admin/campaigns/campaign/images.html",
        _context(model_admin, request, campaign, f"Images for “{campaign.name}”",
                 images=item_images_list(campaign=campaign)))


def preview_view(model_admin, request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """Show the real item page for one item, recording nothing; without ?item= list the items."""
    item_id = request.GET.get("item", "")
    if item_id:
        pk = int(item_id) if item_id.isdigit() and len(item_id) < 19 else 0
        item = Item.objects.filter(campaign=campaign, pk=pk).first()
        if item is None:
            messages.error(request, f"This campaign has no item with id {item_id!r}.")
            return redirect(request.path)
        return _render_preview(request, campaign, item)
    search = request.GET.get("q", "").strip()
    items = Item.objects.filter(campaign=campaign)
    if search:
        items = items.filter(external_id__icontains=search)
    return TemplateResponse(
        request, "admin/campaigns/campaign/preview_choose.html",
        _context(model_admin, request, campaign, f"Preview “{campaign.name}” as a worker",
                 items=items.order_by("id")[:PREVIEW_LIST_SIZE], search=search),
    )


def _render_preview(request: HttpRequest, campaign: Campaign, item: Item) -> HttpResponse:
    from ..pages import render_item_preview  # the worker pages' own renderer, recording nothing

    return render_item_preview(request, campaign, item)


def statistics_view(model_admin, request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """Agreement, scores with intervals, worker flags: the analysis part's page."""
    # Imported on use: the analysis loads pandas, numpy and scipy, which a web process needs
    # only when someone opens this page.
    from .statistics import campaign_statistics_view

    return campaign_statistics_view(request, campaign)


def report_view(model_admin, request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """The evaluation report: what a paper's evaluation section needs (the analysis part)."""
    from .statistics import evaluation_report_view  # loads the analysis too (see above)

    return evaluation_report_view(request, campaign)


def report_bundle_view(model_admin, request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """The report's paper bundle (ZIP) from the cached report and its figures."""
    from .statistics import report_bundle_view as bundle_view

    return bundle_view(request, campaign)


@takes_uploads
def judgments_view(model_admin, request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """Upload LLM-judge output for the campaign's items (the analysis part's page)."""
    from .statistics import judgments_upload_view  # loads the analysis too (see above)

    return judgments_upload_view(request, campaign)


def export_view(model_admin, request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """POST only: create an export job; the job list shows its progress and download link."""
    form = ExportRequestForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Choose a valid export format: {form.errors.as_text()}")
        return redirect("admin:campaigns_campaign_dashboard", campaign.pk)
    options = {name: form.cleaned_data[name] for name in ("gzip", "exclude_flagged")}
    options["worker_platform"] = form.cleaned_data["worker_platform"] or "human"
    job = export_create(request, campaign, form.cleaned_data["format"], options)
    if job is None:
        return redirect("admin:campaigns_campaign_dashboard", campaign.pk)
    return redirect(f"{reverse('admin:campaigns_exportjob_changelist')}"
                    f"?campaign__id__exact={campaign.pk}")


def export_create(request: HttpRequest, campaign: Campaign, fmt: str, options: dict):
    """Create one export job and say so; a refused job (e.g. broker down) is a message."""
    from ..services.exports import export_job_create

    try:
        job = export_job_create(campaign=campaign, requested_by=request.user, fmt=fmt,
                                options=options)
    except ServiceError as exc:
        messages.error(request, f"“{campaign.name}”: the export was not started: {exc.message}")
        return None
    job.refresh_from_db(fields=["status", "error"])  # an eager run may already be over
    url = reverse("admin:campaigns_exportjob_change", args=[job.pk])
    if job.status == ExportJob.Status.FAILED:
        messages.error(request, format_html("Export <a href=\"{}\">#{}</a> of “{}” failed: {}",
                                            url, job.pk, campaign.name, job.error))
    else:
        messages.success(request, format_html("Export <a href=\"{}\">#{}</a> of “{}” ({}) is {}.",
                                              url, job.pk, campaign.name, job.format,
                                              job.get_status_display().lower()))
    return job


def status_view(model_admin, request: HttpRequest, campaign: Campaign, action: str) -> HttpResponse:
    """POST only: publish, pause or close from the campaign's page."""
    if action not in STATUS_SERVICES:
        raise Http404(f"unknown status action {action!r}")
    if action == "close" and request.POST.get("confirm") != "yes":
        return close_confirmation(model_admin, request, [campaign])
    service, done = STATUS_SERVICES[action]
    try:
        service(campaign=campaign)
    except ServiceError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"“{campaign.name}” is {done}.")
    return redirect(_change_url(campaign))


def duplicate_view(model_admin, request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """POST only: copy the schema and settings into a new draft, then open the copy."""
    copy = campaign_services.campaign_duplicate(campaign=campaign, owner=request.user)
    messages.success(request, f"Created the draft “{copy.name}” ({copy.slug}) from "
                     f"“{campaign.name}”, without items or results.")
    return redirect(_change_url(copy))


def close_confirmation(model_admin, request: HttpRequest, campaigns: list[Campaign]
                       ) -> HttpResponse:
    """Close asks first, and says what closing does (the list action and the button both)."""
    from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME

    single = campaigns[0] if len(campaigns) == 1 else None
    return TemplateResponse(request, "admin/campaigns/campaign/close_confirm.html", {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": "Close for good?",
        "campaigns": campaigns,
        "original": single,
        "explained": campaign_services.CLOSE_EXPLAINED,
        "button_url": (reverse("admin:campaigns_campaign_status", args=[single.pk, "close"])
                       if single and "status/close" in request.path else ""),
        "action_checkbox_name": ACTION_CHECKBOX_NAME,
    })


def rename_question_view(model_admin, request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """Rename an answered question's id or option value: an explicit, recorded migration of its
    stored answers (rewording needs none: edit a text or label in the schema, the id stays)."""
    answered = answered_questions(campaign=campaign)
    ids = [q.get("id") for q in campaign.schema.get("questions", [])]
    form = QuestionRenameForm(request.POST or None, answered=answered, question_ids=ids)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            record = answers_rename(campaign=campaign, question=data["question"],
                                    to=data["to"], value=data["value"] or "", user=request.user,
                                    via="admin")
        except ServiceError as exc:
            form.add_error("to", exc.message)
        else:
            what = (f"{record.question!r}'s option {record.value!r} to {record.value_renamed_to!r}"
                    if record.value else f"{record.question!r} to {record.renamed_to!r}")
            messages.success(request, (
                f"Renamed {what}: "
                f"{record.annotations_changed} stored answer(s) and {record.gold_items_changed} "
                "gold item(s) rewritten. The migration is recorded."))
            return redirect(_change_url(campaign))
    return TemplateResponse(
        request, "admin/campaigns/campaign/rename_question.html",
        _context(model_admin, request, campaign, f"Rename a question of “{campaign.name}”",
                 form=form),
        status=400 if form.errors else 200,
    )
