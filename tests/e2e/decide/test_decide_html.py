"""The decision's HTML page (decide --html) and the report's decide section, opened in real
headless Chromium: the Pareto plots load, the choices are on the page, nothing reaches
the network, model names are text. Install the browser with scripts/system-deps.sh."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ctxprobe.cli import main

ARTIFACTS = Path(__file__).resolve().parents[3] / "artifacts" / "decide"


def _chromium_class() -> type:
    """The suite's one DevTools driver (tests/helpers/chromium_driver.py)."""
    from chromium_driver import Chromium

    return Chromium


@pytest.fixture()  # one browser a page: its open() waits for the first load event it sees
def browser(tmp_path_factory):
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.fail("headless Chromium is required: run scripts/system-deps.sh (apt-get install chromium)")
    b = _chromium_class()(binary, tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


def _check_page(browser, path: Path, shot: str) -> str:
    browser.open(path.as_uri(), width=1366)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.screenshot(ARTIFACTS / shot, full=True)
    assert browser.js("document.images.length") >= 1
    assert browser.js("[...document.images].every(i => i.complete && i.naturalWidth > 200)")
    assert browser.js("document.querySelectorAll('script').length") == 0
    urls = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    assert all(u.startswith(("file:", "data:", "about:")) for u in urls), urls
    return str(browser.js("document.body.innerText"))


@pytest.mark.slow
def test_decide_page_renders_in_chromium(priced_sims, browser, tmp_path) -> None:
    pytest.importorskip("matplotlib")  # the plot extra: CI installs it
    store, prices, ids = priced_sims
    page = tmp_path / "decide.html"
    assert main(["decide", *ids.values(), "--store", str(store), "--prices", str(prices), "--bands", "2k,4k,8k",
                 "--html", str(page)]) == 0
    text = _check_page(browser, page, "decide.png")
    assert "Decision: which model for which need" in text
    assert "sim:decay?cliff=3000&width=1" in text and "$1.00" in text and "$10.00" in text
    alts = browser.js("[...document.images].map(i => i.alt)")
    assert alts == ["niah Pareto plot"]


@pytest.mark.slow
def test_report_has_a_decide_section(priced_sims, browser, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    store, _prices, ids = priced_sims
    page = tmp_path / "report.html"
    assert main(["report", *ids.values(), "--store", str(store), "--html", str(page), "--no-plots"]) == 0
    text = _check_page(browser, page, "report-decide.png")
    section = browser.js("document.getElementById('section-decide').innerText")
    assert "Decision: which model for which need" in section and "sim:perfect" in section
    # report takes no price file and sims have no list price: no empty Pareto plot, a note says why
    assert browser.js("document.querySelectorAll('#section-decide img').length") == 0
    assert "no price plot for niah: none of its runs has a price" in " ".join(section.split())
    assert "Decision: which model" in browser.js("[...document.querySelectorAll('nav.toc a')].map(a => a.innerText)"
                                                  ".join(' ')")
    assert "niah up to" not in text  # the page's tables, not the terminal's lines
