"""What inspect_ai's entry point loads: every ctxprobe task, registered by its import (one
per registered family, generated from the registry: :data:`ctxprobe.inspect_tasks.tasks.TASKS`)."""

from __future__ import annotations

from ctxprobe.inspect_tasks import tasks  # noqa: F401
