"""``ctxprobe serve-local``: llama.cpp's native HTTP server for a GGUF, on 127.0.0.1.

The server is llama.cpp's own C++ server (``llama-server``), from the prebuilt
``xllamacpp`` wheel: nothing is compiled. It serves ``/v1/chat/completions``,
``/v1/completions``, ``/v1/models`` (with ``meta.n_ctx`` and ``meta.n_ctx_train``),
``/tokenize``, ``/apply-template``, ``/slots`` and ``/health``, with continuous batching
over ``slots`` parallel slots and a prompt cache. Measure it with
``--model openai-compat:NAME@URL/v1 --tokenizer endpoint`` (its own tokenizer counts).

``ctx`` is the window of each slot; llama.cpp is given ``ctx × slots`` in total and
splits it evenly, so every request may use ``ctx`` tokens (prompt + output).
"""

from __future__ import annotations

import errno
import hashlib
import signal
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ctxprobe.embedded.gguf_meta import gguf_trained_context
from ctxprobe.embedded.xllama import LOOPBACK, Engine, EngineConfig
from ctxprobe.errors import CtxprobeError


@dataclass(frozen=True)
class LocalServer:
    engine: Engine
    model_id: str  # the id /v1/models reports: the GGUF's file name and content hash (served_name)
    ctx: int
    slots: int
    trained_context: int | None

    @property
    def base_url(self) -> str:
        return self.engine.base_url + "/v1"

    @property
    def model_spec(self) -> str:
        return f"openai-compat:{self.model_id}@{self.base_url}"

    def close(self) -> None:
        self.engine.close()


def gguf_for(model: str) -> Path:
    """``local`` (the embedded SmolLM2) or a path to a ``.gguf`` file."""
    if model == "local":
        from ctxprobe.embedded import embedded_model_path

        return embedded_model_path()
    path = Path(model.removeprefix("llamacpp:")).expanduser()
    if not path.is_file():
        raise CtxprobeError(f"no GGUF file at {path}: give --model local or --model /path/to/model.gguf")
    return path


_DIGESTS: dict[tuple[str, int, int], str] = {}


def served_name(path: Path) -> str:
    """The name a served GGUF goes by: its file name and the sha256 of its bytes (16 hex digits),
    ``model.gguf#sha256=…``. It enters the run id and the price-file key, so the same file
    served from another folder or venv is the same model, and another file of the same name
    is not. Hashed once per (file, size, mtime) in a process."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    digest = _DIGESTS.get(key)
    if digest is None:
        h = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
        digest = _DIGESTS.setdefault(key, h.hexdigest()[:16])
    return f"{path.name}#sha256={digest}"


def refuse_taken_port(port: int, host: str = "127.0.0.1") -> None:
    """A one-line error when something already listens on ``host:port`` (llama.cpp would only
    say it failed to init its server); port 0 (any free one) never is."""
    if port == 0:
        return
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise CtxprobeError(f"port {port} on {host} is already in use: stop what is using it or choose another "
                                "with --port (0 = any free port)") from None
        if exc.errno == errno.EACCES:
            raise CtxprobeError(f"no permission to bind {host}:{port}: use a port above 1023") from None
        raise CtxprobeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    finally:
        sock.close()


def start_local_server(model: str = "local", *, port: int = 0, slots: int = 1, ctx: int | None = None,
                       n_threads: int | None = None) -> LocalServer:
    """Start llama.cpp's server on 127.0.0.1 (``port`` 0: a free one) and return once it serves."""
    if slots < 1:
        raise CtxprobeError(f"--slots must be at least 1, got {slots}")
    if not 0 <= port <= 65535:
        raise CtxprobeError(f"--port must be 0..65535, got {port}")
    refuse_taken_port(port, LOOPBACK)
    path = gguf_for(model)
    trained = gguf_trained_context(path)
    window = ctx or trained or 8192
    if window < 64:
        raise CtxprobeError(f"--ctx must be at least 64 tokens, got {window}")
    name = served_name(path)
    engine = Engine(EngineConfig(path=path, n_ctx=window, slots=slots, n_threads=n_threads, host=LOOPBACK, port=port,
                                 alias=name), purpose="ctxprobe serve-local")
    return LocalServer(engine=engine, model_id=name, ctx=window, slots=slots, trained_context=trained)


def serve_local_forever(model: str = "local", *, port: int = 8080, slots: int = 1, ctx: int | None = None,
                        on_ready: Callable[[LocalServer], None] | None = None) -> None:
    """Serve until SIGINT/SIGTERM (the CLI's ``serve-local``)."""
    server = start_local_server(model, port=port, slots=slots, ctx=ctx)
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        if on_ready is not None:
            on_ready(server)
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.close()
