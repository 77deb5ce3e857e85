"""Shared helpers for tests."""

from __future__ import annotations

from ctxprobe.models.sim_server import SimServer, _messages_hash
from ctxprobe.preflight import PROBE_MESSAGES


def case_requests(server: SimServer) -> int:
    """Chat requests a sim server served, minus the preflight probes (not cases)."""
    return server.requests_served - server.prompt_counts[_messages_hash(PROBE_MESSAGES)]
