"""Tables as LaTeX (booktabs) and CSV, with every supplied text escaped."""
from __future__ import annotations

import csv
import io
import re

from ..cells import csv_cell

SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
           "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
           "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}"}
PATTERN = re.compile("|".join(re.escape(k) for k in SPECIAL))


def escape(text) -> str:
    return PATTERN.sub(lambda m: SPECIAL[m.group()], str(text))


def _cell(value) -> str:
    if value is None:
        return "--"
    if isinstance(value, float):
        return f"{value:.3f}"
    return escape(value)


def _numeric(rows: list[list], column: int) -> bool:
    values = [r[column] for r in rows if r[column] is not None]
    return bool(values) and all(isinstance(v, int | float) and not isinstance(v, bool)
                                for v in values)


def latex_table(title: str, columns: list[str], rows: list[list], label: str) -> str:
    """A table environment with booktabs rules, numbers right-aligned."""
    align = "".join("r" if _numeric(rows, i) else "l" for i in range(len(columns)))
    lines = ["\\begin{table}[t]", "\\centering", "\\small",
             f"\\caption{{{escape(title)}}}", f"\\label{{tab:{label}}}",
             f"\\begin{{tabular}}{{{align}}}", "\\toprule",
             " & ".join(escape(c) for c in columns) + " \\\\", "\\midrule"]
    lines += [" & ".join(_cell(v) for v in row) + " \\\\" for row in rows]
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}", ""]
    return "\n".join(lines)


def csv_table(columns: list[str], rows: list[list]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_cell(c) for c in columns])
    writer.writerows([csv_cell(v) for v in row] for row in rows)
    return buffer.getvalue()
