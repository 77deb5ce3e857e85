"""The native llama.cpp server (``ctxprobe serve-local``: llama.cpp's C++ server from the
prebuilt xllamacpp wheel) on 127.0.0.1 with the embedded SmolLM2, measured as users
measure a served model: ``openai-compat:`` with ``--tokenizer endpoint`` (its own
``/tokenize`` + ``/apply-template``). Exact counts, several slots at once, its prompt
cache, its 400 for an over-long prompt, its trained window, a SIGKILL and a resume."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

import ctxprobe
from ctxprobe.models.base import GenerateRequest, PermanentError
from ctxprobe.providers.openai_compat.api import OpenAICompatProvider
from ctxprobe.providers.llamacpp.serve import LocalServer, start_local_server
from ctxprobe.store import iter_export
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep
from ctxprobe.tokenizers import resolve_tokenizer

pytestmark = pytest.mark.slow
SLOT_CTX = 2048
PROBE = b"describe a river at dawn"  # the preflight probe's chat (not a case)
ENV = {**os.environ, "PYTHONPATH": str(Path(ctxprobe.__file__).parents[1])}


@pytest.fixture(scope="module")
def server() -> LocalServer:
    pytest.importorskip("xllamacpp")
    srv = start_local_server("local", port=0, slots=2, ctx=SLOT_CTX, n_threads=min(2, os.cpu_count() or 1))
    yield srv
    srv.close()


def test_models_route_reports_the_trained_window_beside_the_served_one(server: LocalServer) -> None:
    entry = httpx.get(f"{server.base_url}/models").json()["data"][0]
    assert entry["meta"]["n_ctx_train"] == 8192
    provider = OpenAICompatProvider.from_spec(server.model_spec)
    asyncio.run(provider.preflight())
    assert provider.trained_context == 8192
    slots = httpx.get(f"{server.base_url.removesuffix('/v1')}/slots").json()
    assert len(slots) == 2 and all(s["n_ctx"] == SLOT_CTX for s in slots)
    # the served window is one slot's, from /props (llama.cpp's get_props), never n_ctx_train
    props = httpx.get(f"{server.base_url.removesuffix('/v1')}/props").json()
    assert provider.context_window == props["default_generation_settings"]["n_ctx"] == SLOT_CTX


def test_the_embedded_tokenizer_gives_the_servers_ids(server: LocalServer) -> None:
    local = resolve_tokenizer("local")
    ep = resolve_tokenizer("endpoint", model=server.model_spec)
    texts = ["Hello, world!", "  leading spaces and 1234567 digits", "ünïcödé — “quotes” ‘here’ …",
             "<|im_end|> special text stays text", "tabs\tand\nnewlines\n\n", "x" * 300, "The 9:45 timetable, 1,204 entries."]
    for t in texts:
        assert ep.encode(t) == local.encode(t), t
    chats = [[{"role": "user", "content": t}] for t in texts]
    chats.append([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 12+30?"}])
    chats.append([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."},
                  {"role": "user", "content": "Again?"}])
    for messages in chats:
        assert ep.encode_chat(messages) == local.encode_chat(messages), messages


@pytest.mark.parametrize("tokenizer", ["endpoint", "local"])  # the server's own count, and ours
def test_sweep_with_concurrent_slots_counts_exactly(tmp_path, server: LocalServer, tokenizer: str) -> None:
    store = tmp_path / "s.sqlite"
    spec = make_spec({"model": server.model_spec, "tokenizer": tokenizer, "lengths": "512,1k",
                      "depths": "0.5,1", "reps": 1, "concurrency": 2, "decoding": {"max_tokens": 40}})
    result = run_sweep(spec, store, progress=False)
    records = list(iter_export(result.run_id, store))
    assert len(records) == 4
    for r in records:
        assert r["outcome"] not in ("error", "input_truncated"), r
        assert r["reported_prompt_tokens"] == r["token_count"], (r["reported_prompt_tokens"], r["token_count"])


def test_prompt_cache_is_reported(server: LocalServer) -> None:
    # one slot for both requests: llama.cpp's prompt cache lives per slot
    provider = OpenAICompatProvider.from_spec(server.model_spec, extra_body={"id_slot": 0})
    filler = "The harbour office counted forty-two lanterns before noon. " * 40
    first = [{"role": "user", "content": filler + "What was counted?"}]
    second = [{"role": "user", "content": filler + "Who counted them?"}]

    async def both() -> tuple[object, object]:
        a = await provider.generate(GenerateRequest(first, max_tokens=4))
        b = await provider.generate(GenerateRequest(second, max_tokens=4))
        await provider.aclose()
        return a, b

    a, b = asyncio.run(both())
    shared = resolve_tokenizer("local").count_chat([{"role": "user", "content": filler}])
    assert b.extra["cached_prompt_tokens"] >= shared - 8  # the common prefix came from the cache
    assert b.extra["cached_prompt_tokens"] < b.prompt_tokens


def test_over_long_prompt_is_a_labelled_harness_error_or_a_one_line_refusal(tmp_path, server: LocalServer) -> None:
    provider = OpenAICompatProvider.from_spec(server.model_spec)
    long = [{"role": "user", "content": "word " * (SLOT_CTX + 200)}]

    async def send() -> None:
        try:
            await provider.generate(GenerateRequest(long, max_tokens=4))
        finally:
            await provider.aclose()

    with pytest.raises(PermanentError, match="HTTP 400.*exceed"):
        asyncio.run(send())
    # through the CLI: refused before anything is sent, in one line
    done = subprocess.run([sys.executable, "-m", "ctxprobe.cli", "run", "--model", server.model_spec,
                           "--tokenizer", "endpoint", "--lengths", "3k", "--reps", "1", "--depths", "0.5",
                           "--store", str(tmp_path / "s.sqlite"), "--no-progress", "--no-plots"],
                          capture_output=True, text=True, env=ENV, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "exceeds" in done.stderr and "window" in done.stderr


class _CountingProxy:
    """A loopback pass-through that counts the chat requests it forwards, per body."""

    def __init__(self, target: str) -> None:
        self.bodies: list[bytes] = []
        counter, root = self, target.rstrip("/")

        class Handler(BaseHTTPRequestHandler):
            def _forward(self, method: str) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if method == "POST" and self.path.endswith("/chat/completions"):
                    counter.bodies.append(body)
                try:
                    r = httpx.request(method, root + self.path, content=body or None, timeout=600,
                                      headers={"Content-Type": "application/json"})
                except httpx.HTTPError:
                    self.send_error(502)
                    return
                self.send_response(r.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(r.content)))
                self.end_headers()
                self.wfile.write(r.content)

            def do_GET(self) -> None:  # noqa: N802
                self._forward("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._forward("POST")

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()


def _stored(path: Path) -> dict[str, str]:
    try:
        with sqlite3.connect(path) as db:
            return dict(db.execute("SELECT case_id, output FROM responses").fetchall())
    except sqlite3.Error:
        return {}


def test_sigkill_mid_run_then_resume_loses_and_repeats_nothing(tmp_path, server: LocalServer) -> None:
    proxy = _CountingProxy(server.engine.base_url)
    try:
        store = tmp_path / "s.sqlite"
        model = f"openai-compat:{server.model_id}@{proxy.url}/v1"
        args = [sys.executable, "-m", "ctxprobe.cli", "run", "--model", model, "--tokenizer", "local",
                "--lengths", "512", "--depths", "0,0.5,1", "--reps", "4", "--max-tokens", "24", "--concurrency", "2",
                "--store", str(store), "--no-progress", "--no-plots"]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
        deadline = time.monotonic() + 300
        while len(_stored(store)) < 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        before = _stored(store)
        assert 3 <= len(before) < 12, "the kill should land part way"
        sent_before = len(proxy.bodies)
        done = subprocess.run(args, capture_output=True, text=True, env=ENV, timeout=600)
        assert done.returncode == 0, done.stderr
        after = _stored(store)
        assert len(after) == 12 and all(after[k] == v for k, v in before.items())  # nothing lost or changed
        # the resume asked for exactly the cases not stored, once each: no stored case was sent again
        resumed = [b for b in proxy.bodies[sent_before:] if PROBE not in b]
        assert len(resumed) == 12 - len(before), (len(resumed), len(before))
        assert len(set(resumed)) == len(resumed)
    finally:
        proxy.close()
