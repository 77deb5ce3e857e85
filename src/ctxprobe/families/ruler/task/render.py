"""RULER's synthetic task generators, re-written from NVIDIA/RULER's originals.

Each generator is made once per case (its random draws fixed by the case seed) and then
rendered at any haystack size ``n`` (sentences, noise lines, needles, or words): the family
searches the largest ``n`` whose prompt fits (``fwe``: RULER's own stepped word counts). Rendering follows RULER exactly — template,
needle and question wording, answer prefix, list formats, the few-shot examples of ``vt``
and ``cwe`` — with the differences listed in ``docs/ruler-differences.md``: essay haystacks
are ctxprobe's filler sentences (no essay corpus is shipped), and a niah task's first asked
needle sits at the cell's depth (RULER draws all depths at random).
"""

from __future__ import annotations

import math
import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.families.ruler.task.meta import RulerTaskMeta
from ctxprobe.families.ruler.task import constants as C
from ctxprobe.families.ruler.task.vocab import cwe_words, generated_words, unique_of

#: RULER shuffles some lists with ``random.Random(args.random_seed)``: the same permutation
#: for every sample. Reproduced with RULER's default seed.
RULER_SEED = 42


@dataclass
class Rendered:
    text: str  # the user turn (RULER's input without the model template)
    prefix: str  # the answer prefix the reply continues
    answers: list[str]
    distractors: list[str] = field(default_factory=list)
    meta: RulerTaskMeta = field(default_factory=lambda: RulerTaskMeta())
    #: Worked examples RULER renders with the model template as exchanges of their own
    #: (cwe): (question, reply) pairs, and the real question after them. Under a chat
    #: template the case is those turns; without one, ``text`` (examples inline).
    shots: list[tuple[str, str]] = field(default_factory=list)
    question: str | None = None


def _insert_at(items: list[str], inserts: list[tuple[int, str]]) -> list[str]:
    out = list(items)
    for index, text in sorted(inserts, key=lambda p: p[0], reverse=True):
        out.insert(index, text)
    return out


class Niah:
    """``niah.py``: needles ``One of the special magic {type} for {key} is: {value}.``"""

    def __init__(self, args: dict[str, Any], seed: int, depth: float, essay: Callable[[int], list[str]]) -> None:
        self.a = args
        self.depth = depth
        self.essay = essay
        self.rng = random.Random(seed)
        rng, a = self.rng, args
        nk = max(a["num_needle_k"], a["num_needle_q"])
        self.taken: set[str] = set()
        self.keys = [unique_of(a["type_needle_k"], rng, self.taken) for _ in range(nk)]
        self.values = [[unique_of(a["type_needle_v"], rng, self.taken) for _ in range(a["num_needle_v"])]
                       for _ in self.keys]
        asked = rng.sample(range(nk), a["num_needle_q"])
        self.queries = [self.keys[i] for i in asked]
        self.answers = [v for i in asked for v in self.values[i]]
        # needles: the asked ones first, so the first asked needle goes to the cell depth
        order = asked + [i for i in range(nk) if i not in asked]
        self.needles = [C.NIAH_NEEDLE.format(type_needle_v=a["type_needle_v"], key=self.keys[i], value=v)
                        for i in order for v in self.values[i]]
        self.depths = [depth] + [d / 100 for d in rng.sample(C.DEPTHS, len(self.needles) - 1)]
        self.filler_seed = rng.getrandbits(64)
        self.min_n = len(self.needles) if a["type_haystack"] != "essay" else 1

    def _template(self) -> tuple[str, str, str]:
        template, prefix, type_v = C.NIAH_TEMPLATE, C.NIAH_PREFIX, self.a["type_needle_v"]
        if self.a["num_needle_q"] * self.a["num_needle_v"] == 1:
            for old, new in (("Some", "A"), ("are all", "is"), ("are", "is"), ("answers", "answer")):
                template, prefix = template.replace(old, new), prefix.replace(old, new)
            type_v = type_v[:-1]
        return template, prefix, type_v

    def render(self, n: int) -> Rendered:
        kind = self.a["type_haystack"]
        if kind == "essay":
            sents = self.essay(n)
            positions = [int(len(sents) * d) for d in self.depths]
            ranked = sorted(range(len(self.needles)), key=lambda j: positions[j])
            cuts = [0] + [positions[j] for j in ranked] + [len(sents)]
            parts: list[str] = []
            for i in range(1, len(cuts)):
                parts.append(" ".join(sents[cuts[i - 1]:cuts[i]]))
                if i - 1 < len(ranked):
                    parts.append(self.needles[ranked[i - 1]])
            context = " ".join(parts)
            others: list[str] = []
            depths = list(self.depths)  # RULER's: the cell's depth, then draws from its 40 even depths
        else:
            rng = random.Random(self.filler_seed)
            if kind == "noise":
                lines, others = [C.NOISE] * n, []
            else:  # "needle": the haystack is made of needles with other keys and values
                taken = set(self.taken)
                pairs = [(unique_of(self.a["type_needle_k"], rng, taken), unique_of(self.a["type_needle_v"], rng, taken))
                         for _ in range(n)]
                lines = [C.NIAH_NEEDLE.format(type_needle_v=self.a["type_needle_v"], key=k, value=v) for k, v in pairs]
                others = [v for _, v in pairs]
            first = min(int(n * self.depths[0]), n)
            # the others at uniformly random lines, as RULER's random.sample(range(n)) places
            # every needle of a line haystack (its 40 even depths are for essays only)
            rest = rng.sample([i for i in range(n) if i != first], len(self.needles) - 1) if n > 1 else []
            context = "\n".join(_insert_at(lines, list(zip([first, *rest], self.needles))))
            depths = [self.depths[0], *(p / n for p in rest)]  # filler lines before each / all
        template, prefix, type_v = self._template()
        query = ", ".join(self.queries[:-1]) + ", and " + self.queries[-1] if len(self.queries) > 1 else self.queries[0]
        text = template.format(type_needle_v=type_v, context=context, query=query)
        distractors = [v for i, k in enumerate(self.keys) if k not in self.queries for v in self.values[i]] + others
        return Rendered(text, prefix.format(type_needle_v=type_v, query=query), list(self.answers), distractors,
                        {"keys": self.queries, "needles": self.needles, "needle_depths": depths})


def _chain(rng: random.Random, hops: int, letters: int, value: str, taken: set[str]) -> tuple[list[str], list[str]]:
    names: list[str] = []
    while len(names) < hops + 1:
        name = "".join(rng.choices(string.ascii_uppercase, k=letters))
        if name not in taken and name != "VAR":
            taken.add(name)
            names.append(name)
    lines = [f"VAR {names[0]} = {value}"] + [f"VAR {names[j + 1]} = VAR {names[j]} " for j in range(hops)]
    return names, lines


def _noise_with_chains(rng: random.Random, n: int, chains: list[list[str]]) -> str:
    sentences = [C.NOISE] * n
    for chain in chains:
        positions = sorted(rng.sample(range(len(sentences)), len(chain)))
        for j, pos in enumerate(positions):
            sentences.insert(pos + j, chain[j])
    return "\n".join(sentences).replace(". \n", ".\n")


class VariableTracking:
    """``variable_tracking.py`` with ``type_haystack: noise`` and its one worked example.

    RULER builds the example once per run (names of 3 letters, value ``12345``, noise to
    500 tokens) and, for every sample, re-randomises only its names and its value
    (``randomize_icl``); :class:`VtExample` is that one example, shared by every case of a
    run, and :func:`randomize_icl` is RULER's per-sample rewrite."""

    def __init__(self, args: dict[str, Any], seed: int, example: VtExample) -> None:
        self.rng = random.Random(seed)
        self.hops, self.n_chains = args["num_hops"], args["num_chains"]
        taken: set[str] = set()
        value = str(self.rng.randint(10000, 99998))  # np.random.randint(10000, 99999)
        self.chains = [_chain(self.rng, self.hops, 5, value if c == 0 else str(self.rng.randint(10000, 99998)), taken)
                       for c in range(self.n_chains)]
        self.value = value
        self.icl, self.icl_names = randomize_icl(example.text, self.hops, self.rng)
        self.layout_seed = self.rng.getrandbits(64)
        self.min_n = self.hops + 1

    def render(self, n: int) -> Rendered:
        context = _noise_with_chains(random.Random(self.layout_seed), n, [lines for _, lines in self.chains])
        num_v = self.hops + 1
        text = self.icl + "\n" + C.VT_TEMPLATE.format(context=context, query=self.value, num_v=num_v)
        return Rendered(text, C.VT_PREFIX.format(num_v=num_v, query=self.value), list(self.chains[0][0]),
                        list(self.icl_names), {"value": self.value, "icl_names": self.icl_names})


#: The value RULER writes into its worked example before each sample replaces it.
VT_ICL_VALUE = "12345"


@dataclass(frozen=True)
class VtExample:
    """RULER's one worked ``vt`` example of a run: template + answer prefix over noise
    (at most 500 tokens, no chat template), a space, its names, a newline."""

    text: str

    ICL_TOKENS = 500  # RULER builds its example to max_seq_length=500

    @classmethod
    def build(cls, hops: int, seed: int, count: Callable[[str], int]) -> VtExample:
        rng = random.Random(seed)
        names, lines = _chain(rng, min(10, hops), 3, VT_ICL_VALUE, set())
        layout = rng.getrandbits(32)

        def text(n: int) -> str:
            context = _noise_with_chains(random.Random(layout * 1_000_003 + n), n, [lines])
            return (C.VT_TEMPLATE + C.VT_PREFIX).format(context=context, query=VT_ICL_VALUE, num_v=len(lines))

        # the largest noise count whose example is <= 500 tokens, as RULER's search finds
        # it; at least RULER's floor of 5
        n = 5
        while count(text(n + 5)) <= cls.ICL_TOKENS:
            n += 5
        while count(text(n + 1)) <= cls.ICL_TOKENS:
            n += 1
        return cls(text(n) + " " + " ".join(names) + "\n")


def randomize_icl(example: str, hops: int, rng: random.Random) -> tuple[str, list[str]]:
    """RULER's ``randomize_icl``: each of the example's last ``hops + 1`` words (its answer
    names) replaced everywhere by a random upper-case word of the same length, then the
    value ``12345`` by a random 5-digit value. A new name that would repeat another name
    or be ``VAR`` is drawn again (RULER does not check; a clash would make the example
    ambiguous)."""
    targets = example.strip().split()[-hops - 1:]
    new_names: list[str] = []
    for item in targets:
        while True:
            new = "".join(rng.choices(string.ascii_uppercase, k=len(item)))
            if new != "VAR" and new not in targets and new not in new_names:
                break
        new_names.append(new)
        example = example.replace(item, new)
    return example.replace(VT_ICL_VALUE, str(rng.randint(10000, 99998))), new_names


class CommonWords:
    """``common_words_extraction.py``: a numbered word list, one worked example first."""

    def __init__(self, args: dict[str, Any], seed: int, length: int) -> None:
        self.rng = random.Random(seed)
        self.num_cw = args["num_cw"]
        if length < 4096:
            self.shot, self.main = (20, 3, 1), (6, 1)
        else:
            self.shot, self.main = (40, 10, 3), (args["freq_cw"], args["freq_ucw"])
        self.words = cwe_words()
        self.pick_seed = self.rng.getrandbits(64)
        shot_words, shot_answer = self._example(self.rng, *self.shot)
        self.shot_question = C.CWE_TEMPLATE.format(context=shot_words)
        self.shot_reply = C.CWE_PREFIX + " " + " ".join(f"{i + 1}. {w}" for i, w in enumerate(shot_answer))
        self.shot_text = self.shot_question + self.shot_reply
        self.shot_answer = shot_answer
        self.min_n = self.num_cw + 1

    def _example(self, rng: random.Random, num_words: int, common_repeats: int,
                 uncommon_repeats: int) -> tuple[str, list[str]]:
        if num_words <= len(self.words):
            full = rng.sample(self.words, num_words)
        else:
            full = generated_words(rng, num_words, set())
        common, uncommon = full[: self.num_cw], full[self.num_cw:]
        listed = common * common_repeats + uncommon * uncommon_repeats
        random.Random(RULER_SEED).shuffle(listed)
        return " ".join(f"{i + 1}. {w}" for i, w in enumerate(listed)), common

    def render(self, n: int) -> Rendered:
        context, answer = self._example(random.Random(self.pick_seed), n, *self.main)
        question = C.CWE_TEMPLATE.format(context=context)
        # RULER's example is ``template.format(example) + ' ' + answer`` with the *model*
        # template in ``template``: under a chat template it is a user/assistant exchange of
        # its own before the real question; without one, plain text before it
        return Rendered(self.shot_text + "\n" + question, C.CWE_PREFIX, answer, [],
                        {"shot_answer": self.shot_answer},
                        shots=[(self.shot_question, self.shot_reply)], question=question)


def zeta(alpha: float) -> float:
    """Riemann zeta for alpha > 1 (scipy.special.zeta(alpha) in RULER)."""
    if alpha == 2.0:
        return math.pi**2 / 6
    n = 100_000
    return sum(k**-alpha for k in range(1, n)) + n ** (1 - alpha) / (alpha - 1) + 0.5 * n**-alpha


class FrequentWords:
    """``freq_words_extraction.py``: coded words drawn from a Zipf law; rank 1 is ``...``."""

    def __init__(self, args: dict[str, Any], seed: int, length: int, tokens_to_generate: int) -> None:
        self.rng = random.Random(seed)
        self.alpha = float(args["alpha"])
        size = (length - tokens_to_generate) // 50
        vocab = ["".join(self.rng.choices(string.ascii_lowercase, k=6)) for _ in range(size)]
        while len(set(vocab)) < size:
            vocab.append("".join(self.rng.choices(string.ascii_lowercase, k=6)))
        vocab = sorted(set(vocab))
        random.Random(RULER_SEED).shuffle(vocab)
        vocab[0] = "..."  # the top-ranked word is noise
        self.vocab = vocab
        self.min_n = 1

    def counts(self, n: int) -> list[int]:
        z = zeta(self.alpha)
        return [int(n * (k ** -self.alpha) / z) for k in range(1, len(self.vocab) + 1)]

    def size(self, count: Callable[[Rendered], int], budget: int, length: int) -> tuple[int, Rendered, int]:
        """RULER's word count (``sys_kwext``): start at ``budget // 6`` words, add
        ``budget // 32`` while the prompt counts under ``budget`` (= L − tokens_to_generate),
        keep the last count before that; then, as each sample does, step back while the
        prompt counts over ``budget``. Not the largest count that fits: RULER's own steps."""
        step = max(1, budget // 32)
        n = budget // 6
        while count(self.render(n)) < budget:
            n += step
        n -= step
        while n > 0 and (c := count(r := self.render(n))) > budget:
            n -= step
        if n <= 0:
            from ctxprobe.haystack.packer import LengthTooShort

            raise LengthTooShort(length, count(self.render(1)) + (length - budget))
        return n, r, c

    def render(self, n: int) -> Rendered:
        words = [w for w, c in zip(self.vocab, self.counts(n)) for _ in range(c)]
        random.Random(RULER_SEED).shuffle(words)
        text = C.FWE_TEMPLATE.format(context=" ".join(words))
        return Rendered(text, C.FWE_PREFIX, self.vocab[1:4], [], {"vocab_size": len(self.vocab)})
