"""A run's provider batches as a journal: the entry, its states and what a journal does.

The batch executor (:mod:`ctxprobe.runner.batch`) records each batch before asking the
provider to create it, then its id the moment the provider returns one, every status
change it polls, and its end. The store keeps the journal of a run
(:class:`ctxprobe.store.batches.StoreJournal`), the runner writes it; both read these
types, so they sit here, below both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

#: A batch recorded but not yet known to the provider (killed between the two: looked up by its key).
SUBMITTING = "submitting"
#: The provider has it; its results are not collected yet.
SUBMITTED = "submitted"
#: Its results were handed to the sink (final: never polled again).
COLLECTED = "collected"
#: Never created at the provider, or lost there (final).
ABANDONED = "abandoned"
OPEN_STATES = (SUBMITTING, SUBMITTED)


@dataclass(frozen=True)
class BatchEntry:
    """One provider batch of a run. Request ``i`` has custom id ``r{i}`` and is ``case_ids[i]``."""

    key: str  # ours, made before the provider is asked (its batch's tag at the provider)
    provider: str  # "openai" | "anthropic" | "gemini"
    case_ids: tuple[str, ...]
    round: int = 1  # 1: first submission; n: the n-th for these cases
    batch_id: str | None = None
    state: str = SUBMITTING
    provider_status: str | None = None

    def custom_id(self, i: int) -> str:
        return f"r{i}"

    def case_for(self, custom_id: str) -> str | None:
        if not custom_id.startswith("r") or not custom_id[1:].isdigit():
            return None
        i = int(custom_id[1:])
        return self.case_ids[i] if i < len(self.case_ids) else None


class BatchJournal(Protocol):
    def open_batches(self, provider: str) -> list[BatchEntry]: ...
    def record(self, entry: BatchEntry) -> None: ...
    def submitted(self, key: str, batch_id: str, status: str | None) -> None: ...
    def status(self, key: str, status: str) -> None: ...
    def close(self, key: str, state: str) -> None: ...
