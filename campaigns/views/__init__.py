"""Web views (thin: they adapt the request and call services and selectors)."""
from .assignment import done_page, finish_page, item_page
from .entry import campaign_entry
from .exports import export_download
from .health import healthz
from .images import item_image

__all__ = ["campaign_entry", "done_page", "export_download", "finish_page", "healthz",
           "item_image", "item_page"]
