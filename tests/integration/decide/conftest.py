"""The sim:rag sweep that decide --rag's truth tests and its stored-confirmation tests both
read: run once a session, never written to (a test that stores, as ``--confirm`` does,
copies it first). Both modules are in the xdist group ``rag-sims``, so one worker runs it."""

from __future__ import annotations

from pathlib import Path

import pytest
from decide_sims import RAG_SAG, rag_sweep


@pytest.fixture(scope="session")
def rag_sag_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The store holding :data:`RAG_SAG`'s sweep, and its run id; copy it before writing."""
    path = tmp_path_factory.mktemp("rag-sag") / "runs.sqlite"
    return path, rag_sweep(path, RAG_SAG)
