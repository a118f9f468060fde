"""Item and judgment files: reading them into records and checking items against a schema."""
from .conversations import TRANSCRIPTS
from .items import RESERVED, ParsedItem, check_record, parse_items
from .records import FORMATS, ImportRejected, RowError, decode, detect_format, read_records

__all__ = [
    "FORMATS",
    "RESERVED",
    "ImportRejected",
    "ParsedItem",
    "RowError",
    "TRANSCRIPTS",
    "check_record",
    "decode",
    "detect_format",
    "parse_items",
    "read_records",
]
