"""Django admin, the researcher's home: campaigns, items, workers, assignments, exports.

Importing the package registers every ModelAdmin with the default admin site.
"""
from django.contrib import admin

from .campaigns import CampaignAdmin
from .exports import ExportJobAdmin
from .items import ItemAdmin
from .judges import JudgeAdmin, JudgeOutputAdmin, JudgeRunAdmin
from .workers import AnnotationAdmin, AssignmentAdmin, DeletionRecordAdmin, WorkerAdmin

admin.site.site_header = "Annotate: human-evaluation campaigns"
admin.site.site_title = "Annotate admin"
admin.site.index_title = "Your campaigns"

__all__ = ["AnnotationAdmin", "AssignmentAdmin", "CampaignAdmin", "DeletionRecordAdmin",
           "ExportJobAdmin", "ItemAdmin", "JudgeAdmin", "JudgeOutputAdmin", "JudgeRunAdmin",
           "WorkerAdmin"]
