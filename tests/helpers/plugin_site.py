"""A plugin package written as files into a temporary site folder and made importable, its
entry points read by the registry, as an installed plugin's are (no pip, no network); undone
after: the modules forgotten, the registry read again."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from ctxprobe.core import registry


@contextmanager
def installed_plugin(files: Mapping[str, str], package: str, root: Path,
                     monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``files`` (path under the site folder → text, a ``*.dist-info/entry_points.txt`` among
    them) written under ``root / "site"`` and on ``sys.path`` while the block runs; yields ``root``."""
    site = root / "site"
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text.lstrip(), encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    registry.reset()  # the next look-up reads the built-ins and the entry points again
    try:
        yield root
    finally:
        monkeypatch.undo()
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]
        importlib.invalidate_caches()
        registry.reset()
