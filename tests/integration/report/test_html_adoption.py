"""The HTML report says which haystack was used, orders failures as it claims, lists only what ran."""

from __future__ import annotations

import re

from ctxprobe.report.html.page import build_html_report
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep


def _run(store, model: str, families: str, **extra: object) -> str:
    spec = make_spec({"model": model, "lengths": "512,1k,2k", "depths": "0,0.5,1", "reps": 1,
                      "families": families, **extra})
    return run_sweep(spec, store, progress=False).run_id


def test_html_names_haystack_orders_failures_and_skips_families_not_run(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    docs = tmp_path / "filler"
    docs.mkdir()
    (docs / "a.txt").write_text("The quiet harbour wakes slowly. " * 400, encoding="utf-8")
    a = _run(store, "sim:blind-middle", "niah")
    b = _run(store, "sim:blind-middle", "vartrack", haystack=str(docs))
    out = tmp_path / "r.html"
    build_html_report([a, b], store, out)
    html = out.read_text(encoding="utf-8")
    assert "generated neutral prose (built in, seeded)" in html
    assert f"your text files: {docs}" in html
    profile = html[html.index('id="profile"'):html.index("</section>", html.index('id="profile"'))]
    assert "not run" not in profile
    assert profile.count("<tr>") - 1 == 2  # header + one row per family that ran (niah in a, vartrack in b)
    failures = html[html.index('id="failures"'):]
    assert "longest lengths first" in failures
    for run_part in failures.split("<h3>")[1:]:
        shown = re.findall(r"· (\d+K|\d+) · depth", run_part)
        values = [int(s[:-1]) * 1024 if s.endswith("K") else int(s) for s in shown]
        assert len(set(values)) > 1 and values == sorted(values, reverse=True), shown
