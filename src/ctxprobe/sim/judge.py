"""Simulated judges (``sim-judge:*``): known grading behaviour, for testing judge calibration.

A sim judge reads the judge prompt built by :mod:`ctxprobe.grading.judge` like a model would: it
finds the ``Reference answer`` and ``Candidate answer`` blocks (in whichever order the
prompt shows them) and replies ``GRADE: CORRECT`` or ``GRADE: INCORRECT``. It never sees a
label. Kinds:

``sim-judge:fair``
    CORRECT iff the normalised reference occurs, as whole words, in the normalised
    candidate (normalisation as in the ``documents`` family). Insensitive to length and
    order: calibration must pass.
``sim-judge:length-biased?words=40``
    Like ``fair``, except that any candidate of ``words`` or more words is CORRECT: a judge
    impressed by long answers. Calibration must flag its length bias.
``sim-judge:position-biased``
    Takes whichever block comes *first* as the candidate and the other as the reference:
    a judge that reads the prompt by position, not by label. Calibration must flag its
    position bias.

A prompt in LongMemEval's form (``Question:``, ``Correct Answer:`` / ``Rubric:`` /
``Explanation:``, ``Model Response:``, ending ``Answer yes or no only.``;
:mod:`ctxprobe.scores.longmemeval`) is answered ``Yes.`` or ``No.``: for an answerable
question by the same test as above (the reference inside the response; ``length-biased``
also says yes to a long response), for an unanswerable one (``Explanation:``) yes when the
response says it found nothing (:data:`UNANSWERED`).
"""

from __future__ import annotations

import re
from typing import Any

from ctxprobe.errors import CtxprobeError
from ctxprobe.models.base import GenerateRequest, GenerateResult, ProviderBase
from ctxprobe.spec.names import ModelRef, as_ref
from ctxprobe.scores.answers import contains_answer

JUDGE_KINDS = ("fair", "length-biased", "position-biased")
_BLOCK = re.compile(r"(Reference answer|Candidate answer):\n<<<\n(.*?)\n>>>", re.DOTALL)


_LONGMEMEVAL = re.compile(r"\n\nQuestion: .*?\n\n(Correct Answer|Rubric|Explanation): (.*?)\n\nModel Response: "
                         r"(.*)\n\n(?:Is the model response correct\?|Does the model correctly identify the question "
                         r"as unanswerable\?) Answer yes or no only\.$", re.DOTALL)
#: What a response that declines says (the sims' own "I could not find it." among them).
UNANSWERED = ("could not find", "not mentioned", "no information", "not enough information", "cannot answer",
              "unanswerable", "don't know", "do not know")


def read_longmemeval(prompt: str) -> tuple[str, str, str] | None:
    """(label, reference, response) of a LongMemEval judge prompt, or None."""
    m = _LONGMEMEVAL.search(prompt)
    return None if m is None else (m.group(1), m.group(2), m.group(3))


def read_blocks(prompt: str) -> list[tuple[str, str]]:
    """(label, text) of the answer blocks, in prompt order."""
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer(prompt)]


class SimJudge(ProviderBase):
    """A Provider that grades judge prompts (see the module docstring)."""

    max_concurrency: int | None = None
    context_window: int | None = None

    def __init__(self, kind: str = "fair", words: int = 40) -> None:
        if kind not in JUDGE_KINDS:
            raise CtxprobeError(f"unknown sim judge 'sim-judge:{kind}': use one of "
                                + ", ".join(f"sim-judge:{k}" for k in JUDGE_KINDS))
        self.kind = kind
        self.words = words
        self.name = f"sim-judge:{kind}" + (f"?words={words}" if kind == "length-biased" else "")

    @classmethod
    def from_spec(cls, spec: str) -> SimJudge:
        """``sim-judge:KIND[?words=N]``, as the model parser cut it."""
        ref = as_ref(spec if isinstance(spec, ModelRef) or spec.startswith("sim-judge:") else f"sim-judge:{spec}")
        kind, params = ref.name, ref.options
        unknown = set(params) - ({"words"} if kind == "length-biased" else set())
        if unknown:
            raise CtxprobeError(f"unknown parameter '{sorted(unknown)[0]}' for sim-judge:{kind}")
        try:
            words = int(params.get("words", 40))
        except ValueError:
            raise CtxprobeError(f"sim-judge:{kind}: words must be an integer") from None
        return cls(kind, words)

    def grade(self, prompt: str) -> bool | None:
        blocks = read_blocks(prompt)
        if len(blocks) != 2:
            return None
        by_label = dict(blocks)
        if self.kind == "position-biased":
            candidate, reference = blocks[0][1], blocks[1][1]
        else:
            candidate, reference = by_label.get("Candidate answer", ""), by_label.get("Reference answer", "")
        if self.kind == "length-biased" and len(candidate.split()) >= self.words:
            return True
        return contains_answer(candidate, reference)

    def says_yes(self, label: str, reference: str, response: str) -> bool:
        """A LongMemEval judge prompt's answer (module docstring)."""
        if self.kind == "length-biased" and len(response.split()) >= self.words:
            return True
        if label == "Explanation":
            return any(phrase in response.lower() for phrase in UNANSWERED)
        return contains_answer(response, reference)

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        prompt = "\n\n".join(str(m.get("content", "")) for m in request.messages)
        asked = read_longmemeval(prompt)
        if asked is not None:
            text = "Yes." if self.says_yes(*asked) else "No."
            return GenerateResult(text=text, finish_reason="stop", extra={"sim_judge": self.kind})
        grade = self.grade(prompt)
        text = "I cannot grade this." if grade is None else f"GRADE: {'CORRECT' if grade else 'INCORRECT'}"
        return GenerateResult(text=text, finish_reason="stop", extra={"sim_judge": self.kind})

    async def aclose(self) -> None:
        return None


def check_sim_judge(ref: ModelRef) -> None:
    """The ``sim-judge`` provider's name check: the error :func:`make_sim_judge` would raise."""
    SimJudge.from_spec(ref)


def make_sim_judge(ref: ModelRef, **_: Any) -> SimJudge:
    """The ``sim-judge`` provider's factory (registered in :mod:`ctxprobe.core.builtins`)."""
    return SimJudge.from_spec(ref)
