"""The campaign admin: configuration in sections, status actions, and the campaign's pages."""
from __future__ import annotations

from functools import update_wrapper

from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q, Sum
from django.db.models.functions import Coalesce
from django.http import Http404, HttpResponseNotAllowed, JsonResponse
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.utils.html import format_html

from ..errors import ServiceError
from ..models import Campaign, ExportJob
from ..pages import render_markdown
from ..selectors.campaigns import campaigns_visible_to
from ..selectors.platforms import campaign_platform_setup, platform_warnings
from ..selectors.qualification import qualification_counts, qualification_summary
from ..services import campaigns as campaign_services
from . import campaign_pages, starters
from .forms import ALLOCATION_EXPLAINED, CampaignAdminForm, allocation_state_text
from .scoping import campaign_is_visible
from .submissions import submissions_view

MARKDOWN_PREVIEW_MAX = 200_000


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    form = CampaignAdminForm
    list_display = ("name", "links", "slug", "status", "owner", "item_count", "progress",
                    "per_item")
    list_filter = ("status",)
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}
    actions = ("publish", "pause", "close", "duplicate", "export_csv")
    save_on_top = True

    class Media:
        js = ("campaigns/admin/markdown_preview.js",)
        css = {"all": ("campaigns/admin/admin.css",)}
    fieldsets = (
        ("Setup", {"fields": ("name", "slug", "status", "owner", "collaborators", "description",
                              "source", "worker_link")}),
        ("Task schema", {"fields": ("schema", "schema_preview")}),
        ("Instructions and examples", {
            "description": "Markdown, rendered safely (no scripts or styles). The Preview button "
                           "shows unsaved text; the preview rows show the saved text.",
            "fields": ("instructions", "instructions_preview", "examples", "examples_preview",
                       "judge_instructions")}),
        ("Consent and intake questions", {
            "fields": ("consent_text", "consent_preview", "intake_questions")}),
        ("Language", {"fields": ("language", "language_from_browser")}),
        ("Assignment settings", {"fields": (
            "items_per_assignment", "annotations_per_item", "assignment_timeout_minutes",
            "max_assignments_per_worker", "attention_checks_per_assignment",
            "gold_items_per_assignment")}),
        ("Qualification test", {
            "description": "An optional short test before the main items, made of gold items "
                           "(imported with control = gold and their expected answers). A "
                           "participant who answers fewer than the pass mark correctly is "
                           "screened out with the failed-checks code (else the screened-out "
                           "code); one who passes starts the main items and never takes the "
                           "test again here, nor in your campaigns with the same group. The "
                           "test's items are not mixed into assignments as gold items.",
            "fields": ("qualification", "qualification_counts")}),
        ("Completion", {"fields": ("recruitment", "completion_mode", "completion_code",
                                   "completion_code_failed_checks", "completion_code_no_work",
                                   "completion_code_screened_out",
                                   "completion_redirect_url", "platform_setup", "mturk_note")}),
        ("Approvals and bonus", {
            "description": "The bonus column of the submissions list, in the study's currency.",
            "fields": ("bonus_per_item", "bonus_per_gold_correct")}),
        ("Quality control", {
            "description": "Besides the relative rule (a worker under a quarter of the typical "
                           "worker's median time is flagged), absolute floors you set. "
                           "Free-text answers are always recorded as typed or pasted and "
                           "flagged; these switches also refuse pasting and copying.",
            "fields": ("min_seconds_per_item", "min_seconds_per_word", "block_paste",
                       "block_copy")}),
        ("Allocation and stopping", {
            "description": ALLOCATION_EXPLAINED,
            "fields": ("allocation", "min_annotations_per_item", "max_annotations_per_item",
                       "agreement_spread", "stop_when", "allocation_state")}),
    )

    # Queryset and permissions: researchers see owned and shared campaigns only.

    def get_queryset(self, request):
        qs = super().get_queryset(request).select_related("owner")
        if not request.user.is_superuser:
            # A subquery, not the selector's join: the sums below must not be multiplied.
            qs = qs.filter(pk__in=campaigns_visible_to(request.user).values("pk"))
        return qs.annotate(
            _items=Count("items", filter=Q(items__control="")),
            _done=Coalesce(Sum("items__annotations_done", filter=Q(items__control="")), 0),
            _wanted=Coalesce(Sum("items__slots_wanted", filter=Q(items__control="")), 0),
        )

    def get_object(self, request, object_id, from_field=None):
        obj = super().get_object(request, object_id, from_field)
        if obj is None:
            raise Http404("No such campaign, or it is not shared with you.")
        return obj

    def _visible(self, request, obj) -> bool:
        return obj is None or campaign_is_visible(request, obj.pk)

    def has_view_permission(self, request, obj=None):
        return super().has_view_permission(request, obj) and self._visible(request, obj)

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and self._visible(request, obj)

    def has_delete_permission(self, request, obj=None):
        # Collaborators may change a study, only its owner may delete it (and its results).
        allowed = super().has_delete_permission(request, obj)
        return allowed and (obj is None or request.user.is_superuser
                            or obj.owner_id == request.user.pk)

    def get_deleted_objects(self, objs, request):
        # Items, workers and answers cannot be deleted one by one (their counters belong to the
        # services), but deleting a campaign, which only its owner may do, takes them along: the
        # confirmation page lists them all.
        deleted, counts, _perms_needed, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, set(), protected

    def delete_queryset(self, request, queryset):
        # The bulk "delete selected" action checks the model permission only, not each row.
        if any(not campaign_services.campaign_may_delete(campaign=c, user=request.user)
               for c in queryset):
            raise PermissionDenied("Only a campaign's owner may delete it.")
        for campaign in queryset:
            campaign_services.campaign_delete(campaign=campaign, user=request.user)

    def delete_model(self, request, obj):
        try:
            campaign_services.campaign_delete(campaign=obj, user=request.user)
        except ServiceError as exc:
            raise PermissionDenied(exc.message) from None

    def get_readonly_fields(self, request, obj=None):
        fields = ["status", "allocation_state", "worker_link", "instructions_preview",
                  "examples_preview", "consent_preview", "platform_setup", "mturk_note",
                  "schema_preview", "qualification_counts"]
        if not request.user.is_superuser:
            fields.append("owner")
        return fields

    def get_changeform_initial_data(self, request):
        return {"owner": request.user.pk, **starters.starter_initial(request),
                **super().get_changeform_initial_data(request)}

    def add_view(self, request, form_url="", extra_context=None):
        """The add form opens with the gallery of starter templates above it."""
        return super().add_view(request, form_url, {**starters.gallery_context(request),
                                                    **(extra_context or {})})

    def save_model(self, request, obj, form, change):
        if not change and (not request.user.is_superuser or not obj.owner_id):
            obj.owner = request.user
        if change:
            # The service applies a new k to the items' slot targets (campaign_apply_redundancy).
            changed = {f: form.cleaned_data[f] for f in form.changed_data
                       if f in campaign_services.SETTINGS_FIELDS}
            campaign_services.campaign_update(campaign=obj, **changed)
        else:
            fields = {f: form.cleaned_data[f] for f in campaign_services.SETTINGS_FIELDS
                      if f in form.cleaned_data}
            created = campaign_services.campaign_create(owner=obj.owner, slug=obj.slug, **fields)
            obj.pk, obj._state.adding = created.pk, False
            obj.refresh_from_db()
            starters.import_sample_items(self, request, obj)
        for problem in campaign_services.campaign_control_problems(campaign=obj):
            self.message_user(request, f"{problem} Publishing is refused until then.",
                              messages.WARNING)
        for warning in platform_warnings(obj):
            self.message_user(request, warning, messages.WARNING)

    # Columns and read-only fields.

    @admin.display(description="Items", ordering="_items")
    def item_count(self, obj):
        return obj._items

    @admin.display(description="Per item", ordering="annotations_per_item")
    def per_item(self, obj):
        return obj.annotations_per_item

    @admin.display(description="Done")
    def progress(self, obj):
        pct = 100 * obj._done / obj._wanted if obj._wanted else 0
        return f"{obj._done} / {obj._wanted} ({pct:.0f}%)"

    @admin.display(description="")
    def links(self, obj):
        return format_html('<a href="{}">Dashboard</a>',
                           reverse("admin:campaigns_campaign_dashboard", args=[obj.pk]))

    @admin.display(description="Allocation now")
    def allocation_state(self, obj):
        return allocation_state_text(obj)

    @admin.display(description="Taken so far")
    def qualification_counts(self, obj):
        if not obj.pk:
            return "Available once saved."
        return qualification_summary(qualification_counts(campaign=obj))

    @admin.display(description="Worker link")
    def worker_link(self, obj):
        if not obj.pk:
            return "Available once saved."
        url = f"{settings.SITE_URL}{reverse('campaigns:entry', args=[obj.slug])}"
        return format_html('<a href="{}">{}</a><div class="help">Share this link; Prolific and '
                           'MTurk parameters are read from the query string.</div>', url, url)

    @admin.display(description="Preview")
    def instructions_preview(self, obj):
        return _preview(obj.instructions if obj.pk else "")

    @admin.display(description="Preview")
    def examples_preview(self, obj):
        return _preview(obj.examples if obj.pk else "")

    @admin.display(description="Preview")
    def consent_preview(self, obj):
        return _preview(obj.consent_text if obj.pk else "")

    @admin.display(description="Prolific setup")
    @admin.display(description="Preview")
    def schema_preview(self, obj):
        # Submits the form itself (unsaved schema, instructions, examples) to the preview.
        return format_html(
            '<button type="submit" class="button" formaction="{}" formtarget="_blank" '
            'formnovalidate>Show the form as the worker will see it</button>'
            '<div class="help">Opens in a new tab, on a sample item; nothing is saved.</div>',
            reverse("admin:campaigns_campaign_schema_preview"))

    def platform_setup(self, obj):
        if not obj.pk:
            return "Available once saved."
        return render_to_string("admin/campaigns/campaign/platform_setup.html",
                                {"setup": campaign_platform_setup(campaign=obj)})

    @admin.display(description="MTurk")
    def mturk_note(self, obj):
        return ("Nothing to set for MTurk: when a worker arrives from an ExternalQuestion HIT "
                "(workerId, assignmentId, hitId, turkSubmitTo), the completion page posts the "
                "assignmentId and the code back to MTurk. Use a per-assignment code to verify "
                "submissions; the redirect URL is ignored for MTurk workers.")

    # Actions on the list.

    def _run_status(self, request, queryset, service, done: str):
        ok = 0
        for campaign in queryset:
            try:
                service(campaign=campaign)
                ok += 1
            except ServiceError as exc:
                self.message_user(request, exc.message, messages.ERROR)
        if ok:
            self.message_user(request, f"{ok} campaign(s) {done}.", messages.SUCCESS)

    @admin.action(description="Publish (make live)", permissions=["change"])
    def publish(self, request, queryset):
        self._run_status(request, queryset, campaign_services.campaign_publish, "published")

    @admin.action(description="Pause (no new assignments)", permissions=["change"])
    def pause(self, request, queryset):
        self._run_status(request, queryset, campaign_services.campaign_pause, "paused")

    @admin.action(description="Close for good (asks first)", permissions=["change"])
    def close(self, request, queryset):
        if request.POST.get("confirm") != "yes":
            return campaign_pages.close_confirmation(self, request, list(queryset))
        self._run_status(request, queryset, campaign_services.campaign_close, "closed")
        return None

    @admin.action(description="Duplicate (schema and settings, no items or results)",
                  permissions=["add"])
    def duplicate(self, request, queryset):
        for campaign in queryset:
            copy = campaign_services.campaign_duplicate(campaign=campaign, owner=request.user)
            self.message_user(request, f"Created the draft “{copy.name}” ({copy.slug}).",
                              messages.SUCCESS)

    @admin.action(description="Export results (CSV)", permissions=["view"])
    def export_csv(self, request, queryset):
        for campaign in queryset:
            campaign_pages.export_create(request, campaign, ExportJob.Format.CSV, {})

    # The campaign's own pages.

    def get_urls(self):
        def page(view, perm: str, post_only: bool = False):
            def wrapper(request, object_id, *args, **kwargs):
                if post_only and request.method != "POST":
                    return HttpResponseNotAllowed(["POST"])
                campaign = self._campaign_for(request, object_id, perm)
                return view(self, request, campaign, *args, **kwargs)
            return self.admin_site.admin_view(update_wrapper(wrapper, view))

        info = "campaigns_campaign"
        return [
            path("<int:object_id>/dashboard/", page(campaign_pages.dashboard_view, "view"),
                 name=f"{info}_dashboard"),
            path("<int:object_id>/statistics/", page(campaign_pages.statistics_view, "view"),
                 name=f"{info}_statistics"),
            path("<int:object_id>/report/", page(campaign_pages.report_view, "view"),
                 name=f"{info}_report"),
            path("<int:object_id>/report/bundle/",
                 page(campaign_pages.report_bundle_view, "view"),
                 name=f"{info}_report_bundle"),
            path("<int:object_id>/import/", page(campaign_pages.import_view, "change"),
                 name=f"{info}_import"),
            path("<int:object_id>/images/", page(campaign_pages.images_view, "change"),
                 name=f"{info}_images"),
            path("<int:object_id>/judgments/", page(campaign_pages.judgments_view, "change"),
                 name=f"{info}_judgments"),
            path("<int:object_id>/preview/", page(campaign_pages.preview_view, "view"),
                 name=f"{info}_preview"),
            path("<int:object_id>/export/", page(campaign_pages.export_view, "view", True),
                 name=f"{info}_export"),
            path("<int:object_id>/duplicate/", page(campaign_pages.duplicate_view, "add", True),
                 name=f"{info}_duplicate"),
            path("<int:object_id>/rename-question/",
                 page(campaign_pages.rename_question_view, "change"),
                 name=f"{info}_rename_question"),
            path("<int:object_id>/status/<str:action>/",
                 page(campaign_pages.status_view, "change", True), name=f"{info}_status"),
            path("<int:object_id>/submissions/",
                 page(submissions_view, "view"), name=f"{info}_submissions"),
            path("markdown-preview/", self.admin_site.admin_view(self.markdown_preview_view),
                 name=f"{info}_markdown_preview"),
            path("schema-preview/", self._editor_view(starters.schema_preview_view, post=True),
                 name=f"{info}_schema_preview"),
            path("templates/<slug:name>/items.jsonl",
                 self._editor_view(starters.sample_items_view), name=f"{info}_starter_items"),
            *super().get_urls(),
        ]

    def markdown_preview_view(self, request):
        """POST {text}: the sanitised HTML workers would see (the live preview's source)."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not (self.has_add_permission(request) or self.has_change_permission(request)):
            raise PermissionDenied
        text = request.POST.get("text", "")[:MARKDOWN_PREVIEW_MAX]
        return JsonResponse({"html": str(render_markdown(text))})

    def _editor_view(self, view, post: bool = False):
        """A page for whoever may add or change campaigns, not tied to one campaign."""
        def wrapper(request, *args, **kwargs):
            if post and request.method != "POST":
                return HttpResponseNotAllowed(["POST"])
            if not (self.has_add_permission(request) or self.has_change_permission(request)):
                raise PermissionDenied
            try:
                return view(self, request, *args, **kwargs)
            except ServiceError as exc:
                if exc.status == 404:
                    raise Http404(exc.message) from None
                raise
        return self.admin_site.admin_view(update_wrapper(wrapper, view))

    def _campaign_for(self, request, object_id, perm: str) -> Campaign:
        """The campaign if this user may see it (else 404) and has `perm` on it (else 403)."""
        campaign = self.get_object(request, str(object_id))
        checks = {"view": self.has_view_permission, "change": self.has_change_permission,
                  "add": lambda r, o: self.has_add_permission(r) and self.has_view_permission(r, o)}
        if not checks[perm](request, campaign):
            raise PermissionDenied
        return campaign


def _preview(text: str):
    html = render_markdown(text)
    if not html:
        return "Nothing saved yet (the Preview button shows unsaved text)."
    return format_html('<details><summary>Show as workers see it</summary>'
                       '<div class="markdown-preview">{}</div></details>', html)
