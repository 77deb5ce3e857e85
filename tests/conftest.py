"""Shared fixtures for tests.

Helpers are fixtures, not names imported with ``from conftest import ...``: pytest loads
every ``conftest.py`` under the module name ``conftest``, so such an import picks up
whichever conftest was loaded last (``tests/tokenizers/conftest.py`` when that directory
is collected first) and collection fails depending on the order files are given in.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import Phase, settings

from ctxprobe.sim.server import SimServer, _messages_hash
from ctxprobe.redaction import forget_registered_secrets
from ctxprobe.sweep.preflight import PROBE_MESSAGES

# Property tests explore new examples locally; CI replays a fixed set (derandomize), so a
# red CI run always reproduces. Each test bounds its own max_examples.
settings.register_profile("ci", derandomize=True, print_blob=True)
# benchmarks/mutation.py runs the property tests once per mutant: the same examples every
# run (so a mutant's fate is reproducible), no example database, and no shrinking (a
# failure is all it needs, not the smallest one).
settings.register_profile("mutation", derandomize=True, database=None,
                          phases=[Phase.explicit, Phase.reuse, Phase.generate])
if os.environ.get("CTXPROBE_HYPOTHESIS_PROFILE") == "mutation":
    settings.load_profile("mutation")
elif os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _forget_registered_secrets() -> Iterator[None]:
    """Keys a test hands to a provider are remembered process-wide for scrubbing; forget
    them after each test, so one test's fake key never masks words in another's output."""
    yield
    forget_registered_secrets()


def _case_requests(server: SimServer) -> int:
    return server.requests_served - server.prompt_counts[_messages_hash(PROBE_MESSAGES)]


@pytest.fixture
def case_requests() -> Callable[[SimServer], int]:
    """``case_requests(server)``: chat requests a sim server served, minus the preflight
    probes (which are not cases)."""
    return _case_requests


def default_sigint() -> None:
    """In a child, before exec: SIGINT at its default. A test run started with SIGINT ignored
    (``nohup make test &``, as some CI runners start jobs) passes the ignored signal on to every
    child, and a child that ignores Ctrl-C never stops when a test sends it one."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def spawn() -> Iterator[Callable[..., subprocess.Popen[Any]]]:
    """``spawn(args, **popen_kwargs)``: ``subprocess.Popen`` for a child a test may Ctrl-C:
    SIGINT at its default in the child (:func:`default_sigint`), and every child still
    running at the end of the test killed and reaped, pass or fail (a failed Ctrl-C test
    once left its child polling for 40 minutes)."""
    started: list[subprocess.Popen[Any]] = []

    def start(args: Any, **kwargs: Any) -> subprocess.Popen[Any]:
        kwargs.setdefault("preexec_fn", default_sigint)
        proc = subprocess.Popen(args, **kwargs)
        started.append(proc)
        return proc

    try:
        yield start
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
            try:
                proc.communicate(timeout=30)  # reap it and close its pipes
            except (subprocess.TimeoutExpired, ValueError, OSError):
                pass
