"""Export formats: column planning, row building and the writers for csv, csv-long, jsonl, json."""
from .cells import neutralise
from .columns import META_COLUMNS, ColumnPlan, plan_columns
from .formats import FORMATS, ExportWriter, writer_for
from .source import ExportScope, annotation_chunks, export_scope, line_counts

__all__ = [
    "FORMATS",
    "META_COLUMNS",
    "ColumnPlan",
    "ExportScope",
    "ExportWriter",
    "annotation_chunks",
    "export_scope",
    "line_counts",
    "neutralise",
    "plan_columns",
    "writer_for",
]
