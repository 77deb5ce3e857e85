"""User-facing errors.

Every error a user can cause is raised as :class:`CtxprobeError`; its ``str()`` is one
line that says what is wrong and what to do. The CLI prints it without a traceback.
"""

from __future__ import annotations


class CtxprobeError(Exception):
    """An error caused by input or environment, with a one-line actionable message."""


class MissingExtraError(CtxprobeError):
    """An optional dependency is not installed."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        super().__init__(
            f"{purpose} needs the '{package}' package: pip install 'ctxprobe[{extra}]'"
        )
