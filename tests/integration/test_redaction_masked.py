"""API keys, whole, in fragments or masked, never reach stderr, the store, exports or HTML."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ctxprobe.models._sdk import one_line
from ctxprobe.models._sdk import redact as sdk_redact
from ctxprobe.providers.openai_compat.api import OpenAICompatProvider
from ctxprobe.sweep.preflight import PROBE_MESSAGES
from ctxprobe.redaction import MASK, scrub

KEY = "sk-test-9f8e7d6c5b4a3210T123"
PLAIN = "ctxkey-0123456789abcdefXYZ9"  # not key-shaped: only the secret-aware rules can catch it


@pytest.mark.parametrize("shown", [
    "sk-tes****T123", "sk-test-9f****", "****T123", "sk-t...3210T123", "sk-test-9f8e…T123", KEY, KEY[3:21],
])
def test_masked_and_partial_forms_of_a_known_key_are_scrubbed(shown) -> None:
    out = scrub(f"Incorrect API key provided: {shown}. See docs.", (KEY,))
    assert out == f"Incorrect API key provided: {MASK}. See docs."


def test_mask_pieces_and_fragments_boundaries() -> None:
    # around a mask: 4 characters of the key (prefix + suffix) identify it, 3 do not
    assert scrub("key ctxk****", (PLAIN,)) == f"key {MASK}"
    assert scrub("key ctx****", (PLAIN,)) == "key ctx****"
    assert scrub("key ****XYZ9", (PLAIN,)) == f"key {MASK}"
    assert scrub("key ****YZ9", (PLAIN,)) == "key ****YZ9"
    # a bare slice: 8 characters of the key are the key's, 7 are not (a 7-digit answer is)
    assert scrub("x 01234567 y", (PLAIN,)) == f"x {MASK} y"
    assert scrub("x 0123456 y", (PLAIN,)) == "x 0123456 y"
    # a slice inside a longer word goes with its neighbours kept
    assert scrub("id=zz0123456789cd", (PLAIN,)) == f"id=zz{MASK}cd"
    assert scrub("nothing secret here", (PLAIN,)) == "nothing secret here"


def test_environment_keys_are_known_without_being_passed(monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLAIN)
    assert scrub("echo ctxkey-01****XYZ9") == f"echo {MASK}"


def test_every_provider_uses_the_one_rule(monkeypatch) -> None:
    text = "HTTP 401: Incorrect API key provided: sk-tes****T123 (ctxk****)"
    expected = scrub(text, (KEY, PLAIN))
    assert "T123" not in expected and "ctxk" not in expected
    assert sdk_redact(text, (KEY, PLAIN)) == expected  # openai, anthropic, gemini SDK providers
    assert one_line(text, (KEY, PLAIN)) == expected
    compat = OpenAICompatProvider("m", "http://127.0.0.1:9/v1", api_key=KEY)
    monkeypatch.setenv("CTXPROBE_API_KEY", PLAIN)
    assert compat._reason(text) == expected


class _EchoingServer(BaseHTTPRequestHandler):
    """Answers the preflight probe, then fails every case with a 500 that echoes the key masked."""

    def log_message(self, *args: object) -> None:
        pass

    def _json(self, status: int, payload: object) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        self._json(200, {"data": [{"id": "sim"}]})

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if body["messages"] == PROBE_MESSAGES:
            self._json(200, {"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}],
                             "usage": {"prompt_tokens": 10, "completion_tokens": 1}})
        else:
            self._json(500, {"error": {"message": "upstream rejected key sk-tes****T123 for user; "
                                                  f"fingerprint {KEY[5:17]}"}})


def test_a_server_echoing_a_masked_key_leaks_it_nowhere(tmp_path) -> None:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _EchoingServer)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    env = {**os.environ, "CTXPROBE_API_KEY": KEY,
           "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    store = tmp_path / "s.sqlite"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "ctxprobe.cli", *args], capture_output=True, text=True,
                              timeout=180, env=env)

    try:
        run = cli("run", "--model", f"openai-compat:sim@{url}", "--tokenizer", "local", "--lengths", "512",
                  "--depths", "0,1", "--reps", "1", "--retries", "0", "--store", str(store), "--no-progress",
                  "--out", str(tmp_path / "rep"))
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert run.returncode == 3, run.stderr  # both cases ended in `error`
    run_id = cli("runs", "--json", "--store", str(store)).stdout.split('"run_id": "')[1].split('"')[0]
    outputs = [run.stdout, run.stderr]
    for args in (["report", run_id, "--json"], ["export", run_id, "--jsonl"], ["failures", run_id, "--n", "5"],
                 ["report", run_id, "--html", str(tmp_path / "r.html")]):
        proc = cli(*args, "--store", str(store))
        assert proc.returncode == 0, proc.stderr
        outputs += [proc.stdout, proc.stderr]
    stored = [e for (e,) in __import__("sqlite3").connect(store).execute("SELECT error FROM responses")]
    assert len(stored) == 2 and all("upstream rejected key" in e for e in stored)  # the error itself is kept
    blobs = [p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()]
    texts = outputs + [b.decode("utf-8", "replace") for b in blobs]
    for leak in ("sk-tes", "T123", KEY[5:17], KEY):
        assert not any(leak in t for t in texts), leak
