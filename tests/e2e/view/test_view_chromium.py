"""``ctxprobe view`` in real headless Chromium (Debian's ``chromium``, driven over the
DevTools protocol): the server as the user starts it (``ctxprobe view --store S --port P``
in its own process) over a store holding finished sweeps, an imported inspect run and a
sweep still running in another process. Pages render with no console error, two clicks
from the heatmap reach a failing case with its needle highlighted, the running sweep's
progress advances on the runs page without a reload, markup in a model's output runs
nothing, and ``--bundle`` opens from disk with no server. Screenshots are kept under
``$CTXPROBE_ARTIFACTS/view`` (default: the system temp dir's ``ctxprobe-artifacts``)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.store import iter_export, open_existing
from view_browser import Chromium
from view_data import EVIL_OUTPUT

pytestmark = pytest.mark.slow
ARTIFACTS = Path(os.environ.get("CTXPROBE_ARTIFACTS") or Path(tempfile.gettempdir()) / "ctxprobe-artifacts") / "view"
SRC = Path(__file__).resolve().parents[3] / "src"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.fail("headless Chromium is required: run scripts/system-deps.sh (apt-get install chromium)")
    b = Chromium(binary, tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


@pytest.fixture(scope="module")
def server(view_store: dict[str, Any]) -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "ctxprobe.cli", "view", "--store", str(view_store["store"]),
                             "--port", str(port)], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/api/runs", timeout=5) as r:
                    assert r.status == 200
                break
            except OSError:
                assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
                assert time.monotonic() < deadline, "the view server did not answer within 60 s"
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _clean(browser: Chromium, where: str) -> None:
    problems = browser.problems()
    assert not problems, f"{where}: console problems {problems}"
    # nothing fetched from the network: every request is the local server's, a file or inline
    away = [u for u in browser.requests() if not u.startswith(("http://127.0.0.1:", "file://", "data:", "about:"))]
    assert not away, f"{where}: requests beyond this machine {away}"


def test_every_page_renders_without_console_errors(browser: Chromium, server: str,
                                                   view_store: dict[str, Any]) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    blind, perfect = view_store["blind"], view_store["perfect"]
    browser.open(server + "/", width=1300)
    _clean(browser, "runs")
    listed = browser.js("[...document.querySelectorAll('#runs tbody tr')].map(r => r.dataset.run)")
    assert {blind, perfect, view_store["imported"]} <= set(listed)
    assert "imported: inspect" in browser.js("document.getElementById('runs').innerText")
    browser.screenshot(ARTIFACTS / "runs.png")
    for path in (f"/run/{blind}", f"/run/{blind}/cases?outcome=not_found", f"/compare/{perfect}/{blind}",
                 f"/decide?run={perfect}&run={blind}", "/history", f"/run/{view_store['imported']}"):
        browser.goto(server + path)
        _clean(browser, path)
        assert browser.js("document.querySelector('h1').innerText"), path
        assert browser.js("document.documentElement.scrollWidth") <= 1300, path
    # select two runs: compare; select them and decide (buttons enabled only then)
    browser.goto(server + "/")
    assert browser.js("document.getElementById('compare').disabled")
    browser.js(f"document.querySelector('input.pick[value=\"{perfect}\"]').click()")
    assert browser.js("document.getElementById('decide').disabled")
    browser.js(f"document.querySelector('input.pick[value=\"{blind}\"]').click()")
    browser.click_and_wait("#compare")
    assert browser.js("location.pathname") == f"/compare/{perfect}/{blind}"
    assert browser.js("document.querySelectorAll('td.hc').length") == 9
    browser.goto(server + "/")
    for rid in (perfect, blind):
        browser.js(f"document.querySelector('input.pick[value=\"{rid}\"]').click()")
    browser.click_and_wait("#decide")
    assert browser.js("location.pathname") == "/decide"
    assert browser.js("new URLSearchParams(location.search).getAll('run')") == [perfect, blind]
    assert "Decision" in browser.js("document.getElementById('decide').innerText")
    _clean(browser, "compare and decide from the runs page")
    # filter
    browser.goto(server + "/")
    browser.js("const f = document.getElementById('filter'); f.value = 'blind-middle'; "
               "f.dispatchEvent(new Event('input'))")
    visible = browser.js("[...document.querySelectorAll('#runs tbody tr')].filter(r => !r.hidden).map(r => r.dataset.run)")
    assert visible == [blind]
    # sort: numbers as numbers (cost, shortest effective length), rows without one last, both ways
    browser.goto(server + "/")
    for key in ("eff", "cost"):
        for direction in (1, -1):
            browser.js(f"document.querySelector('th[data-sort=\"{key}\"]').click()")
            got = browser.js(f"[...document.querySelectorAll('#runs tbody tr')].map(r => r.dataset.{key})")
            values = [float(v) for v in got if v != ""]
            assert len(values) >= 2 and values == sorted(values, reverse=direction < 0), (key, got)
            assert got[len(values):] == [""] * (len(got) - len(values)), (key, got)
    browser.goto(server + f"/run/{blind}")
    browser.screenshot(ARTIFACTS / "run.png")
    assert (ARTIFACTS / "run.png").stat().st_size > 10_000
    assert browser.js("document.querySelectorAll('table.heat td.hc').length") == 9
    assert browser.js("document.querySelectorAll('svg.curve circle').length") == 3


def test_two_clicks_from_the_heatmap_reach_a_failing_case(browser: Chromium, server: str,
                                                          view_store: dict[str, Any]) -> None:
    blind = view_store["blind"]
    browser.goto(server + f"/run/{blind}")
    # the middle depth's cell at 2K: blind-middle fails it
    browser.click_and_wait("td.hc[data-length='2048'][data-depth='0.5'] a")
    assert browser.js("location.pathname") == f"/run/{blind}/cell/niah/2048/0.5"
    _clean(browser, "cell")
    browser.click_and_wait("#cases tr[data-outcome]:not([data-outcome='correct']) a")
    path = browser.js("decodeURIComponent(location.pathname)")
    assert path.startswith(f"/case/{blind}/niah/L2048/d0.5/")
    _clean(browser, "case")
    case_id = path.removeprefix(f"/case/{blind}/")
    rec = next(r for r in iter_export(blind, view_store["store"]) if r["case_id"] == case_id)
    marked = browser.js("[...document.querySelectorAll('#prompt mark.ev')].map(m => m.textContent)")
    assert rec["meta"]["needle"] in marked
    colour = browser.js("getComputedStyle(document.querySelector('#prompt mark.ev')).backgroundColor")
    assert colour not in ("rgba(0, 0, 0, 0)", "transparent")
    assert browser.js("document.getElementById('outcome-badge').innerText") == rec["outcome"] != "correct"
    assert browser.js("document.getElementById('output').innerText") == rec["output"]
    # a folded stretch sits inside its line: the text after a closed fold starts beside its marker
    gap = browser.js("(() => { const s = document.querySelector('#prompt details.fold > summary'); "
                     "const r = document.createRange(); r.selectNodeContents(s.parentElement.nextSibling); "
                     "return r.getClientRects()[0].top - s.getClientRects()[0].top; })()")
    assert abs(gap) < 4, gap
    browser.screenshot(ARTIFACTS / "case.png")


def test_markup_in_an_output_runs_nothing(browser: Chromium, server: str, view_store: dict[str, Any]) -> None:
    browser.goto(server + f"/case/{view_store['blind']}/{view_store['evil']}")
    browser.js("document.querySelectorAll('details').forEach(d => d.open = true)")
    time.sleep(0.5)  # an <img onerror> would have fired by now
    assert browser.js("window.pwned === undefined")
    assert browser.js("document.querySelectorAll('main script, main img').length") == 0
    assert browser.js("document.getElementById('output').textContent") == EVIL_OUTPUT
    methods = [e.get("method") for e in browser.events]
    assert "Page.javascriptDialogOpening" not in methods
    _clean(browser, "evil case")


def _running_pages(browser: Chromium, server: str, run_id: str) -> bool:
    """In a second tab (the runs page keeps polling in the first): the running run's page,
    a cell and a case, and the history, all rendered while it runs. True if it still ran."""
    previous, tab = browser.tab(server + f"/run/{run_id}")
    try:
        assert "running" in browser.js("document.querySelector('main p.sub').innerText")
        # a running run is analysed again at most every 3 s: its first scored cell may take
        # that long to reach the heatmap, so reload for up to 10 s before asking for one
        deadline = time.monotonic() + 10
        while not browser.js("document.querySelectorAll('table.heat td.hc').length") and time.monotonic() < deadline:
            time.sleep(0.5)
            browser.goto(server + f"/run/{run_id}")
        assert browser.js("document.querySelectorAll('table.heat td.hc').length") >= 1
        browser.click_and_wait("table.heat td.hc a")
        browser.click_and_wait("#cases tr[data-outcome] a")
        assert browser.js("document.querySelectorAll('#prompt mark.ev').length") >= 1
        browser.goto(server + "/history")
        assert run_id in browser.js("document.querySelector('main').innerText")
        _clean(browser, "a running run's pages")
        now = browser.js("(() => { const x = new XMLHttpRequest(); x.open('GET', '/api/runs', false); x.send(); "
                         "return x.responseText; })()")
        rows = [r for r in json.loads(now)["runs"] if r["run_id"] == run_id]
        return bool(rows) and rows[0]["status"] == "running"
    finally:
        browser.back(previous, tab)


def test_a_running_sweep_updates_the_runs_page_live(browser: Chromium, server: str,
                                                    view_store: dict[str, Any]) -> None:
    store = view_store["store"]
    model = "sim:perfect?latency=0.6"
    sweep = subprocess.Popen([sys.executable, "-m", "ctxprobe.cli", "run", "--model", model, "--store", str(store),
                              "--family", "niah", "--lengths", "512,1k", "--depths", "0,0.5,1", "--reps", "5",
                              "--concurrency", "1", "--no-plots"], env=_env(), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        browser.goto(server + "/")
        browser.js("window.sameDocument = 'yes'")  # gone if the page reloads
        row = f"[...document.querySelectorAll('#runs tbody tr')].find(r => r.dataset.model === {model!r})"
        seen: list[str] = []
        pages_while_running = False
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            got = browser.js(f"(() => {{ const r = {row}; return r ? r.querySelector('.progress').textContent + ' ' "
                             "+ r.querySelector('.state').textContent : null; })()")
            if got and (not seen or seen[-1] != got):
                seen.append(got)
            if got and got.endswith("complete"):
                break
            if not pages_while_running and got and got.endswith("running") and not got.startswith("0/"):
                pages_while_running = _running_pages(browser, server, browser.js(f"{row}.dataset.run"))
            time.sleep(0.3)
        answered = [int(s.split("/")[0]) for s in seen]
        assert len([s for s in seen if s.endswith("running")]) >= 2, seen  # it advanced while running
        assert answered == sorted(answered) and answered[-1] == 30, seen
        assert seen[-1] == "30/30 complete", seen
        assert pages_while_running, "the running run's pages were not reached while it ran"
        assert browser.js("window.sameDocument") == "yes"  # no reload
        assert browser.js("performance.getEntriesByType('navigation').length") == 1
        eff = browser.js(f"{row}.querySelector('.eff').textContent")
        with open_existing(store) as s:
            (run,) = [r for r in s.list_runs() if r.model == model]
        from ctxprobe.report.load import load_report

        assert load_report(run.run_id, store).intervals["niah"].line() in eff
        _clean(browser, "live runs page")
    finally:
        sweep.terminate()
        sweep.wait(timeout=30)


def test_the_bundle_opens_from_disk(browser: Chromium, view_store: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    done = subprocess.run([sys.executable, "-m", "ctxprobe.cli", "view", "--store", str(view_store["store"]),
                           "--bundle", str(out)], env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    blind = view_store["blind"]
    browser.goto((out / "index.html").as_uri())
    _clean(browser, "bundle index")
    browser.click_and_wait(f"#runs tr[data-run='{blind}'] a")
    assert browser.js("location.pathname").endswith(f"/run-{blind}.html")
    browser.click_and_wait("td.hc[data-length='1024'][data-depth='0.5'] a")
    assert browser.js("location.protocol") == "file:"
    browser.click_and_wait("#cases tr[data-outcome] a")
    assert browser.js("document.querySelectorAll('#prompt mark.ev').length") >= 1
    browser.goto((out / f"cases-{blind}.html").as_uri() + "#not_found")
    shown = browser.js("[...document.querySelectorAll('#cases tbody tr')].filter(r => !r.hidden)"
                       ".map(r => r.dataset.outcome)")
    assert shown and set(shown) == {"not_found"}
    _clean(browser, "bundle pages")


def test_a_log_imported_from_inspect_is_listed(browser: Chromium, server: str, view_store: dict[str, Any],
                                               tmp_path: Path) -> None:
    """A real inspect_ai log (``ctxprobe/niah`` run by inspect with mockllm, whose replies a
    sim writes by reading each prompt), stored by ``ctxprobe import-inspect``, is a row of
    the runs page (the page picks it up while open) and its run page renders."""
    pytest.importorskip("inspect_ai")
    import asyncio
    import concurrent.futures

    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from ctxprobe.cli import main
    from ctxprobe.models import resolve_provider
    from ctxprobe.models.base import GenerateRequest
    from ctxprobe.tokenizers import resolve_tokenizer

    sim = resolve_provider("sim:first-half", resolve_tokenizer("local"))
    pool = concurrent.futures.ThreadPoolExecutor(1)

    def reply(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        chat = [{"role": m.role, "content": m.text} for m in messages]
        got = pool.submit(asyncio.run, sim.generate(GenerateRequest(messages=chat, max_tokens=48))).result()
        out = ModelOutput.from_content(model="mockllm", content=got.text)
        out.usage = ModelUsage(input_tokens=got.prompt_tokens or 0, output_tokens=got.completion_tokens or 0,
                               total_tokens=(got.prompt_tokens or 0) + (got.completion_tokens or 0))
        return out

    browser.goto(server + "/")
    browser.js("window.sameDocument = 'yes'")
    model = get_model("mockllm/model", custom_outputs=reply, memoize=False)
    (log,) = inspect_eval("ctxprobe/niah", model=model, log_dir=str(tmp_path / "logs"), display="none",
                          task_args={"lengths": "1k", "depths": "0,1", "reps": 2, "tokenizer": "local"})
    pool.shutdown()
    assert log.status == "success", log.error
    assert main(["import-inspect", log.location, "--store", str(view_store["store"])]) == 0
    with open_existing(view_store["store"]) as s:
        (run,) = [r for r in s.list_runs() if r.meta.extra.get("inspect_log") == Path(log.location).name]
    deadline = time.monotonic() + 30
    row = f"document.querySelector('#runs tr[data-run=\"{run.run_id}\"]')"
    while not browser.js(f"!!{row}") and time.monotonic() < deadline:
        time.sleep(0.3)
    assert browser.js(f"{row}.textContent").count(run.model) == 1
    assert browser.js("window.sameDocument") == "yes"
    browser.goto(server + f"/run/{run.run_id}")
    assert browser.js("document.querySelectorAll('table.heat td.hc').length") == 2
    _clean(browser, "imported inspect run")
