"""Small faults found while trying ctxprobe as a new user would, each pinned by a test that
failed before its fix: messages that blamed the wrong thing, lines that said the wrong
thing, and an install warning."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ctxprobe.cli", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env={**os.environ, "COLUMNS": "200"})


# -- the --model help names every sim the registry serves ------------------------------------------


def test_model_help_lists_every_sim_kind() -> None:
    from ctxprobe.core import registry
    from ctxprobe.sim.model import _KIND_PARAMS

    family_kinds = {str(k) for e in registry.entries("families") for k in e.declaration().sim_kinds}
    kinds = set(_KIND_PARAMS) | family_kinds  # what `sim:KIND` accepts: the core kinds and the families' own
    assert {"late-reader", "reasoner"} <= kinds and {"interference", "out-budget", "capacity"} <= family_kinds
    flat = " ".join(_cli("run", "--help").stdout.split()).replace("- ", "-")  # argparse wraps at hyphens
    for kind in kinds:
        assert kind in flat, kind
    serve = " ".join(_cli("serve-sim", "--help").stdout.split()).replace("- ", "-")  # argparse wraps at hyphens
    assert all(kind in serve for kind in kinds)


def test_a_new_familys_sim_kind_is_in_the_model_help_without_an_edit(capsys: pytest.CaptureFixture[str]) -> None:
    from ctxprobe.cli import build_parser
    from ctxprobe.core import registry
    from ctxprobe.core.catalog import model_help
    from ctxprobe.core.declaration import FamilyDeclaration

    assert "newfamilysim" not in model_help()
    registry.register("families", "new-fam", FamilyDeclaration("new-fam", "ctxprobe.families.niah.task:Niah",
                                                               sim_kinds={"newfamilysim": "x:Y"}), origin="test")
    try:
        assert "newfamilysim" in model_help()
        with pytest.raises(SystemExit):
            build_parser().parse_args(["run", "--help"])
        assert "newfamilysim" in " ".join(capsys.readouterr().out.split())
    finally:
        registry.unregister("families", "new-fam")


# -- compare/check: no effective length is "below the shortest length", not "none" -----------------


def test_compare_says_below_the_shortest_length() -> None:
    from ctxprobe.analysis.compare import CaseResult, RunCases, compare_cases

    def run(rid: str, score: float) -> RunCases:
        cases = {}
        for length in (1024, 4096):
            for r in range(3):
                cid = f"niah/L{length}/r{r}"
                cases[cid] = CaseResult(cid, cid, "niah", length, 0.5, score, "correct" if score else "wrong")
        return RunCases(rid, "m", cases)

    verdict = compare_cases(run("A", 1.0), run("B", 0.0), n_resamples=10).verdict()
    assert "effective length 4K -> below 1K" in verdict and "none" not in verdict


# -- one-line errors ----------------------------------------------------------------------------------


def test_missing_gguf_model_is_named_not_its_tokenizer(tmp_path) -> None:
    proc = _cli("run", "--model", f"llamacpp:{tmp_path}/missing.gguf", "--lengths", "1k", "--store",
                str(tmp_path / "s.sqlite"), "--no-progress", "--no-plots")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "tokenizer" not in proc.stderr
    assert "no GGUF file" in proc.stderr and "missing.gguf" in proc.stderr
    assert not (tmp_path / "s.sqlite").exists()


@pytest.mark.parametrize(("args", "says"), [(("run", "--reps", "2.5"), "--reps: invalid int value: '2.5'"),
                                            (("decide", "--unit", "pages"), "invalid choice: 'pages'"),
                                            (("bogus",), "invalid choice: 'bogus'")])
def test_bad_flag_is_one_line_not_the_usage_text(args: tuple[str, ...], says: str) -> None:
    proc = _cli(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert says in proc.stderr and "usage:" not in proc.stderr and "--help" in proc.stderr


# -- installing ---------------------------------------------------------------------------------------


def test_pyproject_license_gives_no_setuptools_warning() -> None:
    setuptools = pytest.importorskip("setuptools")
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dist = apply_configuration(Distribution(), ROOT / "pyproject.toml")
    assert not [str(w.message) for w in caught if "license" in str(w.message).lower()]
    assert getattr(dist.metadata, "license_expression", None) == "Apache-2.0"
    # the SPDX string needs setuptools >= 77: what the build (and the dev extra) asks for
    text = (ROOT / "pyproject.toml").read_text()
    requires = next(ln for ln in text.splitlines() if ln.startswith("requires = "))
    assert '"setuptools>=77"' in requires and '"setuptools>=77"' in text.split("dev = [", 1)[1].split("]", 1)[0]
    assert int(setuptools.__version__.split(".")[0]) >= 77


# -- a pack built with the bare endpoint tokenizer re-sends to an openai-compat model --------------


def test_pack_with_bare_endpoint_tokenizer_runs_on_an_openai_compat_model(tmp_path) -> None:
    from ctxprobe.models import resolve_provider
    from ctxprobe.report.export import write_pack
    from ctxprobe.sim.server import SimServer
    from ctxprobe.spec import make_spec
    from ctxprobe.sweep.packs import run_pack
    from ctxprobe.sweep.run import run_sweep
    from ctxprobe.tokenizers import resolve_tokenizer

    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok, model_id="simmy") as server:
        model = f"openai-compat:simmy@{server.base_url}"
        store = tmp_path / "s.sqlite"
        run_id = run_sweep(make_spec({"model": model, "tokenizer": "endpoint", "lengths": [512], "depths": [0.5],
                                      "reps": 2}), store, progress=False).run_id
        pack = tmp_path / "pack.jsonl"
        assert write_pack(run_id, store, pack) == 2
        result = run_pack(pack, model, tmp_path / "fresh.sqlite")
        assert result.sent == 2


# -- the profile line when every family fails at the shortest length ------------------------------


def test_profile_does_not_say_families_hold_when_all_fail_at_the_shortest_length() -> None:
    from ctxprobe.analysis.diagnose import profile_notes
    from ctxprobe.analysis.grid import profile
    from ctxprobe.core.rows import ResultRow

    def rows(family: str, by_length: dict[int, float]) -> list[ResultRow]:
        return [ResultRow(family, length, 0.5, r, "correct" if score else "wrong", score)
                for length, score in by_length.items() for r in range(10)]

    failing = {1024: 0.0, 2048: 0.0}
    every = sum((rows(f, failing) for f in ("niah", "aggregation", "multihop", "vartrack")), [])
    (note,) = profile_notes(profile(every))
    assert "hold as long as" not in note and "below the bar at the shortest length" in note and "1,024" in note
    # one family failing with niah, one holding: the holding one is named as longer, the other not as "holding"
    mixed = rows("niah", failing) + rows("vartrack", failing) + rows("multihop", {1024: 1.0, 2048: 1.0})
    (note,) = profile_notes(profile(mixed))
    assert "vartrack are below the bar at the shortest length, as niah is" in note
    assert "multihop hold longer than niah" in note and "hold as long as" not in note


# -- failures: one excerpt per distinct region ---------------------------------------------------------


def test_failure_shows_one_excerpt_per_region_not_one_per_answered_distractor() -> None:
    from ctxprobe.core.records import CaseRecord
    from ctxprobe.report.evidence import failure_of

    filler = " ".join(f"filler{i}" for i in range(400))
    words = ["apple", "brick", "cloud", "delta", "ember", "fjord", "grape", "haze", "iris"]
    listing = " ".join(w for w in words for _ in range(3)) + " zebra zebra zebra zebra"
    far = " ".join(f"more{i}" for i in range(400)) + " kiwi"
    rec = {"case_id": "aggregation/1", "family": "aggregation", "length": 1024, "depth": 0.5, "rep": 0,
           "outcome": "distractor", "score": 0.0, "expected": ["zebra"], "distractors": [*words, "kiwi"],
           "messages": [{"role": "user", "content": f"{filler} {listing} {far}"}],
           "output": ", ".join([*words, "kiwi"]), "meta": {}, "seed": 0, "prompt_hash": "", "token_count": 1024,
           "needle_token_pos": None, "realised_depth": None}
    f = failure_of(CaseRecord.from_json(rec))
    # the target and the nine listed words share one region; kiwi, far away, has its own
    assert len(f.excerpts) == 2
    first, second = f.excerpts
    assert first.label.startswith("target evidence; distractors apple, brick") and "iris" in first.label
    assert second.label == "distractor kiwi (answered)"
    highlighted = {chunk for chunk, kind in first.segments if kind == "distractor"}
    assert set(words) <= highlighted  # each one still marked where it stands


# -- serve-local: a taken port is named; a served GGUF goes by file name and content hash ------------


def test_serve_local_on_a_taken_port_says_the_port_is_taken() -> None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        proc = _cli("serve-local", "--port", str(port))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1
    assert f"port {port} on 127.0.0.1 is already in use" in proc.stderr and "--port" in proc.stderr


def test_served_gguf_name_is_file_name_and_content_hash(tmp_path) -> None:
    from ctxprobe.providers.llamacpp.serve import served_name

    one, two = tmp_path / "venv1" / "m.gguf", tmp_path / "venv2" / "m.gguf"
    for p in (one, two):
        p.parent.mkdir()
        p.write_bytes(b"GGUF" + bytes(range(256)) * 100)
    assert served_name(one) == served_name(two)  # the same model from another venv: the same name
    assert served_name(one).startswith("m.gguf#sha256=") and str(tmp_path) not in served_name(one)
    other = tmp_path / "m.gguf"
    other.write_bytes(b"GGUF" + bytes(range(255)) * 100)  # same file name, other bytes
    assert served_name(other) != served_name(one)
    import hashlib

    assert served_name(one).endswith(hashlib.sha256(one.read_bytes()).hexdigest()[:16])


@pytest.mark.slow
def test_serve_local_prints_a_location_free_model_name() -> None:
    """The embedded model served for real: the spec it prints names the file and its hash, not
    the venv path, and /v1/models reports the same id."""
    pytest.importorskip("xllamacpp")
    import httpx

    from ctxprobe.embedded import embedded_model_path
    from ctxprobe.providers.llamacpp.serve import start_local_server

    try:
        path = embedded_model_path()
    except Exception as exc:  # the model package is not installed here
        pytest.skip(f"no embedded model: {exc}")
    server = start_local_server("local", ctx=512)
    try:
        assert str(path.parent) not in server.model_spec
        assert server.model_spec.startswith(f"openai-compat:{path.name}#sha256=")
        ids = [m["id"] for m in httpx.get(server.base_url + "/models", timeout=30).json()["data"]]
        assert ids == [server.model_id]
    finally:
        server.close()


# -- tests that Ctrl-C a child pass under an ignored SIGINT, and stop what they start -----------------


def _nested_pytest(args: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """pytest in a child that ignores SIGINT, as `nohup make test &` leaves a suite."""
    code = ("import signal, sys, pytest; signal.signal(signal.SIGINT, signal.SIG_IGN); "
            f"sys.exit(pytest.main({args!r}))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")})


def test_ctrl_c_tests_pass_with_sigint_ignored() -> None:
    pytest.importorskip("openai")
    proc = _nested_pytest(["-q", "-p", "no:cacheprovider", "-m", "not slow",
                           "tests/integration/test_cli_serve_sim.py::test_serves_the_official_client_streaming_until_ctrl_c",
                           "tests/integration/test_resume_kill.py::test_ctrl_c_stops_gracefully_and_resumes"], ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "2 passed" in proc.stdout


def test_a_failing_test_does_not_leave_its_child_running(tmp_path) -> None:
    import shutil
    import time

    # the suite's conftest as it runs there: its fixture modules beside it, the test in a tier's folder
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    shutil.copytree(ROOT / "tests" / "helpers", tmp_path / "helpers", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "pytest.ini").write_text("[pytest]\npythonpath = helpers\n")
    (tmp_path / "integration").mkdir()
    pid_file = tmp_path / "child.pid"
    (tmp_path / "integration" / "test_leaves.py").write_text(
        "import subprocess, sys\n"
        "def test_fails_after_starting_a_child(spawn):\n"
        "    proc = spawn([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"    open({str(pid_file)!r}, 'w').write(str(proc.pid))\n"
        "    assert False, 'the test fails with its child running'\n")
    proc = _nested_pytest(["-q", "-p", "no:cacheprovider", "integration/test_leaves.py"], tmp_path)
    assert proc.returncode == 1 and "1 failed" in proc.stdout, proc.stdout[-2000:]
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    alive = True
    while alive and time.monotonic() < deadline:
        try:
            os.kill(pid, 0)  # still there? (reaped children are gone)
            time.sleep(0.1)
        except ProcessLookupError:
            alive = False
    if alive:
        os.kill(pid, 9)  # stop it here, then fail
    assert not alive, "the failed test left its child running"


# -- report --html: no empty price plots for unpriced runs; PNG titles fit their image ---------------


def test_html_report_of_unpriced_runs_draws_no_empty_price_plot(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from ctxprobe.models import resolve_provider
    from ctxprobe.report.html.page import build_html_report
    from ctxprobe.sim.server import SimServer
    from ctxprobe.spec import make_spec
    from ctxprobe.sweep.run import run_sweep
    from ctxprobe.tokenizers import resolve_tokenizer

    tok = resolve_tokenizer("local")
    store = tmp_path / "s.sqlite"
    with SimServer(resolve_provider("sim:perfect", tok), tok) as server:
        ids = [run_sweep(make_spec({"model": f"openai-compat:{name}@{server.base_url}", "tokenizer": "local",
                                    "lengths": [512, 1024], "depths": [0.5], "reps": 1,
                                    "families": ["niah", "vartrack"]}), store, progress=False).run_id
               for name in ("served-a", "served-b")]  # served models: no list price
    page = build_html_report(ids, store, tmp_path / "r.html", png_dir=tmp_path / "png").read_text(encoding="utf-8")
    assert "Decision: which model for which need" in page
    assert "Pareto plot" not in page
    assert "no price plot for niah, vartrack: none of its runs has a price" in page


def test_png_titles_are_wrapped_to_the_figure_width(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from ctxprobe.report.plots import _pyplot, _save

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    long = "niah: accuracy by length and depth for " + "openai-compat:a-very-long-served-model-name " * 4
    ax.set_title(long)
    title = ax.title
    _save(fig, tmp_path / "t.png")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    extent = title.get_window_extent(FigureCanvasAgg(fig).get_renderer())
    assert extent.x0 >= 0 and extent.x1 <= fig.bbox.width  # nothing cut at the PNG's edges
    assert "\n" in title.get_text() and " ".join(title.get_text().split()) == " ".join(long.split())
    fig2, ax2 = plt.subplots(figsize=(6.0, 4.0))
    ax2.set_title("niah: short")
    _save(fig2, tmp_path / "s.png")
    assert ax2.title.get_text() == "niah: short"  # a title that fits is left alone


def test_decide_html_names_why_a_priced_family_has_no_plot(tmp_path) -> None:
    """A family whose runs are priced but all below the shortest tested length has nothing to
    place on the plot: the note says that, not that its runs have no price."""
    pytest.importorskip("matplotlib")
    from ctxprobe.cli import main

    store, prices, page = tmp_path / "s.sqlite", tmp_path / "prices.yaml", tmp_path / "d.html"
    model = "sim:decay?cliff=100&width=1"  # misses everything past 100 tokens
    prices.write_text(f'"{model}": {{input: 1.0, output: 1.0}}\n', encoding="utf-8")
    assert main(["run", "--model", model, "--lengths", "512,1k", "--depths", "0.5", "--reps", "2",
                 "--store", str(store), "--no-plots", "--no-progress"]) == 0
    from ctxprobe.store import Store

    with Store(store) as db:
        (run,) = db.list_runs()
    assert main(["decide", run.run_id, "--store", str(store), "--prices", str(prices), "--html", str(page)]) == 0
    text = " ".join(page.read_text(encoding="utf-8").split())
    assert "Pareto plot" not in text
    assert "no price plot for niah: every run of it is below the shortest tested length" in text
    assert "none of its runs has a price" not in text


def test_a_plugin_family_that_cannot_load_leaves_the_model_help_whole() -> None:
    from ctxprobe.core import registry
    from ctxprobe.core.catalog import model_help

    registry.register("families", "broken-fam", "no_such_module_here:Family", origin="test")
    try:
        assert "interference" in model_help()
    finally:
        registry.unregister("families", "broken-fam")
