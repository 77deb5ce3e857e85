"""Free-form reading (``documents``): how a sim answers a natural question about a document.

A sim does not understand prose; it reads the way an extractive reader does, by a fixed,
documented rule, and never sees an answer key:

1. *Question terms*: the question's content words (:func:`ctxprobe.haystack.overlap.content_words`:
   lowercase alphabetic words less stopwords) less the frame words of :data:`FRAME`
   (``text``, ``goes``, ``year``, ``name``...). Each term also matches its synonyms in
   :data:`LEXICON`, a small fixed thesaurus: the sims "know" those words mean the same.
2. *Best sentence*: the context's sentences (lines split at sentence ends) are scored by
   how many question terms they contain (a term counts once, by itself or a synonym). A
   sentence qualifies with at least half the terms (at least one); the highest score wins,
   the earliest on a tie. When no context sentence qualifies, the same rule runs over the
   sims' general knowledge (:data:`KNOWLEDGE`, what a model knows without the document:
   the closed-book answers a drafted question must not be able to get).
3. *Answer span*, by the question's expected type (the first match in the sentence that is
   not a question word): ``year`` (``when``, ``what/which year``) a year 1000-2099;
   ``number`` (``how many/much``, ``which/what number``) a number in digits; ``name``
   (``who``, ``which/what name``) a run of capitalised words (a sentence's first word only
   when the next is capitalised too); ``place`` (``where``, ``which city/town/country/place``)
   such a run after ``in``/``at``/``from``/``to``/``near``. Otherwise, or when the typed rule
   finds nothing: the longest run of consecutive words that are not question terms (nor
   their synonyms), stripped of stopwords at its ends; the first on a tie.
4. *Every answer* (the ``List every answer the document gives`` request): the span of each
   context sentence tied at the best score, one per line, distinct, in document order.
5. *LongMemEval's question* (``Current Date: ...`` / ``Question: ...`` / ``Answer:``, as
   ``import-published longmemeval`` builds it) is read as a free question (rules 1-3).
6. *Multiple choice* (LongBench v2's ``Choices: (A) ...`` block): the choice sharing the
   most content words and numbers (synonyms included) with the best sentence, the first on a tie,
   answered ``The correct answer is (X)``.

What it cannot answer: anything needing more than one sentence (multi-hop, counting,
summaries), negation or comparison, synonyms outside :data:`LEXICON`, spans whose words
are all question words, and a question whose terms are spread over sentences so that no
sentence holds half of them. Then it returns None and the sim says it could not find it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxprobe.haystack.sanitize import split_sentences
from ctxprobe.haystack.overlap import STOPWORDS, content_words

#: The documents family's free-answer question paragraph, and its multiple-choice one.
_FREE = re.compile(r"^Question: (.+?) Answer as briefly as possible\.?$", re.DOTALL)
_MC_BLOCK = re.compile(
    r"(?:Question|What is the correct answer to this question): (.+?)\nChoices:\n"
    r"\(A\) (.*?)\n\(B\) (.*?)\n\(C\) (.*?)\n\(D\) (.*?)(?:\n|$)", re.DOTALL)
_MC_FORMAT = "The correct answer is (insert answer here)"
#: ``draft-questions``' second pass: every answer the document gives (:mod:`ctxprobe.natural.prompts`).
_ALL = re.compile(r"^Question: (.+?) List every answer the document gives, one per line\.?$", re.DOTALL)
#: LongMemEval's closing paragraph (:mod:`ctxprobe.families.documents.task_longmemeval`).
_MEMORY = re.compile(r"^Current Date: [^\n]*\nQuestion: (.+?)\nAnswer(?: \(step by step\))?:$", re.DOTALL)

#: Words that frame a question without naming what it is about.
FRAME: frozenset[str] = frozenset(
    "text document passage mentioned goes name names number year years place city town country many "
    "called according stated state says given".split())

#: Synonym groups the sims know (every word of a group matches every other).
LEXICON: tuple[tuple[str, ...], ...] = (
    ("built", "constructed", "erected"), ("build", "construct", "erect"),
    ("ship", "vessel", "boat"), ("ships", "vessels", "boats"),
    ("lighthouse", "beacon"), ("harbour", "harbor", "port"), ("town", "village", "settlement"),
    ("founded", "established"), ("founder", "originator"), ("keeper", "warden", "custodian"),
    ("keepers", "wardens", "custodians"), ("storm", "gale", "tempest"), ("bridge", "crossing"),
    ("river", "stream"), ("mill", "factory"), ("workers", "labourers", "hands"),
    ("school", "academy"), ("teacher", "instructor", "tutor"), ("pupils", "students"),
    ("library", "archive"), ("books", "volumes"), ("church", "chapel"), ("bell", "chime"),
    ("market", "bazaar", "fair"), ("merchant", "trader"), ("merchants", "traders"),
    ("mayor", "burgomaster"), ("council", "assembly"), ("elected", "chosen"),
    ("opened", "inaugurated"), ("closed", "shut"), ("destroyed", "ruined", "wrecked"),
    ("repaired", "restored", "mended"), ("painted", "depicted"), ("painter", "artist"),
    ("wrote", "authored", "penned"), ("writer", "author"), ("poem", "verse"),
    ("cost", "price"), ("paid", "spent"), ("money", "funds"), ("gold", "bullion"),
    ("island", "isle"), ("hill", "mound"), ("mountain", "peak"), ("forest", "woods"),
    ("road", "highway"), ("railway", "railroad"), ("station", "depot"), ("train", "locomotive"),
    ("doctor", "physician"), ("hospital", "infirmary"), ("sick", "ill"),
    ("tall", "high"), ("height", "elevation"), ("long", "lengthy"), ("old", "ancient"),
    ("first", "earliest"), ("last", "final"), ("largest", "biggest"), ("small", "little"),
    ("began", "started", "commenced"), ("ended", "finished", "concluded"),
    ("married", "wed"), ("born", "birth"), ("died", "perished"), ("moved", "relocated"),
    ("lamp", "lantern"), ("tower", "spire"), ("fish", "catch"), ("fishermen", "anglers"),
    ("coast", "shore"), ("sea", "ocean"), ("wreck", "shipwreck"), ("crew", "sailors"),
    ("captain", "skipper"), ("cargo", "freight"), ("salt", "brine"), ("wool", "fleece"),
    ("farm", "homestead"), ("farmer", "grower"), ("grain", "corn"), ("bread", "loaves"),
    ("baker", "bakery"), ("festival", "celebration"), ("song", "tune"), ("museum", "gallery"),
)
_SYNONYMS: dict[str, frozenset[str]] = {w: frozenset(g) for g in LEXICON for w in g}

#: What every sim "knows" without a document: the closed-book answers.
KNOWLEDGE: tuple[str, ...] = (
    "Paris is the capital of France.",
    "Water boils at 100 degrees Celsius at sea level.",
    "The Pacific is the largest ocean on Earth.",
    "William Shakespeare wrote the play Hamlet.",
    "The Moon orbits the Earth.",
    "Mount Everest is the tallest mountain on Earth.",
    "A week has 7 days.",
    "The chemical symbol for gold is Au.",
)

_YEAR = re.compile(r"\b(1\d{3}|20\d{2})\b")
_NUMBER = re.compile(r"\b\d+(?:,\d{3})*(?:\.\d+)?\b")
WORDS = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+(?:,\d{3})*(?:\.\d+)?")
_PLACE_PREP = frozenset({"in", "at", "from", "to", "near"})


def synonyms(word: str) -> frozenset[str]:
    """The word and its synonyms in :data:`LEXICON`."""
    return _SYNONYMS.get(word, frozenset((word,)))


def question_terms(question: str) -> list[str]:
    """Content words of the question less :data:`FRAME`, in first-seen order."""
    seen: dict[str, None] = {}
    for w in re.findall(r"[a-z]+", question.lower()):
        if w not in STOPWORDS and w not in FRAME:
            seen.setdefault(w, None)
    return list(seen)


def expected_type(question: str) -> str:
    """``year``, ``number``, ``name``, ``place`` or ``span`` (rule 3 of the module docstring)."""
    q = question.lower()
    if re.search(r"\b(when|(what|which) year|in what year)\b", q):
        return "year"
    if re.search(r"\b(how many|how much|(which|what) number)\b", q):
        return "number"
    if re.search(r"\b(who|whom|(which|what) name)\b", q):
        return "name"
    if re.search(r"\b(where|(which|what) (city|town|country|place))\b", q):
        return "place"
    return "span"


def _matched(terms: list[str], sentence: str) -> int:
    words = content_words(sentence)
    return sum(1 for t in terms if synonyms(t) & words)


@dataclass(frozen=True)
class Reading:
    """What the reader made of a question: the best sentence, its score, the span."""

    sentence: str | None
    score: int
    answer: str | None
    from_knowledge: bool = False


def _sentences(context: str) -> list[str]:
    return [s for line in context.split("\n") for s in split_sentences(line)]


def best_sentence(terms: list[str], sentences: list[str]) -> tuple[str | None, int]:
    """Rule 2: the earliest sentence with the most terms, if it holds at least half."""
    need = max(1, (len(terms) + 1) // 2)
    best, top = None, 0
    for s in sentences:
        k = _matched(terms, s)
        if k > top:
            best, top = s, k
    return (best, top) if top >= need else (None, 0)


def _is_term(word: str, terms: set[str]) -> bool:
    return bool(synonyms(word.lower()) & terms)


def capital_runs(tokens: list[str], terms: set[str]) -> list[tuple[int, str]]:
    runs: list[tuple[int, str]] = []
    i = 0
    while i < len(tokens):
        j = i
        while j < len(tokens) and tokens[j][:1].isupper() and not _is_term(tokens[j], terms):
            j += 1
        if j > i and (i > 0 or j - i > 1):
            words = tokens[i:j]
            while words and words[0].lower() in STOPWORDS:
                words = words[1:]
            if words:
                runs.append((i, " ".join(words)))
        i = max(j, i + 1)
    return runs


def extract_span(question: str, sentence: str, terms: list[str]) -> str | None:
    """Rule 3: the answer span of ``sentence`` for ``question``."""
    kind = expected_type(question)
    asked = set(terms)
    q_text = question.lower()
    tokens = WORDS.findall(sentence)
    if kind in ("year", "number"):
        for m in (_YEAR if kind == "year" else _NUMBER).finditer(sentence):
            if m.group(0) not in q_text:
                return m.group(0)
    if kind in ("name", "place"):
        for at, name in capital_runs(tokens, asked):
            if kind == "name" or (at > 0 and tokens[at - 1].lower() in _PLACE_PREP):
                return name
    best: list[str] = []
    run: list[str] = []
    for tok in [*tokens, ""]:
        if tok and not _is_term(tok, asked) and tok.lower() not in q_text.split():
            run.append(tok)
            continue
        while run and run[0].lower() in STOPWORDS:
            run = run[1:]
        while run and run[-1].lower() in STOPWORDS:
            run = run[:-1]
        if len(run) > len(best):
            best = run
        run = []
    return " ".join(best) or None


def read(question: str, context: str) -> Reading:
    """Rules 1-3 over ``context``, then over :data:`KNOWLEDGE` when nothing qualifies."""
    terms = question_terms(question)
    if not terms:
        return Reading(None, 0, None)
    for source, known in ((_sentences(context), False), (list(KNOWLEDGE), True)):
        sentence, score = best_sentence(terms, source)
        if sentence is not None:
            return Reading(sentence, score, extract_span(question, sentence, terms), known)
    return Reading(None, 0, None)


def read_all(question: str, context: str) -> list[str]:
    """Rule 4: the spans of every sentence tied at the best score."""
    terms = question_terms(question)
    sentences = _sentences(context)
    best, top = best_sentence(terms, sentences) if terms else (None, 0)
    if best is None:
        return []
    spans = (extract_span(question, s, terms) for s in sentences if _matched(terms, s) == top)
    return list(dict.fromkeys(s for s in spans if s))


def choose(question: str, choices: list[str], context: str) -> str | None:
    """Rule 5: the letter of the choice that best fits the best sentence."""
    reading = read(question, context)
    if reading.sentence is None:
        return None
    words = content_words(reading.sentence) | set(_NUMBER.findall(reading.sentence))
    scores = [sum(1 for w in content_words(c) | set(_NUMBER.findall(c)) if synonyms(w) & words) for c in choices]
    top = max(scores)
    return "ABCD"[scores.index(top)] if top > 0 else None


def freeform_skill(question: str, context: str) -> str | None:
    """The answer to a ``documents`` free or multiple-choice question, or None (not one,
    or nothing found)."""
    text = question.strip()
    block = _MC_BLOCK.search(text)
    if block is None and text.startswith("Format your response as follows:") and _MC_FORMAT in text:
        head, _, _ = context.rstrip().rpartition("\n\n")  # LongBench v2's layout: the block ends the context
        block = _MC_BLOCK.search(context[len(head):])
        context = head
    if block is not None:
        letter = choose(block.group(1), [block.group(k).strip() for k in range(2, 6)], context)
        return None if letter is None else f"The correct answer is ({letter})"
    every = _ALL.match(text)
    if every is not None:
        return "\n".join(read_all(" ".join(every.group(1).split()), context)) or "NONE"
    free = _FREE.match(text) or _MEMORY.match(text)
    if free is None:
        return None
    return read(" ".join(free.group(1).split()), context).answer
