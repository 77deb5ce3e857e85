"""What inspect_ai's entry point loads: every ctxprobe task, registered by its import."""

from __future__ import annotations

from ctxprobe.inspect_tasks.tasks import (  # noqa: F401
    aggregation,
    documents,
    graphwalks,
    mrcr,
    multihop,
    niah,
    phonebook,
    ruler,
    vartrack,
)
