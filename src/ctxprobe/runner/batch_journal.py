"""Where a batch run writes down its provider batches, so a killed run resumes them.

The batch executor (:mod:`ctxprobe.runner.batch`) records each batch before asking the
provider to create it, then its id the moment the provider returns one, every status
change it polls, and its end. The store implements this protocol
(:class:`ctxprobe.store.batches.StoreJournal`); tests may use :class:`MemoryJournal`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
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


class MemoryJournal:
    """A journal in a dict (for library use without a store, and tests)."""

    def __init__(self) -> None:
        self.entries: dict[str, BatchEntry] = {}

    def open_batches(self, provider: str) -> list[BatchEntry]:
        return [e for e in self.entries.values() if e.provider == provider and e.state in OPEN_STATES]

    def record(self, entry: BatchEntry) -> None:
        self.entries[entry.key] = entry

    def submitted(self, key: str, batch_id: str, status: str | None) -> None:
        self.entries[key] = replace(self.entries[key], batch_id=batch_id, state=SUBMITTED, provider_status=status)

    def status(self, key: str, status: str) -> None:
        self.entries[key] = replace(self.entries[key], provider_status=status)

    def close(self, key: str, state: str) -> None:
        self.entries[key] = replace(self.entries[key], state=state)
