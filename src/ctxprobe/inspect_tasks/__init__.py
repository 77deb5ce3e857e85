"""ctxprobe's cases as inspect_ai tasks: ``inspect eval ctxprobe/niah --model PROVIDER/MODEL``.

Installed with the ``inspect`` extra (``pip install 'ctxprobe[inspect]'``); inspect_ai
finds the tasks through the ``inspect_ai`` entry point group (``ctxprobe._registry`` is
``ctxprobe.inspect_tasks._registry``). This ``__init__`` imports nothing: importing a module of
the package without inspect_ai installed says which extra to install
(:func:`require_inspect`).
"""

from __future__ import annotations


def require_inspect() -> None:
    """Raise a one-line error naming the extra when inspect_ai is missing."""
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        from ctxprobe.errors import CtxprobeError

        raise CtxprobeError("ctxprobe's inspect tasks need inspect_ai: pip install 'ctxprobe[inspect]'") from None
