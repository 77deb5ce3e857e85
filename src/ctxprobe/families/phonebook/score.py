"""Per-needle scoring of phone-book replies.

Each queried name is scored on its own, so one malformed or missing line fails only its
own needle. A reply is read line by line: the first line that mentions a queried name
answers it, with whatever follows the name up to the next queried name on that line.

Needle labels (a subset of the case taxonomy, :data:`ctxprobe.core.outcome.OUTCOMES`):

``correct``      the right number, after normalising its formatting
``not_found``    the line says NOT_FOUND (or "not found", "unknown", "n/a")
``distractor``   a number that belongs to *another* name of the book the model saw
``wrong``        an invented number: in no entry of that book (``invented`` in reports)
``parse_error``  the name is on a line but no 10-digit number and no NOT_FOUND follows it
``empty``        no line of the reply mentions the name (missing)

Number normalisation: every non-digit is dropped and a leading US country code ``1`` of an
11-digit number is removed, so ``(210) 300-4519``, ``210-300-4519``, ``210.300.4519``,
``+1 210 300 4519`` and ``2103004519`` are the same number.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ctxprobe.scores.classify import classify_miss
from ctxprobe.tokenizers.base import Message
from ctxprobe.core.outcome import Outcome

#: One book entry as the family writes it (``name : (xxx) xxx-xxxx``).
ENTRY = re.compile(r"^([a-z]+) : \((\d{3})\) (\d{3})-(\d{4})[ \t]*$", re.MULTILINE)
_NUMBER = re.compile(r"(?<!\d)(?:\+?1[\s.-]*)?\(?\d{3}\)?[\s.-]*\d{3}[\s.-]*\d{4}(?!\d)")
_NOT_FOUND = re.compile(r"not[\s_-]*found|\bunknown\b|\bn/a\b", re.IGNORECASE)
#: Order used to name a case whose needles all failed in different ways.
_FAILURE_RANK = (Outcome.DISTRACTOR, Outcome.WRONG, Outcome.NOT_FOUND, Outcome.PARSE_ERROR, Outcome.EMPTY)


def format_number(digits: str) -> str:
    """``2103004519`` → ``(210) 300-4519`` (the published format)."""
    return f"({digits[:3]}) {digits[3:6]}-{digits[6:]}"


def normalise_number(text: str) -> str | None:
    """The 10 digits of a phone number written in any common format, or None."""
    digits = re.sub(r"\D", "", text)
    if len(digits) == 11 and digits.startswith("1"):
        digits = digits[1:]
    return digits if len(digits) == 10 else None


def book_numbers(messages: list[Message]) -> dict[str, str]:
    """Number (10 digits) → name for every entry visible in the prompt."""
    out: dict[str, str] = {}
    for m in messages:
        for name, a, b, c in ENTRY.findall(m.get("content", "") or ""):
            out.setdefault(a + b + c, name)
    return out


@dataclass(frozen=True)
class Answer:
    """What the reply said for one queried name."""

    status: str  # "number" | "not_found" | "parse_error" | "empty"
    number: str | None = None  # normalised digits when status == "number"


def parse_reply(output: str, names: list[str]) -> dict[str, Answer]:
    """Answer per queried name; a line that cannot be read fails only the names on it."""
    answers: dict[str, Answer] = {}
    if not names:
        return answers
    wanted = {n.lower() for n in names}
    finder = re.compile(r"(?<![A-Za-z])(" + "|".join(sorted(map(re.escape, wanted), key=len, reverse=True))
                        + r")(?![A-Za-z])", re.IGNORECASE)
    for line in output.splitlines():
        hits = list(finder.finditer(line))
        for i, hit in enumerate(hits):
            name = hit.group(1).lower()
            if name in answers:  # the first line that answers a name counts
                continue
            end = hits[i + 1].start() if i + 1 < len(hits) else len(line)
            rest = line[hit.end():end]
            number = _NUMBER.search(rest)
            if number is not None:
                answers[name] = Answer("number", normalise_number(number.group(0)))
            elif _NOT_FOUND.search(rest):
                answers[name] = Answer("not_found")
            else:
                answers[name] = Answer("parse_error")
    return {n: answers.get(n.lower(), Answer("empty")) for n in names}


def needle_outcome(answer: Answer, expected: str | None, numbers: dict[str, str]) -> Outcome:
    """Label of one needle; ``expected`` None means the right answer is NOT_FOUND (a name
    outside a shard's sub-book)."""
    if answer.status != "number":
        if expected is None and answer.status in ("not_found", "empty"):
            return Outcome.CORRECT
        return Outcome(answer.status)
    if answer.number == expected:
        return Outcome.CORRECT
    return Outcome.DISTRACTOR if answer.number in numbers else Outcome.WRONG


def case_outcome(needle_outcomes: list[str], output: str) -> Outcome:
    """One taxonomy label for the whole reply: correct / partial / the dominant failure."""
    if needle_outcomes and all(o == Outcome.CORRECT for o in needle_outcomes):
        return Outcome.CORRECT
    if any(o == Outcome.CORRECT for o in needle_outcomes):
        return Outcome.PARTIAL
    if all(o == Outcome.EMPTY for o in needle_outcomes):
        return classify_miss(output)  # nothing parseable: empty, refusal, not_found or wrong
    counts = Counter(needle_outcomes)
    return max(_FAILURE_RANK, key=lambda o: (counts.get(o, 0), -_FAILURE_RANK.index(o)))


# -- the post's own rules (``method: post``) ------------------------------------------------
#
# The original experiment reads a reply as follows: strip it, split it on "\n"; a line that
# contains " : " maps its first " : "-field (stripped) to its second (stripped) -- a later
# line for the same name overwrites an earlier one; a line without " : " maps to itself. A
# needle is correct when its name is a key and the value equals the book's number exactly
# (``(xxx) xxx-xxxx``). For some providers the original also (a) keeps only the second
# space-separated word of a key that contains a space (a bulleted "- name") and (b) rewrites
# a value with exactly two dashes ``xxx-xxx-xxxx`` as ``(xxx) xxx-xxxx`` (by position).


def post_matches(output: str, *, normalise: bool = False) -> dict[str, str]:
    """Name → value as the post's parser reads a reply (see the comment above)."""
    matches: dict[str, str] = {}
    for line in output.strip().split("\n"):
        if " : " not in line:
            matches[line] = line
            continue
        fields = line.split(" : ")
        key, value = fields[0].strip(), fields[1].strip()
        if normalise:
            if " " in key:
                key = key.split(" ")[1]
            if value.count("-") == 2:
                value = f"({value[:3]}) {value[4:7]}-{value[8:]}"
        matches[key] = value
    return matches


def post_correct(matches: dict[str, str], name: str, number: str | None) -> bool:
    """The post's exact-match rule for one needle (``number`` as the book writes it)."""
    return name in matches and matches[name] == number
