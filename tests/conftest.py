"""Shared fixtures for tests.

Helpers are fixtures, not names imported with ``from conftest import ...``: pytest loads
every ``conftest.py`` under the module name ``conftest``, so such an import picks up
whichever conftest was loaded last (``tests/tokenizers/conftest.py`` when that directory
is collected first) and collection fails depending on the order files are given in.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

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
