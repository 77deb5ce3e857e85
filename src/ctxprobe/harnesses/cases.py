"""A harness run's spec and its exact cases, built by ctxprobe's own builder.

Another harness (inspect_ai, lm-evaluation-harness) sends the cases; ctxprobe builds them
here exactly as ``ctxprobe run`` builds them for the same spec (same families, lengths,
depths, repetitions, seed and tokenizer: the same case ids, prompts and token counts), and
scores their replies with the same rule (:func:`score_reply`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ctxprobe.cases.builder import BuildSettings, CaseBuilder
from ctxprobe.cases.families import build_families
from ctxprobe.core.case import Case
from ctxprobe.core.family import Family
from ctxprobe.core.outcome import Scored
from ctxprobe.errors import CtxprobeError
from ctxprobe.plan.grid import planned_cases
from ctxprobe.scores.outcome import score_response
from ctxprobe.spec import Spec, make_spec
from ctxprobe.haystack.context import BuildContext

#: The keys every harness sample carries about its case (inspect sample metadata, lm-eval docs).
SAMPLE_KEYS = ("case_id", "family", "length", "depth", "rep", "token_count", "prompt_hash", "max_tokens")


@dataclass(frozen=True)
class Reply:
    """What a harness got back for one case."""

    case_id: str
    output: str | None
    finish_reason: str | None = None  # OpenAI's words: "stop", "length", ...
    prompt_tokens: int | None = None  # as the server reported them
    completion_tokens: int | None = None
    error: str | None = None  # a harness failure: no answer to score
    prompt_hash: str | None = None  # of the messages the harness sent, when it says


def harness_spec(family: str, *, model: str, tokenizer: str, lengths: Any = None, depths: Any = None,
                 reps: Any = None, seed: Any = None, max_tokens: Any = None, temperature: Any = None,
                 top_p: Any = None, params: Mapping[str, Any] | None = None) -> Spec:
    """The spec ``ctxprobe run --model MODEL --tokenizer TOKENIZER --family FAMILY ...``
    would make (``None``: ctxprobe's default). Values may be strings as a command line
    gives them (``lengths="1k,2k"``, ``depths="0,0.5,1"``)."""
    data: dict[str, Any] = {"model": model, "tokenizer": tokenizer, "families": {family: dict(params or {})}}
    for key, value in (("lengths", lengths), ("depths", depths), ("reps", reps), ("seed", seed)):
        if value is not None:
            data[key] = _listish(value) if key in ("lengths", "depths") else value
    decoding = {k: v for k, v in (("max_tokens", max_tokens), ("temperature", temperature), ("top_p", top_p))
                if v is not None}
    if decoding:
        data["decoding"] = decoding
    return make_spec(data)


def _listish(value: Any) -> Any:
    """A harness may hand a list as a tuple, a number or a comma string: the spec parses strings and lists."""
    if isinstance(value, (tuple, list)):
        return [str(v) for v in value]
    return str(value)


class HarnessCases:
    """The spec's cases in ``ctxprobe run``'s order, with their families to score them."""

    def __init__(self, spec: Spec, tokenizer_name: str) -> None:
        from ctxprobe.tokenizers import resolve_tokenizer

        if spec.baseline is not None or spec.reasoning_budgets is not None:
            raise CtxprobeError("a harness run takes neither --baseline nor reasoning budgets; "
                                "run those with `ctxprobe run`")
        self.spec = spec
        self.tokenizer_name = tokenizer_name
        self.tokenizer = resolve_tokenizer(tokenizer_name, model=spec.model)
        self.chat_template_hash: str | None = self.tokenizer.chat_template_hash
        self.trained_context: int | None = self.tokenizer.trained_context
        ctx = BuildContext(tokenizer=self.tokenizer, haystack=spec.haystack, layout=spec.layout)
        self.families: dict[str, tuple[Family, object]] = build_families(spec, ctx)
        for label, (family, params) in self.families.items():
            if family.uses_judge(params):
                raise CtxprobeError(f"{label}: judged answers (match=judge) are scored by ctxprobe's calibrated "
                                    "judge; run them with `ctxprobe run --judge MODEL`")
        self._builder = CaseBuilder(BuildSettings.of(spec, tokenizer_name), self.families)
        self._cases: dict[str, Case] | None = None

    @property
    def cases(self) -> dict[str, Case]:
        """Case id -> case, every planned case, built once."""
        if self._cases is None:
            self._cases = {p.case_id: self._builder.build(p) for p in planned_cases(self.spec)}
        return self._cases

    def max_tokens(self, case: Case) -> int:
        """The output limit ``ctxprobe run`` sends with this case."""
        return case.max_tokens or self.spec.decoding.max_tokens

    def sample_metadata(self, case: Case) -> dict[str, Any]:
        c = case.cell
        return {"case_id": case.case_id, "family": c.family, "length": c.length, "depth": c.depth, "rep": case.rep,
                "token_count": case.token_count, "prompt_hash": case.prompt_hash,
                "max_tokens": self.max_tokens(case)}

    def score(self, reply: Reply) -> tuple[float | None, Scored]:
        """(score, label): ``None`` for a harness failure (kept out of accuracy), as in ``ctxprobe run``."""
        case = self.cases.get(reply.case_id)
        if case is None:
            raise CtxprobeError(f"case '{reply.case_id}' is not one the spec builds (another spec's sample?)")
        family = self.families[case.cell.family][0]
        return score_reply(family, case, reply)


def score_reply(family: Family, case: Case, reply: Reply) -> tuple[float | None, Scored]:
    """The family's strict score and outcome label, the way a sweep labels a response
    (an input shorter than built is ``input_truncated``, a cut answer ``output_truncated``)."""
    from ctxprobe.redaction import scrub

    text = scrub(reply.output) if reply.output is not None else None
    return score_response(family, case, text=text, finish_reason=reply.finish_reason,
                          reported_prompt_tokens=reply.prompt_tokens,
                          error=scrub(reply.error) if reply.error else None)
