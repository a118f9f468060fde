"""Django admin registrations (the researcher's home)."""
from django.contrib import admin

from .models import Annotation, Assignment, Campaign, ExportJob, Item, Worker


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "status", "owner", "items_per_assignment", "annotations_per_item")
    list_filter = ("status",)
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("external_id", "campaign", "system", "control", "slots_taken",
                    "annotations_done")
    list_filter = ("campaign", "control")
    search_fields = ("external_id", "system")


@admin.register(Worker)
class WorkerAdmin(admin.ModelAdmin):
    list_display = ("platform_id", "platform", "campaign", "created_at")
    list_filter = ("platform", "campaign")


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("id", "campaign", "worker", "status", "started_at", "submitted_at")
    list_filter = ("status", "campaign")


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ("id", "campaign", "item", "worker", "updated_at")
    list_filter = ("campaign",)


@admin.register(ExportJob)
class ExportJobAdmin(admin.ModelAdmin):
    list_display = ("id", "campaign", "format", "status", "rows_written", "created_at")
    list_filter = ("status", "format")
