"""The real serving path: `python -m llama_cpp.server` on loopback with the embedded
SmolLM2 GGUF, a small sweep through `openai-compat:`, and the server's reported prompt
tokens equal to the counts the cases were built to — exactly."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from ctxprobe.embedded import embedded_model_path
from ctxprobe.store import iter_export
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    port = _free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(embedded_model_path()), "--n_ctx", "4096",
           "--n_threads", str(min(2, os.cpu_count() or 1)), "--flash_attn", "true", "--host", "127.0.0.1",
           "--port", str(port)]
    log_path = tmp_path_factory.mktemp("llama-server") / "stderr.log"
    log = open(log_path, "w")  # a file, not a pipe: a chatty server must never block on a full pipe
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    try:
        while True:
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"llama_cpp.server did not start: {log_path.read_text()[-2000:]}")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.mark.parametrize("tokenizer", ["local", "endpoint"])  # ours, and the server's own count
def test_sweep_through_llama_cpp_server(tmp_path, llama_server, tokenizer) -> None:
    store = tmp_path / "s.sqlite"
    spec = make_spec({"model": f"openai-compat:smollm2@{llama_server}", "tokenizer": tokenizer,
                      "lengths": "512,1k", "depths": "0.5,1", "reps": 1, "concurrency": 1,
                      "decoding": {"max_tokens": 40}})
    result = run_sweep(spec, store, progress=False)
    records = list(iter_export(result.run_id, store))
    assert len(records) == 4
    for r in records:
        assert r["outcome"] not in ("error", "input_truncated"), r
        # the server's own count of the templated prompt equals ours, exactly
        assert r["reported_prompt_tokens"] == r["token_count"], (r["reported_prompt_tokens"], r["token_count"])
    report = load_report(result.run_id, store)
    assert report.profiles[0].lengths[0].n == 2
