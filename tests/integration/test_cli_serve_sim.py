"""`ctxprobe serve-sim` as a user runs it: a real process, a real port, the official client."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _cli(spawn, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return spawn([sys.executable, "-m", "ctxprobe.cli", *args], stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, text=True, env=env)


def test_port_in_use_is_one_line_and_exit_2(spawn) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        proc = _cli(spawn, "serve-sim", "--port", str(port), "--tokenizer", "approx")
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert err.strip().splitlines() == [f"error: port {port} on 127.0.0.1 is already in use: stop what is using "
                                        "it or choose another with --port (0 = any free port)"]
    assert "Traceback" not in err and "serving" not in err


def test_serves_the_official_client_streaming_until_ctrl_c(spawn) -> None:
    openai = pytest.importorskip("openai")
    proc = _cli(spawn, "serve-sim", "--model", "sim/echo", "--tokenizer", "approx", "--port", "0")
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        match = re.search(r"at (http://127\.0\.0\.1:\d+/v1)", line)
        assert match, line
        client = openai.OpenAI(base_url=match.group(1), api_key="none", max_retries=0, timeout=20)
        chunks = list(client.chat.completions.create(
            model="sim:echo", messages=[{"role": "user", "content": "codes 1234567 and 7654321"}], stream=True))
        assert "".join(c.choices[0].delta.content or "" for c in chunks).split() == ["1234567", "7654321"]
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "Traceback" not in err
