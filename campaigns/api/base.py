"""The base API view: the request-size limit every operation enforces before parsing."""
from django.conf import settings
from rest_framework.views import APIView

from .errors import PayloadTooLarge


def _content_length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


class ApiView(APIView):
    """Rejects a body over API_UPLOAD_MAX_BYTES with 413 before it is read.

    DRF's parsers read the raw stream, so Django's DATA_UPLOAD_MAX_MEMORY_SIZE does not apply
    to JSON bodies; this check does, for JSON and multipart alike.
    """

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)  # authentication and throttling come first
        limit = settings.API_UPLOAD_MAX_BYTES
        if _content_length(request) > limit:
            raise PayloadTooLarge(f"The request body is larger than the limit of {limit} bytes.")
