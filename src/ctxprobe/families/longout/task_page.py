"""The records page of ``longout`` and its TSV: pure text rules shared by the task (to
write them) and the sim (to read them)."""

from __future__ import annotations

import html
import re

HEADER = ("Name", "Category", "City", "Year", "Code")
CATEGORIES = ("kitchen", "garden", "office", "toys", "tools", "lighting")
CITIES = ("Leeds", "Porto", "Ghent", "Graz", "Cork", "Turku", "Lyon", "Bergen", "Utrecht", "Bilbao")
ROW_RE = re.compile(r"<tr>((?:<td>[^<]*</td>)+)</tr>")
CELL_RE = re.compile(r"<td>([^<]*)</td>")
QUESTION_RE = re.compile(r"Output every record of the table whose (\w+) is \"([^\"]+)\" as TSV rows")

Record = tuple[str, str, str, str, str]


def render_page(records: list[Record]) -> str:
    head = "".join(f"<th>{h}</th>" for h in HEADER)
    rows = "\n".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in records)
    return f"<html><body><h1>Catalogue</h1>\n<table>\n<tr>{head}</tr>\n{rows}\n</table>\n</body></html>"


def read_page(text: str) -> list[list[str]]:
    """Every data row of the table in ``text``, in page order."""
    return [[html.unescape(c) for c in CELL_RE.findall(cells)] for cells in ROW_RE.findall(text)]


def tsv(rows: list[list[str]] | list[Record]) -> str:
    return "\n".join(["\t".join(HEADER), *("\t".join(r) for r in rows)])


def fenced(body: str) -> str:
    return f"```tsv\n{body}\n```"


def question(column: str, value: str) -> str:
    return (f"Output every record of the table whose {column} is \"{value}\" as TSV rows, in the order they appear "
            f"on the page, with the header line {' '.join(HEADER)} (tab-separated) first. Wrap the TSV in ```tsv "
            "and ```.")
