"""The API's JSON body parser: the import rules for JSON (bounded depth, no NaN or huge
integers), so a hostile body is a 400 rather than a RecursionError."""
from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from ..importing.records import load_json


class BoundedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        try:
            return load_json(stream.read().decode(encoding))
        except ValueError as exc:  # malformed or refused JSON, or not in that encoding
            raise ParseError(f"JSON parse error - {getattr(exc, 'msg', '') or exc}") from None
