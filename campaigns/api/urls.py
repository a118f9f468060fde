"""API routes under /api/: campaigns and what hangs off them, the schema and its docs."""
from csp.decorators import csp_update
from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from . import (
    annotations,
    bundles,
    campaigns,
    errors,
    exports,
    items,
    judges,
    judgments,
    progress,
    starters,
    stats,
)
from .jobs import job_action_api
from .qualifications import QualificationListApi
from .submissions import SubmissionListApi

app_name = "api"

CAMPAIGN = "campaigns/<slug:slug>/"


def _job_actions(prefix: str, name: str, **view) -> list:
    """The cancel and retry routes of one kind of job, under the job's own URL."""
    return [path(f"{prefix}{action}/", job_action_api(action, **view).as_view(),
                 name=f"{name}-{action}") for action in ("cancel", "retry")]


def _judgments_import_job(user, slug, job_id):
    return items.import_job_for(user, slug, job_id, kind="judgments")


urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI styles its widgets inline; scripts stay same-origin only (no inline scripts).
    path("docs/", csp_update({"style-src": ["'self'", "'unsafe-inline'"]})(
        SpectacularSwaggerSplitView.as_view(url_name="api:schema")), name="docs"),
    path("templates/", starters.TemplateListApi.as_view(), name="templates"),
    path("templates/<slug:name>/", starters.TemplateDetailApi.as_view(), name="template"),
    path("templates/<slug:name>/campaigns/", starters.TemplateCampaignCreateApi.as_view(),
         name="template-campaigns"),
    path("campaigns/", campaigns.CampaignListCreateApi.as_view(), name="campaigns"),
    path(CAMPAIGN, campaigns.CampaignDetailApi.as_view(), name="campaign"),
    path(f"{CAMPAIGN}status/", campaigns.CampaignStatusApi.as_view(), name="campaign-status"),
    path(f"{CAMPAIGN}duplicate/", campaigns.CampaignDuplicateApi.as_view(),
         name="campaign-duplicate"),
    path(f"{CAMPAIGN}questions/rename/", campaigns.QuestionRenameApi.as_view(),
         name="question-rename"),
    path(f"{CAMPAIGN}workers/erase/", campaigns.WorkerEraseApi.as_view(), name="worker-erase"),
    path(f"{CAMPAIGN}progress/", progress.CampaignProgressApi.as_view(), name="progress"),
    path(f"{CAMPAIGN}items/", items.ItemListApi.as_view(), name="items"),
    path(f"{CAMPAIGN}items/import/", items.ItemImportApi.as_view(), name="items-import"),
    path(f"{CAMPAIGN}items/imports/<int:job_id>/", items.ImportJobDetailApi.as_view(),
         name="items-import-job"),
    path(f"{CAMPAIGN}annotations/", annotations.AnnotationListApi.as_view(), name="annotations"),
    path(f"{CAMPAIGN}judgments/import/", judgments.JudgmentImportApi.as_view(),
         name="judgments-import"),
    path(f"{CAMPAIGN}judgments/imports/<int:job_id>/",
         judgments.JudgmentImportJobDetailApi.as_view(), name="judgments-import-job"),
    path(f"{CAMPAIGN}stats/", stats.CampaignStatsApi.as_view(), name="stats"),
    path(f"{CAMPAIGN}agreement/", stats.QuestionAgreementApi.as_view(), name="agreement"),
    path(f"{CAMPAIGN}report/", stats.CampaignReportApi.as_view(), name="report"),
    path(f"{CAMPAIGN}report/bundle/", bundles.CampaignReportBundleApi.as_view(),
         name="report-bundle"),
    path(f"{CAMPAIGN}exports/", exports.ExportListCreateApi.as_view(), name="exports"),
    path(f"{CAMPAIGN}exports/<int:job_id>/", exports.ExportDetailApi.as_view(),
         name="exports-detail"),
    path(f"{CAMPAIGN}exports/<int:job_id>/download/", exports.ExportDownloadApi.as_view(),
         name="exports-download"),
    path(f"{CAMPAIGN}submissions/", SubmissionListApi.as_view(), name="submissions"),
    path(f"{CAMPAIGN}qualifications/", QualificationListApi.as_view(), name="qualifications"),
    path(f"{CAMPAIGN}judges/", judges.JudgeListCreateApi.as_view(), name="judges"),
    path(f"{CAMPAIGN}judges/<str:name>/runs/", judges.JudgeRunListCreateApi.as_view(),
         name="judge-runs"),
    path(f"{CAMPAIGN}judges/<str:name>/runs/<int:run_id>/", judges.JudgeRunDetailApi.as_view(),
         name="judge-run"),
    path(f"{CAMPAIGN}judges/<str:name>/runs/<int:run_id>/cancel/",
         judges.JudgeRunCancelApi.as_view(), name="judge-run-cancel"),
    path(f"{CAMPAIGN}judges/<str:name>/runs/<int:run_id>/resume/",
         judges.JudgeRunResumeApi.as_view(), name="judge-run-resume"),
    path(f"{CAMPAIGN}judges/<str:name>/runs/<int:run_id>/retry/",
         judges.JudgeRunRetryApi.as_view(), name="judge-run-retry"),
    *_job_actions(f"{CAMPAIGN}exports/<int:job_id>/", "exports", noun="export",
                  tag="exports", operation="exports", load=exports.job_for,
                  output=exports.ExportJobOutput),
    *_job_actions(f"{CAMPAIGN}items/imports/<int:job_id>/", "items-import-job", noun="import",
                  tag="items", operation="items_import_job", load=items.import_job_for,
                  output=items.ImportJobOutput, running=False),
    *_job_actions(f"{CAMPAIGN}judgments/imports/<int:job_id>/", "judgments-import-job",
                  noun="judgments import", tag="judgments", operation="judgments_import_job",
                  load=_judgments_import_job, output=items.ImportJobOutput, running=False),
    # Last: any other /api/ path is a JSON 404, not Django's HTML page.
    re_path(r"^.*$", errors.not_found),
]
