"""The paper bundle: a report's figures (PDF and SVG, sized for a two-column paper), its tables
(LaTeX with booktabs, and CSV), the methods paragraph, the BibTeX of what it cites, a HEDS-style
datasheet and the provenance, in one ZIP whose bytes depend only on its inputs.

Built from a cached report and the figures the statistics job drew with it: no drawing and no
statistics here, so a web request may build it.
"""
from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import zipfile

from .latex import csv_table, latex_table
from .methods import datasheet, methods
from .references import bibtex

FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # the ZIP format's epoch: no build time in the bytes


def _name(key: str, taken: set) -> str:
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", key).strip("-.")[:80] or "figure"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    taken.add(name)
    return name


def bundle_files(report: dict, figures: list[dict]) -> dict[str, bytes]:
    """Every file of the bundle by its path."""
    files: dict[str, bytes] = {}
    taken: set = set()
    tables = []
    for f in figures:
        name = _name(f["key"], taken)
        files[f"figures/{name}.svg"] = f["svg"].encode()
        if f.get("pdf"):
            files[f"figures/{name}.pdf"] = base64.b64decode(f["pdf"])
        files[f"tables/{name}.csv"] = csv_table(f["columns"], f["rows"]).encode()
        files[f"tables/{name}.tex"] = latex_table(f["title"], f["columns"], f["rows"],
                                                  name).encode()
        tables.append(name)
    text = methods(report)
    provenance = report.get("provenance") or {}
    files["methods.tex"] = text["latex"].encode()
    files["methods.txt"] = text["text"].encode()
    files["references.bib"] = bibtex(text["cited"]).encode()
    if provenance:
        files["datasheet.md"] = datasheet(report, provenance).encode()
    files["check.tex"] = _check_document(tables).encode()
    files["provenance.json"] = json.dumps(
        {**provenance, "files": {path: hashlib.sha256(data).hexdigest()
                                 for path, data in sorted(files.items())}},
        indent=2, sort_keys=True, default=str).encode()
    return files


def _check_document(tables: list[str]) -> str:
    """A LaTeX document that inputs every table and the methods with the bibliography: compile
    it (pdflatex check; bibtex check; pdflatex check twice) to see them as a paper will."""
    lines = ["\\documentclass[twocolumn]{article}", "\\usepackage[T1]{fontenc}",
             "\\usepackage[utf8]{inputenc}", "\\usepackage{booktabs}",
             "\\usepackage{graphicx}", "\\begin{document}", "\\section*{Human evaluation}",
             "\\input{methods.tex}"]
    lines += [f"\\input{{tables/{t}.tex}}" for t in tables]
    lines += ["\\bibliographystyle{plain}", "\\bibliography{references}", "\\end{document}", ""]
    return "\n".join(lines)


def bundle_zip(report: dict, figures: list[dict]) -> bytes:
    """The bundle as ZIP bytes: entries sorted, fixed times and permissions."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, data in sorted(bundle_files(report, figures).items()):
            info = zipfile.ZipInfo(f"paper-bundle/{path}", date_time=FIXED_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()
