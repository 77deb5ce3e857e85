"""API keys set in the environment never reach the store, reports, logs or error texts."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from ctxprobe.models import resolve_provider
from ctxprobe.sim.server import SimServer
from ctxprobe.tokenizers import resolve_tokenizer

SECRET = "sk-ctxprobe-sentinel-7f3a9c1e5b"


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ctxprobe.cli", *args], capture_output=True, text=True,
                          timeout=180, env=env)


def test_keys_never_leak(tmp_path) -> None:
    env = {**os.environ, "OPENAI_API_KEY": SECRET, "CTXPROBE_API_KEY": SECRET, "ANTHROPIC_API_KEY": SECRET}
    store = tmp_path / "s.sqlite"
    outputs: list[str] = []
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok) as server:
        url = server.start()
        run = _cli(env, "run", "--model", f"openai-compat:sim@{url}", "--tokenizer", "local", "--lengths", "512",
                   "--depths", "0,1", "--reps", "1", "--store", str(store), "--out", str(tmp_path / "rep"))
        assert run.returncode == 0, run.stderr
        outputs += [run.stdout, run.stderr]
        assert server.last_authorization == f"Bearer {SECRET}"  # the key did reach the server: not vacuous
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    down = _cli(env, "run", "--model", f"openai-compat:sim@http://127.0.0.1:{port}/v1", "--tokenizer", "local",
                "--lengths", "512", "--store", str(store))
    assert down.returncode != 0
    outputs += [down.stdout, down.stderr]
    runs = _cli(env, "runs", "--json", "--store", str(store))
    run_id = runs.stdout.split('"run_id": "')[1].split('"')[0]
    for args in (["report", run_id, "--json"], ["export", run_id, "--jsonl"], ["runs"]):
        proc = _cli(env, *args, "--store", str(store))
        assert proc.returncode == 0, proc.stderr
        outputs += [proc.stdout, proc.stderr]
    assert all(SECRET not in text for text in outputs)
    blobs = [p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()]
    assert blobs and all(SECRET.encode() not in b for b in blobs)  # SQLite file, WAL, plots
