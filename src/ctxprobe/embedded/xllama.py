"""llama.cpp's native C++ server, in process, from the prebuilt ``xllamacpp`` wheel.

``xllamacpp.Server(params)`` loads a GGUF and runs llama.cpp's own server loop on a
thread: the same object answers in-process calls (``handle_completions``) and HTTP on
the address it binds (``/v1/chat/completions``, ``/tokenize``, ``/apply-template``,
``/v1/models``, ``/slots``). ctxprobe binds it to 127.0.0.1 only, on a port the OS picks
unless one is asked for. Nothing is compiled on install and nothing is downloaded.

Abort granularity: llama.cpp's server computes a prompt ``n_batch`` tokens per step and
handles a cancelled request between steps, so one step bounds how long an aborted
generation keeps computing. :data:`ABORT_BATCH` keeps that step short
(benchmarks/bench_engine.py measures both the abort latency and the prefill cost).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe.errors import CtxprobeError, MissingExtraError

#: The xllamacpp release ctxprobe is tested with (pinned in pyproject's extras).
XLLAMACPP_VERSION = "2026.10.11549"
#: Prompt tokens computed per server step: the longest an aborted request keeps running.
ABORT_BATCH = 128
LOOPBACK = "127.0.0.1"
#: The runtime window of an in-process model whose GGUF declares no trained window (and the
#: least a sweep that grows the window past the trained one asks for).
DEFAULT_N_CTX = 16384


def import_xllamacpp(purpose: str, extra: str = "llamacpp") -> Any:
    try:
        import xllamacpp
    except ImportError:
        raise MissingExtraError("xllamacpp", extra, purpose) from None
    return xllamacpp


def default_threads() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


@dataclass(frozen=True)
class EngineConfig:
    path: Path
    n_ctx: int
    slots: int = 1
    n_threads: int | None = None
    host: str = LOOPBACK
    port: int = 0  # 0: a free port the OS picks
    n_batch: int = ABORT_BATCH
    #: The host prompt cache (MiB of prompts kept beside the slots' own); None: llama.cpp's
    #: default. 0 leaves each slot's own cache only (one prompt per slot).
    cache_ram_mib: int | None = None
    #: The model id the server reports in /v1/models (None: llama.cpp's, the file's path).
    alias: str | None = None
    #: A jinja chat template used instead of the GGUF's (llama.cpp's ``--chat-template``;
    #: None: the file's own).
    chat_template: str | None = None


class Engine:
    """One loaded GGUF behind llama.cpp's server (in process and on ``base_url``)."""

    def __init__(self, config: EngineConfig, purpose: str = "The llama.cpp engine", extra: str = "llamacpp") -> None:
        xllamacpp = import_xllamacpp(purpose, extra)
        if not config.path.is_file():
            raise CtxprobeError(f"no GGUF file at {config.path}")
        if config.host != LOOPBACK:
            raise CtxprobeError(f"the llama.cpp engine binds {LOOPBACK} only, not {config.host}")
        p = xllamacpp.CommonParams()
        p.model.path = str(config.path)
        p.n_ctx = config.n_ctx * config.slots  # llama.cpp splits n_ctx across the slots
        p.n_parallel = config.slots
        threads = config.n_threads or default_threads()
        p.cpuparams.n_threads = threads
        p.cpuparams_batch.n_threads = threads
        p.n_batch = config.n_batch
        p.n_ubatch = config.n_batch
        p.hostnames = [config.host]
        p.port = config.port
        p.warmup = False
        if config.cache_ram_mib is not None:
            p.cache_ram_mib = config.cache_ram_mib
        if config.alias is not None:
            p.model_alias = {config.alias}
        if config.chat_template is not None:
            p.chat_template = config.chat_template
        p.verbosity = 3 if os.environ.get("CTXPROBE_LLAMA_LOG") == "1" else -1
        self.config = config
        try:
            self.server: Any = xllamacpp.Server(p)
        except (RuntimeError, ValueError) as err:
            raise CtxprobeError(f"llama.cpp could not load {config.path}: {err}") from None
        address = str(self.server.listening_address)
        self.base_url = address if address.startswith("http") else f"http://{address}"

    def close(self) -> None:
        server, self.server = getattr(self, "server", None), None
        del server  # the C++ destructor stops the loop and frees the model


_SHARED: dict[tuple[str, int], Engine] = {}
_SHARED_LOCK = threading.Lock()


def shared_engine(path: Path, n_ctx: int, purpose: str) -> Engine:
    """One engine per (file, window) for the whole process (tokenizers share it)."""
    key = (str(path.resolve()), n_ctx)
    with _SHARED_LOCK:
        engine = _SHARED.get(key)
        if engine is None:
            engine = _SHARED[key] = Engine(EngineConfig(path=path.resolve(), n_ctx=n_ctx), purpose)
        return engine
