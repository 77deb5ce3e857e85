"""A harness log's cases read from the log itself, when they cannot be rebuilt.

A log of a ``ctxprobe/FAMILY`` inspect task is evidence on its own: each sample holds the
messages that were sent, and (from this version on) its case's answer key and scorer
settings (:func:`case_content`). When the spec's cases cannot be rebuilt here — an
``endpoint:`` tokenizer whose server is down — the import reads each case from its sample:
the messages the log holds, checked against the prompt hash ctxprobe wrote beside them, and
scored by the family's strict rule, as a rebuilt case would be.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxprobe.core.case import Case, Message, prompt_hash
from ctxprobe.core.family import Family
from ctxprobe.core.records import CaseRecord
from ctxprobe.core.outcome import Scored
from ctxprobe.errors import CtxprobeError
from ctxprobe.harnesses.cases import Reply, score_reply
from ctxprobe.spec import Spec

#: The sample metadata key holding what scores the case (its answer key and settings).
CASE_KEY = "ctxprobe_case"


def case_content(case: Case) -> dict[str, Any]:
    """What a sample carries beyond its messages so its case can be read back from a log."""
    return {"seed": case.seed, "expected": list(case.expected), "distractors": list(case.distractors),
            "meta": dict(case.meta), "needle_token_pos": case.needle_token_pos,
            "realised_depth": case.realised_depth}


def logged_case(source: str, metadata: Mapping[str, Any], messages: list[Message]) -> Case:
    """The case a sample answered, from its metadata and the messages it was sent; refused
    when the messages are not the ones ctxprobe built (their hash differs)."""
    content = metadata.get(CASE_KEY)
    case_id = str(metadata.get("case_id", "?"))
    if not isinstance(content, Mapping):
        raise CtxprobeError(f"{source}: sample '{case_id}' holds no answer key (a log written before ctxprobe "
                            "stored them): its case cannot be read from the log")
    if prompt_hash(messages) != metadata.get("prompt_hash"):
        raise CtxprobeError(f"{source}: sample '{case_id}' holds other messages than the case ctxprobe built "
                            "(their hash differs): was the log edited?")
    try:  # the sample's cell (its metadata) and its answer key (the content), as a stored record holds them
        case = CaseRecord.from_json({**metadata, **content, "messages": messages}).to_case()
    except (TypeError, ValueError) as err:
        raise CtxprobeError(f"{source}: sample '{case_id}' has a malformed case ({err})") from None
    if case.case_id != case_id:
        raise CtxprobeError(f"{source}: sample '{case_id}' names another cell than its case ({case.case_id})")
    return case


class LoggedCases:
    """The cases a log's samples answered, read from the log (the ``CaseSource`` of imports)."""

    def __init__(self, spec: Spec, tokenizer_name: str, cases: Sequence[Case], *,
                 chat_template_hash: str | None, trained_context: int | None) -> None:
        from ctxprobe.harnesses.stored import scoring_family

        self.spec = spec
        self.tokenizer_name = tokenizer_name
        self.chat_template_hash = chat_template_hash
        self.trained_context = trained_context
        self._cases = {c.case_id: c for c in cases}
        self._families: dict[str, Family] = {
            label: scoring_family(label, spec.families.get(label, {})) for label in {c.cell.family for c in cases}}

    @property
    def cases(self) -> dict[str, Case]:
        return self._cases

    def score(self, reply: Reply) -> tuple[float | None, Scored]:
        case = self._cases.get(reply.case_id)
        if case is None:
            raise CtxprobeError(f"case '{reply.case_id}' is not one the log holds")
        return score_reply(self._families[case.cell.family], case, reply)
