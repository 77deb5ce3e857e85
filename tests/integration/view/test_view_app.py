"""``ctxprobe view`` through Starlette's TestClient over a real store (real sim sweeps):
every page, the run page's numbers against ``report --json``, read-only opening, escaping,
secrets, and the one-line errors."""

from __future__ import annotations

import hashlib
import html
import json
import sqlite3
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from ctxprobe.cli import main
from ctxprobe.errors import CtxprobeError
from ctxprobe.report.load import load_report, report_json
from ctxprobe.report.compare_runs import compare_runs
from ctxprobe.report.terminal import interval_lines
from ctxprobe.spec import make_spec
from ctxprobe.store import Store, iter_export, iter_records, reading_only
from ctxprobe.sweep.run import run_sweep
from ctxprobe.view import host_warning, make_app, write_bundle
from ctxprobe.view.casefold import case_view

from view_data import EVIL_OUTPUT, EVIL_PROMPT, SECRET


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text inside given elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))


def tags(html: str) -> list[tuple[str, dict[str, str]]]:
    p = Tags()
    p.feed(html)
    return p.tags


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def client(view_store: dict[str, Any]) -> TestClient:
    return TestClient(make_app(view_store["store"]))


def test_run_page_cells_are_report_json_cells(client: TestClient, view_store: dict[str, Any]) -> None:
    for run_id in (view_store["perfect"], view_store["blind"], view_store["imported"]):
        want = report_json([run_id], view_store["store"])
        assert isinstance(want, dict)
        # the JSON the page is built from is report --json's, field for field
        assert client.get(f"/api/run/{run_id}").json() == json.loads(json.dumps(want))
        page = client.get(f"/run/{run_id}")
        assert page.status_code == 200
        shown = [json.loads(a["data-stat"]) for t, a in tags(page.text) if t == "td" and "data-stat" in a]
        cells = [c for p in want["profiles"] for c in p["cells"]]
        assert len(shown) == len(cells) > 0
        assert sorted(shown, key=lambda c: (c["family"], c["length"], c["depth"])) == \
            sorted(cells, key=lambda c: (c["family"], c["length"], c["depth"]))
        # the interval statements exactly as `report` prints them
        rep = load_report(run_id, view_store["store"])
        for iv in rep.intervals.values():
            for line in interval_lines(iv, rep.threshold):
                assert line in html.unescape(page.text)
        for note in rep.notes:
            assert note in html.unescape(page.text)


def test_blind_middle_heatmap_shows_its_hole(client: TestClient, view_store: dict[str, Any]) -> None:
    """The heatmap's text and hover: blind-middle fails the middle depth and nothing else."""
    page = client.get(f"/run/{view_store['blind']}").text
    cells = {(int(a["data-length"]), float(a["data-depth"])): a for t, a in tags(page) if t == "td" and "data-stat" in a}
    assert {k for k, a in cells.items() if json.loads(a["data-stat"])["mean"] == 0.0} == \
        {(512, 0.5), (1024, 0.5), (2048, 0.5)}
    tip = cells[(1024, 0.5)]["title"]
    assert "accuracy 0.00" in tip and "n=2" in tip and "Wilson 95% CI [0.00–" in tip


def test_a_cell_lists_its_cases_and_a_case_shows_its_needle(client: TestClient, view_store: dict[str, Any]) -> None:
    run_id = view_store["blind"]
    page = client.get(f"/run/{run_id}").text
    links = [a["href"] for t, a in tags(page) if t == "a" and "/cell/" in a.get("href", "")]
    assert f"/run/{run_id}/cell/niah/1024/0.5" in links
    cell = client.get(f"/run/{run_id}/cell/niah/1024/0.5")
    assert cell.status_code == 200
    case_links = [a["href"] for t, a in tags(cell.text) if t == "a" and a.get("href", "").startswith("/case/")]
    recs = [r for r in iter_export(run_id, view_store["store"]) if r["length"] == 1024 and r["depth"] == 0.5]
    assert sorted(case_links) == sorted(f"/case/{run_id}/{r['case_id']}" for r in recs)
    rec = recs[0]
    case = client.get(case_links[0] if case_links[0].endswith(rec["case_id"]) else f"/case/{run_id}/{rec['case_id']}")
    assert case.status_code == 200
    needle = rec["meta"]["needle"]
    assert f'<mark class="ev">{needle}</mark>' in case.text
    for d in rec["distractors"]:
        assert f'<mark class="dis">{d}</mark>' in case.text
    assert f'<mark class="q">{rec["meta"]["question"]}</mark>' in case.text
    assert "tokens built 1,024" in case.text.replace("</th><td>", " ") or "built 1,024" in case.text


def test_folded_prompt_keeps_every_character(view_store: dict[str, Any]) -> None:
    """Folding hides filler, never drops it: the pieces join back to the whole prompt."""
    from ctxprobe.report.evidence import prompt_text

    for rec in iter_records(view_store["perfect"], view_store["store"]):
        v = case_view(rec, keep=40)
        assert "".join(p.text for p in v.pieces) == prompt_text(rec.messages)
        assert any(p.kind == "fold" for p in v.pieces) and any(p.kind == "evidence" for p in v.pieces)
        assert all(len(p.text) > 0 for p in v.pieces)


def test_untrusted_text_is_escaped(client: TestClient, view_store: dict[str, Any]) -> None:
    run_id, case_id = view_store["blind"], view_store["evil"]
    page = client.get(f"/case/{run_id}/{case_id}").text
    assert "<script>window.pwned" not in page and "<img src=x" not in page and "<b>bold?</b>" not in page
    assert "&lt;script&gt;window.pwned=1;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=&#34;window.pwned=2;alert(2)&#34;&gt;" in page
    assert "&lt;script&gt;window.pwned=3&lt;/script&gt;" in page  # the prompt's markup too
    # the one script on the page is ours, allowed by its hash; nothing inline else may run
    assert [t for t, _ in tags(page)].count("script") == 1
    csp = next(a["content"] for t, a in tags(page) if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in csp and "script-src 'sha256-" in csp and "unsafe-inline" not in csp.split(";")[1]
    assert EVIL_OUTPUT and EVIL_PROMPT


def test_secrets_never_shown(client: TestClient, view_store: dict[str, Any]) -> None:
    for url in ("/", "/api/runs", f"/run/{view_store['secret']}", "/history", "/api/history"):
        r = client.get(url)
        assert r.status_code == 200, url
        assert SECRET not in r.text, url
    assert "REDACTED" in client.get("/").text


def test_runs_page_lists_every_run(client: TestClient, view_store: dict[str, Any]) -> None:
    data = client.get("/api/runs").json()["runs"]
    by_id = {r["run_id"]: r for r in data}
    assert set(by_id) >= {view_store[k] for k in ("perfect", "blind", "imported", "secret")}
    assert by_id[view_store["imported"]]["source"] == "inspect"
    assert by_id[view_store["imported"]]["model"] == "inspect:mockllm/model"
    perfect = by_id[view_store["perfect"]]
    rep = load_report(view_store["perfect"], view_store["store"])
    assert perfect["lengths"][0]["line"] == rep.intervals["niah"].line()
    assert (perfect["answered"], perfect["planned"], perfect["status"]) == (18, 18, "complete")
    page = client.get("/").text
    assert "imported: inspect" in page and rep.intervals["niah"].line() in page


def test_cases_filter_by_outcome(client: TestClient, view_store: dict[str, Any]) -> None:
    run_id = view_store["blind"]
    page = client.get(f"/run/{run_id}/cases?outcome=not_found").text
    assert '<option value="not_found" selected>' in page
    rows = [a["data-outcome"] for t, a in tags(page) if t == "tr" and "data-outcome" in a]
    assert sorted(rows) == sorted(r["outcome"] for r in iter_export(run_id, view_store["store"]))


def test_compare_marks_the_holm_significant_cells(tmp_path: Path) -> None:
    store = tmp_path / "c.sqlite"
    grid = {"lengths": "512", "depths": "0,0.5,1", "reps": 8, "families": {"niah": {}}}
    a = run_sweep(make_spec({"model": "sim:perfect", **grid}), store, progress=False).run_id
    b = run_sweep(make_spec({"model": "sim:blind-middle", **grid}), store, progress=False).run_id
    want = compare_runs(a, b, store)
    page = TestClient(make_app(store)).get(f"/compare/{a}/{b}")
    assert page.status_code == 200
    marked = {(a_["title"].split(":")[0]) for t, a_ in tags(page.text) if t == "td" and a_.get("data-significant") == "yes"}
    expected = {c.label for f in want.families for c in f.cells if c.significant}
    assert marked == expected == {"niah L=512 d=50%"}
    assert want.verdict() in html.unescape(page.text)


def test_decide_page_with_a_price_file(client: TestClient, view_store: dict[str, Any], tmp_path: Path) -> None:
    prices = tmp_path / "p.yaml"
    prices.write_text('"sim:perfect": {input: 3, output: 3}\n"sim:blind-middle": {input: 1, output: 1}\n')
    q = f"/decide?run={view_store['perfect']}&run={view_store['blind']}&prices={quote(str(prices))}"
    page = client.get(q)
    assert page.status_code == 200
    assert "$3.00" in page.text and "$1.00" in page.text and "Pareto plot" in page.text
    one = client.get(f"/decide?run={view_store['perfect']}")
    assert one.status_code == 404 and "select two or more" in one.text
    other = client.get(f"/decide?run={view_store['perfect']}&run={view_store['blind']}&prices=/etc/passwd")
    assert other.status_code == 404 and "give a YAML price file" in other.text and "root:" not in other.text


def test_history_groups_a_slice_apart_from_the_model(client: TestClient, view_store: dict[str, Any]) -> None:
    found = client.get("/api/history").json()
    (sl,) = [s for s in found if view_store["perfect"] in s["runs"]]
    created = [p["created"] for p in sl["families"]["niah"]]
    assert created == sorted(created) and [p["run_id"] for p in sl["families"]["niah"]] == sl["runs"]
    assert set(sl["runs"]) == {view_store["perfect"], view_store["blind"]}
    for p in sl["families"]["niah"]:
        iv = load_report(p["run_id"], view_store["store"]).intervals["niah"]
        assert (p["point"], p["lo"], p["hi"], p["line"]) == (iv.point, iv.lo, iv.hi, iv.line())
    assert client.get("/history").status_code == 200


def test_unknown_pages_are_one_line(client: TestClient, view_store: dict[str, Any]) -> None:
    r = client.get("/run/ffffffffffff")
    assert r.status_code == 404 and "no run &#39;ffffffffffff&#39;" in r.text
    r = client.get(f"/case/{view_store['blind']}/niah/L9/d0/r0")
    assert r.status_code == 404 and "has no case" in r.text
    assert client.get(f"/run/{view_store['blind']}/cell/niah/512/abc").status_code == 404


def test_the_store_is_never_written(view_store: dict[str, Any], tmp_path: Path) -> None:
    """Every page served from a read-only file: nothing changes, nothing is created."""
    src = view_store["store"]
    copy = tmp_path / "ro.sqlite"
    with sqlite3.connect(src) as a, sqlite3.connect(copy) as b:
        a.backup(b)
    copy.chmod(0o444)
    before = digest(copy)
    c = TestClient(make_app(copy))
    for url in ("/", "/api/runs", f"/run/{view_store['blind']}", f"/run/{view_store['blind']}/cases",
                f"/case/{view_store['blind']}/{view_store['evil']}", "/history",
                f"/compare/{view_store['perfect']}/{view_store['blind']}"):
        assert c.get(url).status_code == 200, url
    assert digest(copy) == before
    with reading_only(), Store(copy) as store, pytest.raises(sqlite3.OperationalError, match="readonly"):
        store.db.execute("DELETE FROM runs")  # opened mode=ro: a write is refused by SQLite itself
    # beside it at most SQLite's own read-side WAL index files, the log empty: nothing written
    extra = {p.name: p.stat().st_size for p in tmp_path.iterdir() if p.name != "ro.sqlite"}
    assert set(extra) <= {"ro.sqlite-wal", "ro.sqlite-shm"} and extra.get("ro.sqlite-wal", 0) == 0


def test_an_older_store_is_refused_and_left_alone(view_store: dict[str, Any], tmp_path: Path) -> None:
    old = tmp_path / "old.sqlite"
    with sqlite3.connect(view_store["store"]) as a, sqlite3.connect(old) as b:
        a.backup(b)
    with sqlite3.connect(old) as db:
        db.execute("DELETE FROM _migrations WHERE name='m007_cache_write_tokens'")
    before = digest(old)
    with pytest.raises(CtxprobeError) as err:
        make_app(old)
    msg = str(err.value)
    assert "\n" not in msg and "m007_cache_write_tokens" in msg and "older version" in msg
    assert digest(old) == before
    with reading_only(), pytest.raises(CtxprobeError):
        Store(old)
    junk = tmp_path / "junk.sqlite"
    with sqlite3.connect(junk) as db:
        db.execute("CREATE TABLE t (x)")
    with pytest.raises(CtxprobeError, match="no ctxprobe store"):
        make_app(junk)
    (tmp_path / "text.sqlite").write_text("not a database at all " * 100)
    with pytest.raises(CtxprobeError, match="cannot read store"):
        make_app(tmp_path / "text.sqlite")


def test_cli_errors_and_host_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", "--store", str(tmp_path / "missing.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "no store at" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "missing.sqlite").exists()
    assert host_warning("127.0.0.1") is None and host_warning("localhost") is None
    warning = host_warning("0.0.0.0")
    assert warning is not None and "\n" not in warning and "0.0.0.0" in warning


def test_bundle_links_resolve_on_disk(view_store: dict[str, Any], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bundle"
    assert main(["view", "--store", str(view_store["store"]), "--bundle", str(out)]) == 0
    assert f"wrote {out / 'index.html'}" in capsys.readouterr().out.replace("\n", "")  # a long path wraps
    pages = sorted(out.glob("*.html"))
    blind = view_store["blind"]
    assert (out / f"run-{blind}.html").is_file()
    recs = list(iter_export(blind, view_store["store"]))
    assert len([p for p in pages if p.name.startswith(f"case-{blind}-")]) == len(recs)
    for page in pages:
        for t, a in tags(page.read_text(encoding="utf-8")):
            href = a.get("href") if t == "a" else None
            if href and not href.startswith("#"):
                assert not href.startswith(("/", "http")), (page.name, href)
                assert (out / href.split("#")[0]).is_file(), (page.name, href)
    # the bundle's run page holds the same cells as the server's
    served = TestClient(make_app(view_store["store"])).get(f"/run/{blind}").text
    cells = lambda html: sorted(a["data-stat"] for t, a in tags(html) if "data-stat" in a)  # noqa: E731
    assert cells((out / f"run-{blind}.html").read_text(encoding="utf-8")) == cells(served)
    assert json.loads((out / f"run-{blind}.json").read_text()) == json.loads(json.dumps(report_json([blind], view_store["store"])))
    assert write_bundle(view_store["store"], out) == out / "index.html"  # again: overwritten, not refused


def test_templates_and_script_ship_as_package_data() -> None:
    """Every file the pages read is declared package data (the wheel carries it) and found
    as a resource; every template compiles."""
    import fnmatch
    from importlib import resources

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        from pip._vendor import tomli as tomllib

    from ctxprobe.view.pages import environment

    root = Path(__file__).resolve().parents[3]
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["ctxprobe.view"]
    pkg = root / "src" / "ctxprobe" / "view"
    files = sorted(str(p.relative_to(pkg)) for d in ("templates", "static") for p in (pkg / d).iterdir())
    assert len(files) >= 12
    assert [f for f in files if not any(fnmatch.fnmatch(f, g) for g in globs)] == []
    for f in files:
        assert (resources.files("ctxprobe.view") / f).is_file()
        if f.endswith(".j2"):
            environment().get_template(f.removeprefix("templates/"))


def test_a_running_run_is_live_until_its_process_is_gone(view_store: dict[str, Any], tmp_path: Path) -> None:
    """A run a live session holds is ``running`` (live: the page keeps polling) and shows
    its progress; the same run with its session gone reads ``interrupted``, not live."""
    import os
    import socket
    import time as _time

    store = tmp_path / "live.sqlite"
    with sqlite3.connect(view_store["store"]) as a, sqlite3.connect(store) as b:
        a.backup(b)
    with Store(store) as s:
        s.ensure_run("11ve00000000", model="sim:perfect", tokenizer="local", family="niah", version="0",
                     spec={"model": "sim:perfect", "families": {"niah": {}}, "lengths": [512]},
                     meta={"planned_cases": 6})
        with s.db:
            s.db.execute("INSERT INTO sessions VALUES ('s1', '11ve00000000', ?, ?, ?, ?, NULL)",
                         (socket.gethostname(), os.getpid(), _time.time(), _time.time() + 600))
    c = TestClient(make_app(store))
    row = next(r for r in c.get("/api/runs").json()["runs"] if r["run_id"] == "11ve00000000")
    assert (row["status"], row["live"], row["progress"], row["percent"]) == ("running", True, "0/6", 0)
    assert '<span class="state running">running</span>' in c.get("/").text
    with sqlite3.connect(store) as db:
        db.execute("UPDATE sessions SET ended_at=? WHERE session_id='s1'", (_time.time(),))
    row = next(r for r in c.get("/api/runs").json()["runs"] if r["run_id"] == "11ve00000000")
    assert (row["status"], row["live"]) == ("interrupted", False)


def test_the_noise_floor_as_report_prints_it(tmp_path: Path) -> None:
    store = tmp_path / "floor.sqlite"
    rid = run_sweep(make_spec({"model": "sim:perfect", "families": {"niah": {}, "mrcr": {}}, "tokenizer": "local",
                               "lengths": "1k,2k", "reps": 2, "baseline": "no-context"}), store, progress=False).run_id
    rep = load_report(rid, store)
    assert rep.floors
    raw = TestClient(make_app(store)).get(f"/run/{rid}").text
    page = html.unescape(raw)
    for fam, fl in rep.floors.items():
        assert f"{fam}: {fl.line()}" in page
    # the floor twins are no profiles of their own: the heatmaps are the run's families only
    assert {json.loads(a["data-stat"])["family"] for t, a in tags(raw) if "data-stat" in a} == \
        {p.family for p in rep.profiles}


def test_another_host_is_served_with_a_one_line_warning(view_store: dict[str, Any]) -> None:
    """``--host 0.0.0.0``: the warning is the first line, then the server answers; stopped after."""
    import os
    import socket
    import subprocess
    import sys
    import time as _time
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    src = Path(__file__).resolve().parents[3] / "src"
    proc = subprocess.Popen([sys.executable, "-m", "ctxprobe.cli", "view", "--store", str(view_store["store"]),
                             "--host", "0.0.0.0", "--port", str(port)], stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(src), "COLUMNS": "80"})
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert first.startswith("warning: listening on 0.0.0.0") and "127.0.0.1" in first
        assert proc.stderr.readline().startswith("serving ")
        deadline = _time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/runs", timeout=5) as r:
                    assert r.status == 200
                break
            except OSError:
                assert _time.monotonic() < deadline and proc.poll() is None
                _time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_the_curve_is_the_json_lengths(view_store: dict[str, Any]) -> None:
    """Each curve point: its length's pooled mean and interval from ``report --json``,
    placed on the plot's 0–1 scale (the bar at the threshold), nothing recomputed."""
    from ctxprobe.view.charts import curve

    want = report_json([view_store["blind"]], view_store["store"])
    assert isinstance(want, dict)
    (prof,) = want["profiles"]
    c = curve(prof)

    def y(v: float) -> float:
        return round(c.top + (1 - v) * c.plot_h, 1)

    assert [p.label for p in c.points] == [s["length_label"] for s in prof["lengths"]]
    for p, s in zip(c.points, prof["lengths"]):
        assert (p.y, p.y_lo, p.y_hi) == (y(s["mean"]), y(s["lo"]), y(s["hi"]))
        assert f"accuracy {s['mean']:.2f}, n={s['n']}, 95% interval [{s['lo']:.2f}–{s['hi']:.2f}]" in p.tip
    assert c.bar_y == y(prof["threshold"]) and c.bar == prof["threshold"]
    xs = [p.x for p in c.points]
    assert xs == sorted(xs) and xs[0] == c.left and xs[-1] == c.left + c.plot_w


def test_urls_round_trip(view_store: dict[str, Any]) -> None:
    from ctxprobe.view.links import BundleLinks, ServerLinks, depth_text

    for d in (0.0, 0.5, 1.0, 1 / 3, 0.1 + 0.2):
        assert float(depth_text(d)) == d
    s, b = ServerLinks(), BundleLinks()
    assert s.case("r1", "niah/L1024/d0.5/r0") == "/case/r1/niah/L1024/d0.5/r0"
    assert s.cell("r1", "niah@no-context", 1024, 0.5) == "/run/r1/cell/niah%40no-context/1024/0.5"
    assert b.case("r1", "a/b") != b.case("r1", "a/c") and "/" not in b.case("r1", "a/b")
    assert b.cell("r1", "niah", 1024, 0.5) != b.cell("r1", "niah", 1024, 1.0)
