"""How every figure looks and is written: a colour-blind-safe palette, sizes for a two-column
paper, and byte-reproducible SVG and PDF (fixed hash salt, no dates, fonts embedded).

matplotlib is used through its object API on the Agg-free SVG and PDF canvases only, so it never
touches a display or pyplot's global figure list (safe in a Celery worker's threads).
"""
from __future__ import annotations

import base64
import io
import logging
import re

import matplotlib

matplotlib.use("Agg")  # before anything imports pyplot: no display, ever
# fontTools logs every table it subsets when a PDF embeds a font: noise in the job's log.
logging.getLogger("fontTools").setLevel(logging.WARNING)

from matplotlib.backends.backend_pdf import FigureCanvasPdf  # noqa: E402
from matplotlib.backends.backend_svg import FigureCanvasSVG  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

# Okabe and Ito (2008), "Color Universal Design": distinguishable with every common form of
# colour blindness, and in greyscale by lightness for the first few.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
           "#000000")
FLAGGED = "#D55E00"
NEUTRAL = "#555555"
HEATMAP = "cividis"  # perceptually uniform and readable with colour-vision deficiencies

COLUMN_WIDTH = 3.3  # inches: one column of a two-column ACL/IEEE page (8.1 cm)
ROW_HEIGHT = 0.24  # inches per plotted row (a system, a question part)
RC = {
    "font.family": "DejaVu Sans", "font.size": 7, "axes.titlesize": 8, "axes.labelsize": 7,
    "xtick.labelsize": 6.5, "ytick.labelsize": 6.5, "legend.fontsize": 6.5,
    "axes.spines.top": False, "axes.spines.right": False, "axes.prop_cycle":
        matplotlib.cycler(color=PALETTE),
    "svg.hashsalt": "annotate-figures",  # element ids repeat from one run to the next
    "svg.fonttype": "none",  # text stays text: searchable, selectable, small
    "pdf.fonttype": 42,  # TrueType fonts embedded whole, as publishers ask
    "pdf.compression": 6,
}
NO_DATES_SVG = {"Date": None, "Creator": None}
NO_DATES_PDF = {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None}


def new_figure(height: float, width: float = COLUMN_WIDTH) -> Figure:
    with matplotlib.rc_context(RC):
        return Figure(figsize=(width, max(height, 1.2)), layout="constrained")


def rc():
    """The context every drawing runs in (fonts, sizes, hash salt)."""
    return matplotlib.rc_context(RC)


UNSAFE = ("<script", "<foreignobject", "javascript:", 'href="http')
HANDLER = re.compile(r"<[^>]*\son[a-z]+\s*=")


def check_safe(svg: str) -> str:
    """Our drawing holds no script, no foreign HTML, no handler and no outside link (labels
    that a worker or a researcher wrote are escaped text); a failure here is a bug."""
    lowered = svg.lower()
    for marker in UNSAFE:
        if marker in lowered:
            raise ValueError(f"unsafe SVG output ({marker!r})")
    if HANDLER.search(lowered):
        raise ValueError("unsafe SVG output (an event handler)")
    return svg


def render(figure: Figure, *, title: str, pdf: bool) -> dict:
    """The figure as SVG text and, when asked, as base64 PDF; both the same bytes every time."""
    out = {}
    with rc():
        buffer = io.BytesIO()
        FigureCanvasSVG(figure).print_svg(buffer, metadata={**NO_DATES_SVG, "Title": title})
        out["svg"] = check_safe(buffer.getvalue().decode("utf-8"))
        if pdf:
            buffer = io.BytesIO()
            FigureCanvasPdf(figure).print_pdf(buffer, metadata={**NO_DATES_PDF, "Title": title})
            out["pdf"] = base64.b64encode(buffer.getvalue()).decode("ascii")
    return out
