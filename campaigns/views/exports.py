"""The export download: the stored file, streamed, to researchers who may see the campaign."""
from pathlib import PurePosixPath

from django.core.files.storage import storages
from django.http import FileResponse, Http404, HttpRequest
from django.shortcuts import get_object_or_404
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from ..models import ExportJob
from ..selectors.campaigns import campaigns_visible_to

CONTENT_TYPES = {
    ".csv": "text/csv; charset=utf-8",
    ".jsonl": "application/x-ndjson; charset=utf-8",
    ".json": "application/json; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".gz": "application/gzip",
}


@require_GET
@never_cache
def export_download(request: HttpRequest, job_id: int) -> FileResponse:
    """404 for anyone who may not see the campaign (anonymous included), and for unfinished jobs,
    so the answer never reveals whether someone else's export exists."""
    job = get_object_or_404(
        ExportJob,
        pk=job_id,
        status=ExportJob.Status.DONE,
        campaign__in=campaigns_visible_to(request.user),
    )
    try:
        handle = storages["exports"].open(job.file, "rb")
    except (FileNotFoundError, ValueError):
        raise Http404("The export file is no longer stored.") from None
    name = PurePosixPath(job.file).name
    return FileResponse(
        handle,
        as_attachment=True,
        filename=name,
        content_type=CONTENT_TYPES.get(PurePosixPath(name).suffix, "application/octet-stream"),
    )
