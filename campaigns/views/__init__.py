"""Web views (thin: they adapt the request and call services and selectors)."""
from .assignment import done_page, finish_page, item_page
from .entry import campaign_entry
from .exports import export_download
from .health import healthz
from .images import item_image
from .qualification import qualification_begin, qualification_item_page, qualification_outcome_page

__all__ = ["campaign_entry", "done_page", "export_download", "finish_page", "healthz",
           "item_image", "item_page", "qualification_begin", "qualification_item_page",
           "qualification_outcome_page"]
