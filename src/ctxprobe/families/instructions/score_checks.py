"""IFEval's rules (Zhou et al. 2023, google-research ``instruction_following_eval``, as
lm-evaluation-harness ships them in ``lm_eval/tasks/ifeval``), written from their text for
the instruction types ``instructions`` uses: the ones whose check needs no downloaded data
(no NLTK tokenizer, no language detector). One function per IFEval instruction id, taking
the response and the instruction's kwargs (IFEval's own names), and IFEval's strict and
loose verdicts over a list of instructions.

Strict: ``response.strip()`` is non-empty and the check passes on the response as is.
Loose: the check passes on any of eight versions of it: the response, without its first
line, without its last line, without both, and each of those four with every ``*`` removed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Check = Callable[[str, Mapping[str, Any]], bool]


def no_comma(value: str, kw: Mapping[str, Any]) -> bool:
    return not re.search(r"\,", value)


def title(value: str, kw: Mapping[str, Any]) -> bool:
    return any(t.lstrip("<").rstrip(">").strip() for t in re.findall(r"<<[^\n]+>>", value))


def postscript(value: str, kw: Mapping[str, Any]) -> bool:
    marker = str(kw["postscript_marker"]).strip()
    if marker == "P.P.S":
        pattern = r"\s*p\.\s?p\.\s?s.*$"
    elif marker == "P.S.":
        pattern = r"\s*p\.\s?s\..*$"
    else:
        pattern = r"\s*" + marker.lower() + r".*$"
    return bool(re.findall(pattern, value.lower(), flags=re.MULTILINE))


def keywords_existence(value: str, kw: Mapping[str, Any]) -> bool:
    return all(re.search(k, value, flags=re.IGNORECASE) for k in kw["keywords"])


def keyword_frequency(value: str, kw: Mapping[str, Any]) -> bool:
    n = len(re.findall(str(kw["keyword"]).strip(), value, flags=re.IGNORECASE))
    return n < int(kw["frequency"]) if kw["relation"] == "less than" else n >= int(kw["frequency"])


def forbidden_words(value: str, kw: Mapping[str, Any]) -> bool:
    return not any(re.search(r"\b" + w + r"\b", value, flags=re.IGNORECASE) for w in kw["forbidden_words"])


def bullet_lists(value: str, kw: Mapping[str, Any]) -> bool:
    stars = re.findall(r"^\s*\*[^\*].*$", value, flags=re.MULTILINE)
    dashes = re.findall(r"^\s*-.*$", value, flags=re.MULTILINE)
    return len(stars) + len(dashes) == int(kw["num_bullets"])


def end_checker(value: str, kw: Mapping[str, Any]) -> bool:
    return value.strip().strip('"').lower().endswith(str(kw["end_phrase"]).strip().lower())


def placeholders(value: str, kw: Mapping[str, Any]) -> bool:
    return len(re.findall(r"\[.*?\]", value)) >= int(kw["num_placeholders"])


def highlights(value: str, kw: Mapping[str, Any]) -> bool:
    n = sum(1 for h in re.findall(r"\*[^\n\*]*\*", value) if h.strip("*").strip())
    n += sum(1 for h in re.findall(r"\*\*[^\n\*]*\*\*", value) if h.removeprefix("**").removesuffix("**").strip())
    return n >= int(kw["num_highlights"])


def quotation(value: str, kw: Mapping[str, Any]) -> bool:
    value = value.strip()
    return len(value) > 1 and value[0] == '"' and value[-1] == '"'


CHECKS: dict[str, Check] = {
    "punctuation:no_comma": no_comma,
    "detectable_format:title": title,
    "detectable_content:postscript": postscript,
    "keywords:existence": keywords_existence,
    "keywords:frequency": keyword_frequency,
    "keywords:forbidden_words": forbidden_words,
    "detectable_format:number_bullet_lists": bullet_lists,
    "startend:end_checker": end_checker,
    "detectable_content:number_placeholders": placeholders,
    "detectable_format:number_highlighted_sections": highlights,
    "startend:quotation": quotation,
}


def loose_versions(response: str) -> list[str]:
    lines = response.split("\n")
    first, last, both = ("\n".join(lines[1:]).strip(), "\n".join(lines[:-1]).strip(), "\n".join(lines[1:-1]).strip())
    plain = [response, first, last, both]
    return [response, response.replace("*", ""), first, last, both,
            *(v.replace("*", "") for v in plain[1:])]


def verdicts(ids: Sequence[str], kwargs: Sequence[Mapping[str, Any]], response: str) -> tuple[list[bool], list[bool]]:
    """(strict, loose) verdict of each instruction, IFEval's rules. IFEval drops kwargs
    whose value is empty before it builds an instruction; so do we."""
    strict: list[bool] = []
    loose: list[bool] = []
    versions = loose_versions(response)
    for iid, kw in zip(ids, kwargs):
        check, args = CHECKS[iid], {k: v for k, v in kw.items() if v}
        strict.append(bool(response.strip()) and check(response, args))
        loose.append(any(v.strip() and check(v, args) for v in versions))
    return strict, loose
