"""API routes under /api/: campaigns and what hangs off them, the schema and its docs."""
from csp.decorators import csp_update
from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from . import annotations, campaigns, errors, exports, items, judgments, progress, stats

app_name = "api"

CAMPAIGN = "campaigns/<slug:slug>/"

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI styles its widgets inline; scripts stay same-origin only (no inline scripts).
    path("docs/", csp_update({"style-src": ["'self'", "'unsafe-inline'"]})(
        SpectacularSwaggerSplitView.as_view(url_name="api:schema")), name="docs"),
    path("campaigns/", campaigns.CampaignListCreateApi.as_view(), name="campaigns"),
    path(CAMPAIGN, campaigns.CampaignDetailApi.as_view(), name="campaign"),
    path(f"{CAMPAIGN}status/", campaigns.CampaignStatusApi.as_view(), name="campaign-status"),
    path(f"{CAMPAIGN}progress/", progress.CampaignProgressApi.as_view(), name="progress"),
    path(f"{CAMPAIGN}items/", items.ItemListApi.as_view(), name="items"),
    path(f"{CAMPAIGN}items/import/", items.ItemImportApi.as_view(), name="items-import"),
    path(f"{CAMPAIGN}annotations/", annotations.AnnotationListApi.as_view(), name="annotations"),
    path(f"{CAMPAIGN}judgments/import/", judgments.JudgmentImportApi.as_view(),
         name="judgments-import"),
    path(f"{CAMPAIGN}stats/", stats.CampaignStatsApi.as_view(), name="stats"),
    path(f"{CAMPAIGN}agreement/", stats.QuestionAgreementApi.as_view(), name="agreement"),
    path(f"{CAMPAIGN}report/", stats.CampaignReportApi.as_view(), name="report"),
    path(f"{CAMPAIGN}exports/", exports.ExportListCreateApi.as_view(), name="exports"),
    path(f"{CAMPAIGN}exports/<int:job_id>/", exports.ExportDetailApi.as_view(),
         name="exports-detail"),
    path(f"{CAMPAIGN}exports/<int:job_id>/download/", exports.ExportDownloadApi.as_view(),
         name="exports-download"),
    # Last: any other /api/ path is a JSON 404, not Django's HTML page.
    re_path(r"^.*$", errors.not_found),
]
