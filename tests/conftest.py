"""Shared fixtures for tests.

Helpers are fixtures, not names imported with ``from conftest import ...``: pytest loads
every ``conftest.py`` under the module name ``conftest``, so such an import picks up
whichever conftest was loaded last, and collection fails depending on the order files are
given in. So there is one conftest (this one); fixtures shared by a feature's tests live in
``tests/helpers/*_fixtures.py`` (loaded below), helper modules in ``tests/helpers/`` (on
pytest's ``pythonpath``: ``from fake_llm_apis import FakeServer`` works from any tier).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
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


TESTS = Path(__file__).resolve().parent

#: The tiers, one folder each; a test's tier is the folder it lives in (docs/development.md):
#: unit: pure functions and small objects (no server, no subprocess, no SQLite store, no model);
#: integration: sims, loopback HTTP servers, SQLite stores, the CLI in process;
#: e2e: the embedded model, llama.cpp servers, Chromium, fresh installs and wheel builds, the
#: README's commands. Every e2e test is also ``slow``: ``-m "not slow"`` is unit + integration.
TIERS = ("unit", "integration", "e2e")

#: Fixture modules (in tests/helpers/, on pytest's ``pythonpath``) every tier may use.
pytest_plugins = ["decide_fixtures", "tokenizer_fixtures", "view_fixtures"]

#: Test files whose slow tests run the embedded model or a llama.cpp server: under xdist's
#: ``--dist loadgroup`` they share one worker (each such run uses every core).
#: (test_readme_commands.py is not one: its commands run against sims, and its one
#: ``serve-local`` only waits for the model's /v1/models before Ctrl-C, so it runs with the
#: first phase on every core: 54 s less of the serial phase.)
EMBEDDED_MODEL_FILES = frozenset({
    "test_local_new_families.py", "test_interrupt_local.py", "test_local_mrcr_graphwalks.py",
    "test_local_natural.py", "test_native_server.py", "test_native_slots.py", "test_phonebook_local.py",
    "test_readme_numbers.py", "test_found_on_the_way.py", "test_prefix_cache_report.py",
    "test_plan_asks_server.py", "test_reasoning_sweep.py", "test_hf_local_provider.py", "test_gguf_tools_count.py",
})


def tier_of(path: Path) -> str | None:
    """The tier of a test file (its first folder under tests/), or None when it has none."""
    try:
        first = path.resolve().relative_to(TESTS).parts[0]
    except ValueError:  # outside tests/ (a scratch copy's test): no tier to check
        return "integration"
    return first if first in TIERS else None


def _uses_module_fixture(item: pytest.Item) -> bool:
    """Whether the test requests (directly or through another fixture) a fixture scoped to
    its module."""
    info = getattr(item, "_fixtureinfo", None)
    defs = getattr(info, "name2fixturedefs", {}) if info is not None else {}
    return any(getattr(d, "scope", None) == "module" for ds in defs.values() for d in ds)


class _XdistGroups:
    """xdist's ``--dist loadgroup`` sends the tests of one ``xdist_group`` to one worker by
    suffixing each test's node id with ``@group`` on the worker. pytest-xdist 3.8 writes the
    suffix to ``item._nodeid``, which pytest >= 9.2 no longer reads (its id lives in
    ``item._id``): the groups were silently ignored, each worker built a module's fixture
    again and the embedded-model tests were spread over workers. This writes the suffix where
    the installed pytest keeps the id (last, after xdist's own hook), once."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                            for m in item.iter_markers("xdist_group")})
            if not names or "@" in item.nodeid.rsplit("]", 1)[-1]:
                continue
            grouped = f"{item.nodeid}@{'_'.join(names)}"
            if hasattr(item, "_id"):
                from _pytest.nodeid import coerce_node_id

                item._id = coerce_node_id(grouped)
            else:  # an older pytest: xdist's own suffix was already read from _nodeid
                item._nodeid = grouped


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER") and config.getoption("loadgroup", default=False):
        config.pluginmanager.register(_XdistGroups(), "ctxprobe-xdist-groups")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test marked with its tier (``-m unit``, ``-m "not e2e"``); an e2e test also
    ``slow``, and ``model`` (and in the xdist group ``embedded-model``) when it runs the
    embedded model or a llama.cpp server: each such test uses every core, so ``make test``
    runs them after the others, one at a time with the machine to itself (``-m model``),
    and a plain ``-n auto`` run still keeps them on one worker (``--dist loadgroup``). A test file outside the tiers stops the run, saying where it goes."""
    unplaced: set[str] = set()
    for item in items:
        tier = tier_of(item.path)
        if tier is None:
            unplaced.add(str(item.path.relative_to(TESTS)))
            continue
        item.add_marker(tier)
        if tier == "e2e":
            item.add_marker(pytest.mark.slow)
        if item.path.name in EMBEDDED_MODEL_FILES and item.get_closest_marker("slow") is not None:
            item.add_marker(pytest.mark.model)
            item.add_marker(pytest.mark.xdist_group("embedded-model"))
        elif item.get_closest_marker("xdist_group") is None and _uses_module_fixture(item):
            # one worker for the module's tests that read a module-scoped fixture, so it is
            # built once, not once per worker (a sim sweep of 20 s, twice, before this)
            item.add_marker(pytest.mark.xdist_group(f"module:{item.path.relative_to(TESTS)}"))
    if unplaced:
        raise pytest.UsageError(
            "test files outside tests/unit, tests/integration and tests/e2e: " + ", ".join(sorted(unplaced))
            + ". Move each (git mv) into the tier it needs: unit (no server, subprocess, SQLite store or model), "
            "integration (sims, loopback servers, SQLite, the CLI in process) or e2e (the embedded model, "
            "llama.cpp, Chromium, installs, the README's commands); docs/development.md, 'The suite's tiers'.")


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
