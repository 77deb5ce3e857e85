"""The HTML report opened in real headless Chromium: sections, no errors, no network, escaping.

Chromium is driven over the DevTools protocol through ``--remote-debugging-pipe`` (file
descriptors 3 and 4, NUL-separated JSON), so no websocket client or extra package is
needed. Screenshots are kept under ``artifacts/html-report/`` (gitignored) for a human
to look at. Install the browser with ``scripts/system-deps.sh``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from chromium_driver import Chromium
from ctxprobe.core.records import StoredResponse
from ctxprobe.report.html.page import build_html_report
from ctxprobe.store import iter_export
from ctxprobe.spec import make_spec
from ctxprobe.store import Store
from ctxprobe.sweep.run import run_sweep
from ctxprobe.core.case import Case, Cell

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "html-report"
EVIL_OUTPUT = "<script>alert(1)</script></table></pre><img src=x onerror=alert(2)> & [bold]not markup[/bold]"
EVIL_PROMPT = "</pre></details><script>alert(3)</script><b>bold?</b>"
SECTIONS = ["summary", "metadata", "profile", "all-families", "families", "family-niah", "audit", "cost-latency",
            "failures"]


def _inject_untrusted(store_path: Path, run_id: str) -> str:
    """A real case whose prompt and model reply carry markup; returns its case id."""
    rec = next(r for r in iter_export(run_id, store_path) if r["outcome"] != "correct")
    content = rec["messages"][-1]["content"].replace(rec["meta"]["needle"], rec["meta"]["needle"] + " " + EVIL_PROMPT)
    case = Case(Cell(rec["family"], rec["length"], rec["depth"]), rec["rep"], rec["seed"],
                [{"role": "user", "content": content}], rec["expected"], rec["distractors"], rec["meta"],
                rec["token_count"], rec["needle_token_pos"], rec["realised_depth"])
    with Store(store_path) as store:
        with store.db:  # the store never replaces a stored case or answer: clear them first
            store.db.execute("DELETE FROM responses WHERE run_id=? AND case_id=?", (run_id, rec["case_id"]))
            store.db.execute("DELETE FROM cases WHERE run_id=? AND case_id=?", (run_id, rec["case_id"]))
        store.save_case(run_id, case)
        store.save_response(run_id, rec["case_id"], StoredResponse(output=EVIL_OUTPUT, finish_reason="stop",
                            reported_prompt_tokens=rec["token_count"], completion_tokens=30, latency_s=0.01,
                            attempts=1, error=None, score=0.0, outcome="wrong", detail={}))
    return rec["case_id"]


@pytest.fixture(scope="module")
def report_file(tmp_path_factory) -> tuple[Path, list[str]]:
    store = tmp_path_factory.mktemp("html") / "s.sqlite"
    grid = {"lengths": "512,1k,2k", "depths": "0,0.5,1", "reps": 2, "families": {"niah": {"distractors": 2}}}
    ids = [run_sweep(make_spec({"model": m, **grid}), store, progress=False).run_id
           for m in ("sim:decay?cliff=600&width=1200", "sim:blind-middle")]
    _inject_untrusted(store, ids[0])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    out = build_html_report(ids, store, ARTIFACTS / "report.html", png_dir=ARTIFACTS / "png", failures=40)
    return out, ids


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.fail("headless Chromium is required: run scripts/system-deps.sh (apt-get install chromium)")
    b = Chromium(binary, tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


def test_report_in_chromium(report_file, browser) -> None:
    path, ids = report_file
    browser.open(path.as_uri(), width=1366)
    browser.screenshot(ARTIFACTS / "top-1366.png")

    ids = browser.js("[...document.querySelectorAll('section[id], article[id]')].map(e => e.id)")
    assert [i for i in ids if i in SECTIONS] == SECTIONS
    summary = browser.js("document.getElementById('summary').innerText")
    # 6 cases a length cannot show 0.856 with 95% confidence: the summary says so
    assert "not shown reliable at any tested length" in summary and "observed 512" in summary
    # blind-middle fails 512 as observed, yet 6 cases cannot rule out that it clears up to 2K
    assert "reliable up to" not in summary and "(observed below 512; at most 2K)" in summary
    assert browser.js("[...document.images].every(i => i.complete && i.naturalWidth > 200)")
    assert browser.js("document.images.length") >= 7  # 2 all-families, 1 overlay, 2 × (heatmap + curve)
    # laptop width: nothing forces the page to scroll sideways
    assert browser.js("document.documentElement.scrollWidth") <= 1366

    # untrusted text is text: no script element, no dialog, the markup shows literally
    browser.js("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert browser.js("document.querySelectorAll('script, img[src=x]').length") == 0
    outputs = browser.js("[...document.querySelectorAll('pre.output')].map(p => p.textContent)")
    assert EVIL_OUTPUT in outputs
    excerpts = browser.js("[...document.querySelectorAll('pre.excerpt')].map(p => p.textContent).join('\\n')")
    assert EVIL_PROMPT in excerpts
    assert browser.js("document.querySelectorAll('mark.ev').length") > 0
    browser.screenshot(ARTIFACTS / "full-1366.png", full=True)

    methods = [e.get("method") for e in browser.events]
    assert "Page.javascriptDialogOpening" not in methods
    errors = [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"
              or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert"))
              or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]
    assert errors == []
    urls = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    assert [u for u in urls if not u.startswith("data:")] == [path.as_uri()]


def test_narrow_laptop_width(report_file, browser) -> None:
    path, _ = report_file
    # its own page at 1024 px (under xdist this test may run before any other opened one)
    browser.open(path.as_uri(), width=1024)
    assert browser.js("document.documentElement.scrollWidth") <= 1024
    browser.screenshot(ARTIFACTS / "top-1024.png")
