"""Judge-graded scoring for open-ended answers, trusted only after calibration.

Exact/contains matching stays the default wherever an answer is checkable. For prose
answers a judge model (any provider) grades the output against a reference with a rubric
— but an uncalibrated judge measures its own quirks, so before its grades count it is
calibrated on a labelled set (the user's, or :func:`synthetic_labelled_set`):

- *agreement*: accuracy and Cohen's kappa of its grades against the labels;
- *length bias*: each answer re-graded padded with neutral words (and, where the item
  gives one, in a shorter form); the share of grades that change;
- *position bias*: each answer re-graded with the candidate shown before the reference;
  the share of grades that change.

It passes when every number meets :class:`Thresholds`. :class:`JudgeScorer` refuses a
judge whose calibration did not pass unless forced. Judges are resolved with
:func:`resolve_judge`: ``sim-judge:*`` (see :mod:`ctxprobe.sim.judge`) or any model
spec :func:`ctxprobe.models.resolve_provider` accepts.

Every judge call goes through a :class:`ctxprobe.runner.client.ModelClient` (retries,
timeouts, rate limits, concurrency, as for the model under test). A grade the judge could
not give — its reply had no grade, or the call failed after its retries (429s, hangs,
dropped connections) — is the harness outcome ``error``: no score, retried on resume,
never the model's miss, and it never stops the sweep.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest, Provider
from ctxprobe.runner.client import CallPolicy, ModelClient, as_client
from ctxprobe.core.outcome import Scored
from ctxprobe.core.case import Case
from ctxprobe.core.case_meta import case_meta
from ctxprobe.scores.longmemeval import JUDGE_MAX_TOKENS, JUDGE_TEMPERATURE, anscheck_prompt, judge_says_yes
from ctxprobe.scores.classify import classify_miss
from ctxprobe.haystack.names import city_name, person_name
from ctxprobe.tokenizers.base import Tokenizer

RUBRIC = (
    "You are grading an answer to a question against a reference answer.\n"
    "The answer is CORRECT if it states the same fact as the reference answer; wording, length "
    "and style do not matter, and extra detail is fine if it does not contradict the reference. "
    "It is INCORRECT if it gives a different fact, contradicts the reference, or does not answer."
)
REPLY_FORMAT = "Reply with exactly one line: GRADE: CORRECT or GRADE: INCORRECT"
#: Neutral words appended for the length-bias check: they change nothing about correctness.
PADDING = (
    " I arrived at this answer after reading the whole text carefully, weighing each passage "
    "that seemed relevant to the question, and checking that nothing elsewhere in the text "
    "contradicted it; I am confident that this is what the question asks for, and I have "
    "stated it as plainly and completely as I can."
)
_GRADE = re.compile(r"GRADE:\s*(CORRECT|INCORRECT)\b", re.IGNORECASE)
Order = Literal["reference-first", "answer-first"]


def judge_prompt(question: str, reference: str, answer: str, order: Order = "reference-first",
                 also_accepted: tuple[str, ...] = ()) -> str:
    ref = f"Reference answer:\n<<<\n{reference}\n>>>"
    if also_accepted:
        ref += "\nAlso accepted: " + "; ".join(also_accepted)
    cand = f"Candidate answer:\n<<<\n{answer}\n>>>"
    blocks = (ref, cand) if order == "reference-first" else (cand, ref)
    return f"{RUBRIC}\n\nQuestion: {question}\n\n{blocks[0]}\n\n{blocks[1]}\n\n{REPLY_FORMAT}"


def parse_grade(text: str) -> bool | None:
    m = _GRADE.search(text or "")
    return None if m is None else m.group(1).upper() == "CORRECT"


def resolve_judge(spec: str, tokenizer: Tokenizer) -> Provider:
    """A judge: any model spec resolve_provider accepts, a simulated judge
    (``sim-judge:KIND``, registered like every provider) included."""
    return resolve_provider(spec.strip(), tokenizer)


@dataclass(frozen=True)
class Grade:
    """One judge call: the grade (None when there is none), the raw reply, and the call's
    error when it failed after its retries (then ``reply`` is empty)."""

    grade: bool | None
    reply: str
    error: str | None = None
    attempts: int = 1


async def agrade_call(judge: Provider | ModelClient, question: str, reference: str, answer: str,
                      order: Order = "reference-first", also_accepted: tuple[str, ...] = (),
                      max_tokens: int = 16) -> Grade:
    """Ask the judge (through its client) for one grade; a failed call is a Grade with an
    error, never an exception."""
    prompt = judge_prompt(question, reference, answer, order, also_accepted)
    client = as_client(judge)
    done = await client.call(GenerateRequest([{"role": "user", "content": prompt}], max_tokens=max_tokens))
    if done.result is None:
        return Grade(None, "", done.error or "no reply", done.attempts)
    return Grade(parse_grade(done.result.text), done.result.text, None, done.attempts)


async def agrade_longmemeval(judge: Provider | ModelClient, case: Case, output: str) -> Grade:
    """LongMemEval's grade of one reply (:mod:`ctxprobe.scores.longmemeval`): its prompt for
    the question's type, at its decoding (temperature 0, 10 tokens), read yes/no."""
    meta = case_meta(case.meta)
    prompt = anscheck_prompt(str(meta.get("question_type", "")), str(meta.get("question", "")), case.expected[0],
                             output.strip(), abstention=bool(meta.get("abstention")))
    done = await as_client(judge).call(GenerateRequest([{"role": "user", "content": prompt}],
                                                       max_tokens=JUDGE_MAX_TOKENS, temperature=JUDGE_TEMPERATURE))
    if done.result is None:
        return Grade(None, "", done.error or "no reply", done.attempts)
    reply = done.result.text or ""
    return Grade(judge_says_yes(reply), reply, None, done.attempts)


@dataclass(frozen=True)
class LabelledItem:
    question: str
    reference: str
    answer: str
    label: bool  # True: the answer is correct
    longer: str | None = None  # same answer, longer (default: answer + PADDING)
    shorter: str | None = None  # same answer, shorter (optional)


@dataclass(frozen=True)
class Thresholds:
    min_accuracy: float = 0.85
    min_kappa: float = 0.7
    max_length_flip: float = 0.1
    max_position_flip: float = 0.1


@dataclass
class CalibrationReport:
    judge: str
    n: int
    accuracy: float
    kappa: float
    length_flip_rate: float  # share of length variants whose grade differs from the original's
    favours_longer: int  # flips where the longer form got the better grade
    position_flip_rate: float
    parse_failures: int  # grades the judge did not give (no grade in its reply, or a failed call)
    thresholds: Thresholds
    passed: bool
    reasons: list[str] = field(default_factory=list)
    length_biased: bool = False
    position_biased: bool = False
    call_failures: int = 0  # calls that failed after their retries (counted in parse_failures too)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        verdict = "PASS" if self.passed else "FAIL: " + "; ".join(self.reasons)
        return (f"judge {self.judge}: accuracy {self.accuracy:.2f}, kappa {self.kappa:.2f}, length flips "
                f"{self.length_flip_rate:.2f}, position flips {self.position_flip_rate:.2f} on {self.n} items — {verdict}")


def cohen_kappa(labels: list[bool], grades: list[bool]) -> float:
    """Cohen's kappa of two binary raters (1.0 when both are constant and agree)."""
    n = len(labels)
    if n == 0:
        return 0.0
    p_o = sum(a == b for a, b in zip(labels, grades)) / n
    p_yes = (sum(labels) / n) * (sum(grades) / n)
    p_no = (1 - sum(labels) / n) * (1 - sum(grades) / n)
    p_e = p_yes + p_no
    if p_e >= 1.0:
        return 1.0 if p_o == 1.0 else 0.0
    return (p_o - p_e) / (1 - p_e)


async def acalibrate(judge: Provider | ModelClient, items: list[LabelledItem], thresholds: Thresholds | None = None,
                     concurrency: int = 4) -> CalibrationReport:
    """Calibrate ``judge``; a provider is called through a client with the default policy
    and ``concurrency`` (pass a :class:`ModelClient` to choose retries, timeouts, limits)."""
    if not items:
        raise CtxprobeError("judge calibration needs at least one labelled item")
    th = thresholds or Thresholds()
    client = as_client(judge, CallPolicy(concurrency=concurrency))
    failed: list[str] = []

    async def grade(item: LabelledItem, answer: str, order: Order = "reference-first") -> bool | None:
        g = await agrade_call(client, item.question, item.reference, answer, order)
        if g.error is not None:
            failed.append(g.error)
        return g.grade

    original = await asyncio.gather(*(grade(it, it.answer) for it in items))
    longer = await asyncio.gather(*(grade(it, it.longer or it.answer + PADDING) for it in items))
    with_short = [it for it in items if it.shorter]
    shorter = await asyncio.gather(*(grade(it, str(it.shorter)) for it in with_short))
    swapped = await asyncio.gather(*(grade(it, it.answer, "answer-first") for it in items))

    parse_failures = sum(g is None for g in [*original, *longer, *shorter, *swapped])
    grades = [bool(g) if g is not None else not it.label for g, it in zip(original, items)]  # unparsed = wrong
    labels = [it.label for it in items]
    accuracy = sum(a == b for a, b in zip(labels, grades)) / len(items)
    kappa = cohen_kappa(labels, grades)
    orig_by_id = {id(it): g for it, g in zip(items, original)}
    pairs = [(g, lo) for g, lo in zip(original, longer)]  # (base grade, longer grade)
    pairs += [(sh, orig_by_id[id(it)]) for it, sh in zip(with_short, shorter)]  # (shorter, base)
    flips = [(s, lo) for s, lo in pairs if s != lo]
    length_flip = len(flips) / len(pairs)
    favours_longer = sum(1 for s, lo in flips if lo is True and s is not True)
    position_flip = sum(a != b for a, b in zip(original, swapped)) / len(items)

    reasons = []
    if accuracy < th.min_accuracy:
        reasons.append(f"accuracy {accuracy:.2f} < {th.min_accuracy}")
    if kappa < th.min_kappa:
        reasons.append(f"kappa {kappa:.2f} < {th.min_kappa}")
    if length_flip > th.max_length_flip:
        reasons.append(f"length-biased: {length_flip:.2f} of grades change with answer length (max {th.max_length_flip})")
    if position_flip > th.max_position_flip:
        reasons.append(f"position-biased: {position_flip:.2f} of grades change with answer order (max {th.max_position_flip})")
    if failed:
        reasons.append(f"{len(failed)} judge calls failed after retries (e.g. {failed[0]})")
    return CalibrationReport(
        judge=client.name, call_failures=len(failed), n=len(items), accuracy=round(accuracy, 4), kappa=round(kappa, 4),
        length_flip_rate=round(length_flip, 4), favours_longer=favours_longer,
        position_flip_rate=round(position_flip, 4), parse_failures=parse_failures, thresholds=th,
        passed=not reasons, reasons=reasons,
        length_biased=length_flip > th.max_length_flip, position_biased=position_flip > th.max_position_flip)


def calibrate(judge: Provider | ModelClient, items: list[LabelledItem] | None = None,
              thresholds: Thresholds | None = None) -> CalibrationReport:
    """Calibrate ``judge`` on ``items`` (default: :func:`synthetic_labelled_set`). Sync entry
    point: do not call from inside a running event loop (use :func:`acalibrate`)."""
    return asyncio.run(acalibrate(judge, items if items is not None else synthetic_labelled_set(), thresholds))


def synthetic_labelled_set(n: int = 24, seed: int = 0) -> list[LabelledItem]:
    """Balanced items over invented names (no judge can know the facts beforehand): half
    correct, half wrong, terse and full-sentence forms of each, some with a shorter form."""
    rng = random.Random(seed)
    items: list[LabelledItem] = []
    for i in range(n):
        taken: set[str] = set()
        person, city, other = person_name(rng, taken), city_name(rng, taken), city_name(rng, taken)
        question = f"In which city is {person}'s workplace located?"
        correct = i % 2 == 0
        said = city if correct else other
        style = (i // 2) % 3
        if style == 0:
            items.append(LabelledItem(question, city, said, correct))
        elif style == 1:
            items.append(LabelledItem(question, city, f"{person} works in {said}.", correct, shorter=said))
        else:
            items.append(LabelledItem(question, city, f"The workplace is in {said}, according to the text.",
                                      correct, shorter=f"In {said}."))
    return items


def load_labelled_set(path: str | Path) -> list[LabelledItem]:
    """A user's labelled set: JSONL of {question, reference, answer, label (bool), longer?,
    shorter?}; a malformed line is a one-line error naming the file and line."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise CtxprobeError(f"cannot read labelled set {str(p)!r}: {err.strerror or err}") from None
    items = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise CtxprobeError(f"{p} line {n}: not valid JSON ({err.msg})") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("label"), bool) or not all(
                isinstance(obj.get(k), str) and obj[k].strip() for k in ("question", "reference", "answer")):
            raise CtxprobeError(f"{p} line {n}: need question, reference, answer (strings) and label (true/false)")
        extra = set(obj) - {"question", "reference", "answer", "label", "longer", "shorter"}
        if extra:
            raise CtxprobeError(f"{p} line {n}: unknown key '{sorted(extra)[0]}'")
        items.append(LabelledItem(obj["question"], obj["reference"], obj["answer"], obj["label"],
                                  obj.get("longer"), obj.get("shorter")))
    if not items:
        raise CtxprobeError(f"labelled set {str(p)!r} is empty")
    return items


class JudgeScorer:
    """Scores a case's output with a calibrated judge (for open-ended answers).

    Reads the question from ``case.meta["question"]``, the reference from
    ``case.expected[0]`` and accepted variants from ``case.meta["aliases"]``. A grade the
    judge did not give (unparseable reply) is the harness outcome ``error``, never a miss.
    """

    def __init__(self, judge: Provider | ModelClient, calibration: CalibrationReport | None, *,
                 force: bool = False, max_tokens: int = 16) -> None:
        if not force and (calibration is None or not calibration.passed):
            why = "it was not calibrated" if calibration is None else "its calibration failed (" + "; ".join(calibration.reasons) + ")"
            raise CtxprobeError(f"judge {judge.name} is not trusted: {why}; calibrate it or force it")
        self.client = as_client(judge)
        self.judge = self.client.provider
        self.calibration = calibration
        self.forced = force and (calibration is None or not calibration.passed)
        self.max_tokens = max_tokens

    async def ascore(self, case: Case, output: str) -> Scored:
        if not output.strip():
            return Scored(0.0, "empty")
        meta = case_meta(case.meta)
        if meta.get("rule") == "longmemeval":  # an imported LongMemEval question: its own prompt and reading
            g = await agrade_longmemeval(self.client, case, output)
        else:
            g = await agrade_call(self.client, str(meta.get("question", "")), case.expected[0], output,
                                  also_accepted=tuple(meta.get("aliases", ())), max_tokens=self.max_tokens)
        detail: dict[str, Any] = {"judge": self.judge.name, "judge_reply": g.reply[:200], "forced": self.forced}
        if g.error is not None:  # the judge was unreachable: the harness's failure, retried on resume
            return Scored(0.0, "error", {**detail, "error": f"judge: {g.error}", "judge_attempts": g.attempts})
        if g.grade is None:
            return Scored(0.0, "error", detail)
        if g.grade:
            return Scored(1.0, "correct", detail)
        return Scored(0.0, classify_miss(output), detail)

    def score(self, case: Case, output: str) -> Scored:
        """Sync form of :meth:`ascore` (not from inside a running event loop)."""
        return asyncio.run(self.ascore(case, output))
