"""``ctxprobe view --bundle DIR``: the same pages written as a static site (a CI
artifact) that opens from disk with no server: the runs page, every run page with its
``report --json``, every cell and case page, each run's case list and the history page,
side by side in one folder with relative links. Rendered by the same functions as the
server's pages (:mod:`ctxprobe.view.pages`), only the links differ."""

from __future__ import annotations

import json
from pathlib import Path

from ctxprobe.core.records import CaseRecord
from ctxprobe.errors import CtxprobeError
from ctxprobe.view import pages
from ctxprobe.view.casefold import case_view
from ctxprobe.view.history import slices
from ctxprobe.view.links import BundleLinks
from ctxprobe.view.runs import run_rows
from ctxprobe.view.source import StoreSource


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise CtxprobeError(f"cannot write {path}: {err.strerror or err}") from None


def write_bundle(store_path: str | Path, out_dir: str | Path) -> Path:
    """Every page of the store under ``out_dir`` (created); returns its ``index.html``."""
    source = StoreSource(store_path)
    source.check()
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CtxprobeError(f"cannot create {out}: {err.strerror or err}") from None
    links = BundleLinks()
    rows = run_rows(source)
    _write(out / "index.html", pages.runs_page(rows, links, store=str(source.path)))
    _write(out / links.history(), pages.history_page(slices(source), links))
    for row in rows:
        loaded = source.loaded(row.run_id)
        rid = loaded.report.run.run_id
        _write(out / links.run(rid), pages.run_page(loaded, links))
        _write(out / links.run_json(rid), json.dumps(loaded.json, indent=2))
        records = source.records(rid)
        _write(out / links.cases(rid), pages.cases_page(loaded, records, None, links))
        cells: dict[tuple[str, int, float], list[CaseRecord]] = {}
        for rec in records:
            cells.setdefault((rec.family, rec.length, rec.depth), []).append(rec)
            _write(out / links.case(rid, rec.case_id), pages.case_page(loaded, case_view(rec), links))
        for (family, length, depth), recs in cells.items():
            _write(out / links.cell(rid, family, length, depth),
                   pages.cell_page(loaded, family, length, depth, recs, links))
    return out / "index.html"
