"""The worker's item page as HTML: its context, its question fields, the researcher's Markdown,
and the read-only preview. Shared by the worker views and the admin's previews, so neither
entry point imports the other."""
from .markdown import render_markdown
from .preview import render_item_preview

__all__ = ["render_item_preview", "render_markdown"]
