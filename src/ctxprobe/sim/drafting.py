"""Question drafting (``ctxprobe draft-questions``): how a sim proposes question/answer pairs.

The drafting prompt (:mod:`ctxprobe.natural.prompts`) shows a passage and ends with the
paragraph ``Write up to K question-answer pairs about facts stated in the passage above...``.
A sim reads the passage only (there is no answer key to see) and drafts by a fixed rule:

1. each sentence of the passage, in order, is a candidate; its *answer* is its first
   year, number or name by position: digits, a number word (``one``..``twenty``, tens,
   ``hundred``, ``thousand``), which the sim writes as digits as many models do (so a
   document that spells ``twelve`` does not contain the drafted ``12``), or a run of
   capitalised words (the reader's rule, :func:`ctxprobe.sim.freeform.extract_span`);
2. the question names up to 5 of the sentence's other content words, in order, each
   replaced by its first synonym in :data:`~ctxprobe.sim.freeform.LEXICON`
   when it has one: ``Which year goes with constructed, beacon and gale in the text?``;
3. the evidence is the sentence; a sentence with no answer, or fewer than 2 other content
   words, is skipped; at most K pairs, one JSON object a line.

So the words a sentence shares with the lexicon decide the question's overlap with its
evidence: a sentence none of whose words has a synonym is drafted word for word (high
overlap), which the checks must catch, as they must catch the spelled numbers (answer
absent), the answers stated twice and the facts a model knows without the document.
"""

from __future__ import annotations

import json
import re

from ctxprobe.haystack.sanitize import split_sentences
from ctxprobe.sim.freeform import LEXICON, capital_runs, WORDS
from ctxprobe.haystack.overlap import STOPWORDS

_REQUEST = re.compile(r"^Write up to (\d+) question-answer pairs about facts stated in the passage above\.")
_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
                      "ninety": 90, "hundred": 100, "thousand": 1000})
_PARAPHRASE: dict[str, str] = {g[i]: g[(i + 1) % len(g)] for g in LEXICON for i in range(len(g))}
MAX_WORDS = 5


def _answer(tokens: list[str]) -> tuple[int, str, str] | None:
    """(token index, answer, kind) of the sentence's first year, number or name (a number
    word's answer is its digits; the word itself is left out of the question)."""
    found: list[tuple[int, str, str]] = []
    for i, tok in enumerate(tokens):
        if re.fullmatch(r"1\d{3}|20\d{2}", tok):
            found.append((i, tok, "year"))
            break
        if re.fullmatch(r"\d+(?:,\d{3})*(?:\.\d+)?", tok):
            found.append((i, tok, "number"))
            break
        if tok.lower() in _NUMBER_WORDS and tok.lower() not in ("one", "zero"):
            found.append((i, str(_NUMBER_WORDS[tok.lower()]), "number"))
            break
    runs = capital_runs(tokens, set())
    if runs:
        found.append((runs[0][0], runs[0][1], "name"))
    return min(found) if found else None


def draft_sentence(sentence: str) -> dict[str, str] | None:
    """One pair from one sentence (rules 1-2), or None."""
    tokens = WORDS.findall(sentence)
    got = _answer(tokens)
    if got is None:
        return None
    at, answer, kind = got
    answer_words = {w.lower() for w in answer.split()} | {tokens[at].lower()}
    words: list[str] = []
    for tok in tokens:
        w = tok.lower()
        if not re.fullmatch(r"[a-z]+", w) or w in STOPWORDS or w in answer_words or w in words:
            continue
        words.append(w)
    if len(words) < 2:
        return None
    shown = [_PARAPHRASE.get(w, w) for w in words[:MAX_WORDS]]
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    return {"question": f"Which {kind} goes with {listed} in the text?", "answer": answer, "evidence": sentence}


def drafting_skill(question: str, context: str) -> str | None:
    """Pairs drafted from the passage (the context), one JSON object a line, or None when
    the question is not a drafting request."""
    asked = _REQUEST.match(question.strip())
    if asked is None:
        return None
    limit = int(asked.group(1))
    passage = context.rsplit("<<<\n", 1)[-1].split("\n>>>", 1)[0]
    pairs: list[str] = []
    for line in passage.split("\n"):
        for sentence in split_sentences(line):
            pair = draft_sentence(sentence)
            if pair is not None and len(pairs) < limit:
                pairs.append(json.dumps(pair, ensure_ascii=False))
    return "\n".join(pairs) if pairs else "NONE"
