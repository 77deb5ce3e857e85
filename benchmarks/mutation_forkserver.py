"""A pre-warmed pytest launcher for ``benchmarks/mutation.py``: each mutant's test run is a
fork of a process that already imported pytest and every third-party module the guarding
tests use, instead of a fresh interpreter importing them again (about 0.7 s per mutant,
most of a fast guard's run).

Nothing of ctxprobe or of the tests is imported before the fork, so each run reads the
mutated source from disk exactly as a fresh ``python -m pytest`` would: the parent learns
which modules to pre-import from a warm-up run in a child, and keeps only modules that do
not live under the scratch copy.

    python mutation_forkserver.py serve SOCKET WORKDIR PYTEST_ARGS...   # one per module
    python -S mutation_forkserver.py run SOCKET                         # the test command

``run`` exits with pytest's exit code. A client killed on timeout (cosmic-ray kills its
process group) closes the connection, and the server then kills the forked run's group.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys


def _run_pytest(args: list[str]) -> int:
    import pytest

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    return int(pytest.main(args))


def _warm(work: str, args: list[str]) -> None:
    """Import, in this (parent) process, the third-party modules a run of ``args`` loads."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        code = 1
        try:
            _run_pytest(args)
            names = [n for n, m in list(sys.modules.items())
                     if not (getattr(m, "__file__", None) or "").startswith(work) and not n.startswith("__")]
            os.write(write, json.dumps(names).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 1 << 16):
        chunks.append(chunk)
    os.waitpid(pid, 0)
    for name in json.loads(b"".join(chunks) or b"[]"):
        if name.split(".")[0] in ("ctxprobe", "conftest", "tests"):
            continue
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - a module that cannot be pre-imported is imported after the fork
            pass


def serve(path: str, work: str, args: list[str]) -> None:
    os.chdir(work)
    _warm(work, args)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    print("ready", flush=True)
    while True:
        conn, _ = srv.accept()
        with conn:
            if conn.recv(16) != b"go":
                return  # "stop" (or a closed connection): shut down
            pid = os.fork()
            if pid == 0:
                srv.close()
                conn.close()
                os.setsid()
                code = 3
                try:
                    code = _run_pytest(args)
                finally:
                    os._exit(code)
            code = None
            while code is None:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    code = os.waitstatus_to_exitcode(status)
                    break
                if select.select([conn], [], [], 0.02)[0]:  # the client is gone (killed on timeout)
                    os.killpg(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    break
            if code is not None:
                conn.sendall(str(code).encode())


def run(path: str) -> int:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        s.sendall(b"go")
        reply = s.recv(16)
    return int(reply) if reply else 1


def stop(path: str) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        s.sendall(b"stop")


if __name__ == "__main__":
    mode, sock = sys.argv[1], sys.argv[2]
    if mode == "serve":
        serve(sock, sys.argv[3], sys.argv[4:])
    elif mode == "stop":
        stop(sock)
    else:
        sys.exit(run(sock))
