"""Cursor pagination for the big lists (items, annotations): stable under concurrent inserts."""
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination


class ApiCursorPagination(CursorPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
    ordering = "id"

    def decode_cursor(self, request):
        # DRF answers a malformed cursor with 404; it is bad input, so 400.
        try:
            return super().decode_cursor(request)
        except NotFound:
            raise ValidationError({"cursor": ["Invalid cursor."]}) from None


class NewestFirstPagination(ApiCursorPagination):
    ordering = "-id"


def paginated(serializer_class: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """The page envelope around `serializer_class`, for the OpenAPI schema."""
    name = f"Paginated{serializer_class.__name__.removesuffix('Output')}List"
    return type(name, (serializers.Serializer,), {
        "next": serializers.URLField(allow_null=True, help_text="The next page, or null."),
        "previous": serializers.URLField(allow_null=True, help_text="The previous page, or null."),
        "results": serializer_class(many=True),
    })


PAGE_PARAMETERS = [
    OpenApiParameter("cursor", str, description="The cursor from `next` or `previous`."),
    OpenApiParameter("page_size", int, description=(
        f"Items per page (default {ApiCursorPagination.page_size}, "
        f"at most {ApiCursorPagination.max_page_size}).")),
]
