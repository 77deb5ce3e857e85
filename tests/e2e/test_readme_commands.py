"""Every ``ctxprobe`` command shown in the README's code blocks runs (against sims).

The commands are read from README.md itself (and docs/reference.md, which holds the spec
file example), so the README cannot drift from the CLI; its Python example runs too.
Only these substitutions are made, each declared in SUBSTITUTIONS / _concrete below:
placeholders (RUN_ID, spec.yaml, pack.jsonl, FILE...) become real runs and files in a
temporary folder, ``--model local``/``--model M`` become ``sim:perfect`` (the real model is
exercised by the slow llama.cpp tests), the example server URL becomes a live sim server,
``[--x]`` means the option is given, ``a|b`` alternatives are each run, and a sweep runs at
one repetition and depth unless the line names them (``_scaled``). ``serve-sim``
and ``serve-local`` are started, waited for and stopped with Ctrl-C (serve-local serves the
real embedded model, so the slow test needs it installed, as ``make test`` does).
"""

from __future__ import annotations

import itertools
import re
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ctxprobe.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
REFERENCE = ROOT / "docs" / "reference.md"

#: (README text, what the test runs instead): placeholders and the real model only.
SUBSTITUTIONS: list[tuple[str, str]] = [
    ("--model local", "--model sim:perfect"),
    ("--model M", "--model sim:perfect"),
    ("--outcome distractor", "--outcome not_found"),  # sim:perfect never meets a distractor: keep the flag
    ("openai-compat:NAME@http://127.0.0.1:8080/v1", "openai-compat:sim@SIMURL"),  # the sim server stands in
]


def _scaled(argv: list[str]) -> list[str]:
    """A README sweep at the fewest cases that still runs its every flag: ``run`` with one
    repetition at one depth unless the line sets them (or sizes itself: ``--adaptive``, a
    pack), ``phonebook`` with two books per configuration. The README's grids are for
    models; the sims answer the same at any size (each size's own rules have their tests)."""
    if argv[0] == "run" and "--adaptive" not in argv and "--cases" not in argv:
        argv = argv + (["--reps", "1"] if "--reps" not in argv else []) + (
            ["--depths", "0.5"] if "--depths" not in argv else [])
    if argv[0] == "phonebook" and "--plan" not in argv:
        argv = argv + ["--runs", "2"]
    return argv


def readme_commands(text: str | None = None) -> list[str]:
    """``ctxprobe …`` lines of the README's (and docs/reference.md's) bash blocks, continuations
    joined, comments dropped."""
    if text is None:
        text = README.read_text(encoding="utf-8") + "\n" + REFERENCE.read_text(encoding="utf-8")
    commands: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = re.sub(r"\s+#\s.*$", "", line).strip()
            line = line.removeprefix(".venv/bin/")
            if line.startswith("ctxprobe "):
                commands.append(line)
    return commands


def _expand(command: str) -> list[str]:
    """``[--json]`` → given; ``--csv|--parquet|--ruler`` → one command per alternative."""
    command = re.sub(r"\[([^\]]+)\]", r"\1", command)
    words = shlex.split(command)
    options = [w.split("|") if w.startswith("-") and "|" in w else [w] for w in words]
    return [" ".join(shlex.quote(w) for w in combo) for combo in itertools.product(*options)]


def _concrete(command: str, names: dict[str, str]) -> list[str]:
    if not command.startswith("ctxprobe serve-local "):  # it serves the real embedded model: no sim stands in
        for old, new in SUBSTITUTIONS:
            command = command.replace(old, new)
    for placeholder, value in names.items():
        command = re.sub(rf"(?<![\w/.-]){re.escape(placeholder)}(?![\w.-])", value, command)
    return shlex.split(command)[1:]


def test_readme_has_the_commands_we_expect() -> None:
    commands = readme_commands()
    verbs = {c.split()[1] for c in commands}
    assert verbs >= {"run", "plan", "runs", "report", "export", "failures", "compare", "check", "phonebook",
                     "serve-sim", "serve-local", "decide"}
    assert len(commands) >= 20


def _names(tmp: Path) -> dict[str, str]:
    return {"RUN_ID": "RUNX", "RUN_A": "RUNX", "RUN_B": "RUNY", "RUN0": "RUNY", "RUN": "RUNX",
            "spec.yaml": str(tmp / "spec.yaml"), "pack.jsonl": str(tmp / "pack.jsonl"), "FILE": str(tmp / "out.file"),
            "cases.jsonl": str(tmp / "cases.jsonl"), "out.html": str(tmp / "out.html"),
            "vllm/NAME": "vllm/sim", "http://127.0.0.1:8000/v1": "SIMURL", "N": "1200",
            "DIR": str(tmp / "ruler-export"), "prices.yaml": str(tmp / "prices.yaml")}


def test_every_readme_command_parses(tmp_path: Path) -> None:
    parser = build_parser()
    for command in readme_commands():
        for variant in _expand(command):
            argv = _concrete(variant, _names(tmp_path))
            parser.parse_args(argv)  # SystemExit (usage error) fails the test, naming the flag


def _spec_yaml() -> str:
    block = re.search(r"### Spec file\n\n```yaml\n(.*?)```", REFERENCE.read_text(encoding="utf-8"), flags=re.S)
    assert block is not None
    return block.group(1).replace("model: local", "model: sim:perfect")


@pytest.mark.slow
def test_every_readme_command_runs_against_sims(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxprobe.models import resolve_provider
    from ctxprobe.sim.server import SimServer
    from ctxprobe.tokenizers import resolve_tokenizer

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")  # the README's lines on the shipped example
    (tmp_path / "spec.yaml").write_text(_spec_yaml(), encoding="utf-8")
    (tmp_path / "prices.yaml").write_text('"sim:perfect": {input: 10, output: 10}\n'
                                          '"sim:blind-middle": {input: 1, output: 1}\n', encoding="utf-8")
    base = ["--store", str(tmp_path / "ctxprobe.sqlite"), "--lengths", "512,1k", "--reps", "1", "--no-plots",
            "--no-progress"]
    assert main(["run", "--model", "sim:perfect", *base]) == 0
    assert main(["run", "--model", "sim:blind-middle", *base]) == 0
    from ctxprobe.store import Store

    with Store(tmp_path / "ctxprobe.sqlite") as store:
        perfect, blind = (r.run_id for r in store.list_runs())
    assert main(["export", perfect, "--jsonl", "-o", str(tmp_path / "pack.jsonl")]) == 0
    names = _names(tmp_path)
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok) as server:
        names.update(SIMURL=server.base_url)
        failed = []
        for command in readme_commands():
            for variant in _expand(command):
                argv = _concrete(variant, names)
                argv = [a.replace("RUNX", perfect).replace("RUNY", blind).replace("SIMURL", server.base_url)
                        for a in argv]
                if argv[0] == "serve-sim":
                    failed += _serve_sim(argv)
                    continue
                if argv[0] == "serve-local":
                    failed += _serve_local(argv)
                    continue
                if argv[0] in ("run", "phonebook", "draft-questions"):
                    argv = _scaled(argv) + ["--no-progress"]
                try:
                    code = main(argv)
                except SystemExit as exc:  # argparse usage errors
                    code = exc.code
                if argv[0] == "check" and code == 4:
                    # INCONCLUSIVE, check's documented exit: a 1-rep slice of 2 cells cannot show a drop
                    code = 0
                if code != 0:
                    failed.append(f"{variant} -> exit {code}")
    assert failed == []



def test_readme_draft_questions_and_its_documents_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The README's lines on the shipped example, run as written from a copy of the checkout's
    ``examples/``: drafting keeps exactly the shipped questions and rejects the planted
    sentences' questions for their reasons, and the documents run asks the kept questions."""
    import json

    from ctxprobe.store import Store

    lines = [c for c in readme_commands() if "examples/natural" in c]
    assert [c.split()[1] for c in lines] == ["draft-questions", "run"]
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    for line in lines:
        (variant,) = _expand(line)
        assert main([*_concrete(variant, _names(tmp_path)), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "kept 30 questions in qa.jsonl; rejected 6" in " ".join(printed.split())

    def rows(path: Path) -> list[dict]:
        return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]

    kept = rows(tmp_path / "qa.jsonl")
    shipped = rows(ROOT / "examples" / "natural" / "qa.jsonl")
    assert sorted((q["question"], q["answer"]) for q in kept) == sorted((q["question"], q["answer"]) for q in shipped)
    rejected = {(r["document"], r["evidence"]): set(r["reasons"]) for r in rows(tmp_path / "qa.rejected.jsonl")}
    planted = json.loads((ROOT / "examples" / "natural" / "planted.json").read_text(encoding="utf-8"))["planted"]
    assert set(rejected) == {(p["document"], p["evidence"]) for p in planted}
    assert all(p["reason"] in rejected[(p["document"], p["evidence"])] for p in planted)
    # the run stored documents cases whose questions are the kept ones, each answered
    with Store(tmp_path / "ctxprobe.sqlite") as store:
        (run,) = store.list_runs()
        cases = list(store.iter_case_records(run.run_id))
    assert run.family == "documents" and run.n_final == run.n_planned == len(cases) > 0
    asked = {q["question"] for q in kept}
    for case in cases:
        prompt = json.dumps(case["messages"], ensure_ascii=False)
        assert sum(q in prompt for q in asked) == 1, case["case_id"]  # one kept question per case
        assert case["score"] == 1.0, case["output"]  # sim:perfect reads the drafted questions (docs/natural.md)


def _default_sigint() -> None:
    """The child's SIGINT at its default: a suite started with it ignored (``nohup … &``)
    would pass that on, and the Ctrl-C below would not stop the server."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _stop(proc: subprocess.Popen[str], timeout: float) -> str:
    """Ctrl-C, then wait a bounded time; killed if it does not stop (pass or fail)."""
    proc.send_signal(signal.SIGINT)
    try:
        return proc.communicate(timeout=timeout)[1] or ""
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate(timeout=30)
        raise


def _serve_sim(argv: list[str]) -> list[str]:
    argv = ["0" if a == "8000" else a for a in argv]
    proc = subprocess.Popen([sys.executable, "-m", "ctxprobe.cli", *argv], stderr=subprocess.PIPE, text=True,
                            env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
                            preexec_fn=_default_sigint)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
    finally:
        _stop(proc, 30)
    return [] if "serving" in line and proc.returncode == 0 else [f"serve-sim {argv}: {line!r} {proc.returncode}"]


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve_local(argv: list[str], wait_s: float = 300.0) -> list[str]:
    """Start the README's serve-local line on a free port, wait until it answers, stop it."""
    import time

    import httpx

    port = _free_port()
    argv = [str(port) if prev == "--port" else a for prev, a in zip(["", *argv], argv)]
    proc = subprocess.Popen([sys.executable, "-m", "ctxprobe.cli", *argv], stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)
    try:
        deadline = time.monotonic() + wait_s  # a bound, not a speed claim: loading the model takes a while
        ready = False
        while not ready and proc.poll() is None and time.monotonic() < deadline:
            try:
                ready = httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=5).status_code == 200
            except httpx.HTTPError:
                ready = False
            if not ready:
                time.sleep(0.5)
        if not ready:
            return [f"serve-local {argv}: never answered on port {port} (exit {proc.poll()})"]
    finally:
        err = _stop(proc, 60)
    return [] if proc.returncode in (0, 130, -signal.SIGINT) else [f"serve-local {argv}: exit {proc.returncode}: {err[-500:]}"]


def _python_example() -> str:
    block = re.search(r"## Python\n\n```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert block is not None
    return block.group(1)


def test_readme_python_example_runs(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", _python_example()], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "niah" in proc.stdout and "effective length" in proc.stdout
    assert (tmp_path / "ctxprobe.sqlite").is_file()
