"""Deterministic fault injection for the sim server: the failures real endpoints produce.

Most wrong long-context results come from the harness, not the model. This server-side
schedule lets tests (and users checking their own harness) prove that ctxprobe labels
each failure correctly and loses nothing. A prompt's fault is chosen from the hash of its
messages, so the same prompt always meets the same fault, on any run.

Kinds (the first ``times`` attempts of a prompt fail, later ones succeed, unless the kind
is persistent):

``429``        HTTP 429 with ``Retry-After`` (seconds)          transient
``500``/``503`` HTTP 500 / 503                                   transient
``drop``       the connection is closed without a response     transient
``hang``       the answer comes after ``hang_seconds``          transient (past the client timeout)
``malformed``  HTTP 200 with a body that is not JSON            transient
``empty``      HTTP 200 with empty content                      persistent: the model "said nothing"
``dead``       HTTP 500 on every attempt                        persistent: ends as ``error``
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

FAULT_KINDS = ("429", "500", "503", "drop", "hang", "malformed", "empty", "dead")
PERSISTENT = frozenset({"empty", "dead"})


@dataclass
class FaultPlan:
    #: Share of prompts that meet each kind, e.g. {"429": 0.1, "drop": 0.1}; the rest are served cleanly.
    rates: dict[str, float]
    times: int = 1  # failing attempts per prompt for transient kinds
    retry_after: float = 0.05
    hang_seconds: float = 3.0
    seed: str = "faults"
    _attempts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = set(self.rates) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {', '.join(FAULT_KINDS)}")
        if sum(self.rates.values()) > 1.0 + 1e-9:
            raise ValueError("fault rates add up to more than 1")

    def kind_for(self, prompt_hash: str) -> str | None:
        """The fault this prompt meets (if any), fixed by its hash."""
        u = int.from_bytes(hashlib.sha256(f"{self.seed}\0{prompt_hash}".encode()).digest()[:8], "big") / 2**64
        edge = 0.0
        for kind in FAULT_KINDS:
            edge += self.rates.get(kind, 0.0)
            if u < edge:
                return kind
        return None

    def next_fault(self, prompt_hash: str) -> str | None:
        """Count this attempt and return the fault to inject now, or None to serve it."""
        kind = self.kind_for(prompt_hash)
        attempt = self._attempts.get(prompt_hash, 0) + 1
        self._attempts[prompt_hash] = attempt
        if kind is None:
            return None
        if kind in PERSISTENT or attempt <= self.times:
            return kind
        return None
