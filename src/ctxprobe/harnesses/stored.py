"""A stored run's exact cases, as a harness sends them and as replies to them are scored.

Nothing is rebuilt: each case is read back from the store as it was built and sent
(messages, answer key, scorer settings, token count). Scoring needs each family's scorer,
not its builder, so the families are made with an approximate tokenizer (no file, no
server): the strict scorers read the answer and the case, never token counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxprobe.cases.families import make_labelled
from ctxprobe.core.case import Case
from ctxprobe.core.family import Family
from ctxprobe.core.outcome import Scored
from ctxprobe.errors import CtxprobeError
from ctxprobe.harnesses.cases import Reply, score_reply
from ctxprobe.spec import Spec, make_spec
from ctxprobe.store import open_existing
from ctxprobe.haystack.context import BuildContext


def scoring_family(label: str, params: Mapping[str, Any]) -> Family:
    """The family that scores ``label``'s cases (built with no real tokenizer: see the module docstring)."""
    from ctxprobe.tokenizers.approx import ApproxTokenizer

    family, _ = make_labelled(label, params, BuildContext(tokenizer=ApproxTokenizer(), haystack=None))
    return family


class StoredCases:
    """A stored run's cases, scored by their families (the ``CaseSource`` of imports)."""

    def __init__(self, run_id: str, store_path: str | Path) -> None:
        with open_existing(store_path) as store:
            run = store.require_run(run_id)
            records = list(store.iter_case_records(run.run_id))
        self.run_id = run.run_id
        self.spec: Spec = make_spec(run.spec)
        self.tokenizer_name: str = run.tokenizer
        self.chat_template_hash: str | None = run.meta.chat_template_hash
        self.trained_context: int | None = run.meta.trained_context
        self.records = records
        self._cases = {rec.case_id: rec.to_case() for rec in records}
        if not self._cases:
            raise CtxprobeError(f"run {run.run_id} has no stored cases")
        self._families: dict[str, Family] = {}

    @property
    def cases(self) -> dict[str, Case]:
        return self._cases

    def max_tokens(self, case: Case) -> int:
        return case.max_tokens or self.spec.decoding.max_tokens

    def family(self, label: str) -> Family:
        if label not in self._families:
            self._families[label] = scoring_family(label, self.spec.families.get(label, {}))
        return self._families[label]

    def score(self, reply: Reply) -> tuple[float | None, Scored]:
        case = self._cases.get(reply.case_id)
        if case is None:
            raise CtxprobeError(f"case '{reply.case_id}' is not in run {self.run_id}")
        return score_reply(self.family(case.cell.family), case, reply)
