"""RULER's task settings, carried over verbatim from NVIDIA/RULER.

Sources (NVIDIA/RULER at c3f5e3b): ``scripts/data/synthetic/constants.py`` (templates,
answer prefixes, ``tokens_to_generate``), ``scripts/synthetic.yaml`` (the 13 tasks and their
arguments), ``scripts/data/synthetic/niah.py`` (needle and noise texts, the 40 depths),
``variable_tracking.py``, ``common_words_extraction.py``, ``freq_words_extraction.py`` and
``qa.py`` (the task generators), ``scripts/eval/synthetic/constants.py`` (metrics).
"""

from __future__ import annotations

from typing import Any

NIAH_TEMPLATE = (
    "Some special magic {type_needle_v} are hidden within the following text. Make sure to memorize it. "
    "I will quiz you about the {type_needle_v} afterwards.\n{context}\n"
    "What are all the special magic {type_needle_v} for {query} mentioned in the provided text?"
)
NIAH_PREFIX = " The special magic {type_needle_v} for {query} mentioned in the provided text are"
VT_TEMPLATE = (
    "Memorize and track the chain(s) of variable assignment hidden in the following text.\n\n{context}\n"
    "Question: Find all variables that are assigned the value {query} in the text above."
)
VT_PREFIX = (
    " Answer: According to the chain(s) of variable assignment in the text above, {num_v} variables are "
    "assigned the value {query}, they are: "
)
CWE_TEMPLATE = (
    "Below is a numbered list of words. In these words, some appear more often than others. "
    "Memorize the ones that appear most often.\n{context}\nQuestion: What are the 10 most common words in the "
    "above list?"
)
CWE_PREFIX = " Answer: The top 10 words that appear most often in the list are:"
FWE_TEMPLATE = (
    "Read the following coded text and track the frequency of each coded word. Find the three most frequently "
    "appeared coded words. {context}\nQuestion: Do not provide any explanation. Please ignore the dots '....'. "
    "What are the three most frequently appeared words in the above coded text?"
)
FWE_PREFIX = " Answer: According to the coded text above, the three most frequently appeared words are:"
QA_TEMPLATE = (
    "Answer the question based on the given documents. Only give me the answer and do not output any other "
    "words.\n\nThe following are given documents.\n\n{context}\n\nAnswer the question based on the given "
    "documents. Only give me the answer and do not output any other words.\n\nQuestion: {query}"
)
QA_PREFIX = " Answer:"
QA_DOCUMENT = "Document {i}:\n{document}"

#: RULER's generator per base task: tokens_to_generate, template, answer prefix, metric.
BASE_TASKS: dict[str, dict[str, Any]] = {
    "niah": {"tokens_to_generate": 128, "template": NIAH_TEMPLATE, "answer_prefix": NIAH_PREFIX,
             "metric": "string_match_all"},
    "variable_tracking": {"tokens_to_generate": 30, "template": VT_TEMPLATE, "answer_prefix": VT_PREFIX,
                          "metric": "string_match_all"},
    "common_words_extraction": {"tokens_to_generate": 120, "template": CWE_TEMPLATE, "answer_prefix": CWE_PREFIX,
                                "metric": "string_match_all"},
    "freq_words_extraction": {"tokens_to_generate": 50, "template": FWE_TEMPLATE, "answer_prefix": FWE_PREFIX,
                              "metric": "string_match_all"},
    "qa": {"tokens_to_generate": 32, "template": QA_TEMPLATE, "answer_prefix": QA_PREFIX,
           "metric": "string_match_part"},
}


def _niah(haystack: str, k: str, v: str, nk: int = 1, nv: int = 1, nq: int = 1) -> dict[str, Any]:
    return {"task": "niah", "args": {"type_haystack": haystack, "type_needle_k": k, "type_needle_v": v,
                                     "num_needle_k": nk, "num_needle_v": nv, "num_needle_q": nq}}


#: ``scripts/synthetic.yaml``: the 13 tasks, in RULER's order.
TASKS: dict[str, dict[str, Any]] = {
    "niah_single_1": _niah("noise", "words", "numbers"),
    "niah_single_2": _niah("essay", "words", "numbers"),
    "niah_single_3": _niah("essay", "words", "uuids"),
    "niah_multikey_1": _niah("essay", "words", "numbers", nk=4),
    "niah_multikey_2": _niah("needle", "words", "numbers"),
    "niah_multikey_3": _niah("needle", "uuids", "uuids"),
    "niah_multivalue": _niah("essay", "words", "numbers", nv=4),
    "niah_multiquery": _niah("essay", "words", "numbers", nq=4),
    "vt": {"task": "variable_tracking", "args": {"type_haystack": "noise", "num_chains": 1, "num_hops": 4}},
    "cwe": {"task": "common_words_extraction", "args": {"freq_cw": 30, "freq_ucw": 3, "num_cw": 10}},
    "fwe": {"task": "freq_words_extraction", "args": {"alpha": 2.0}},
    "qa_1": {"task": "qa", "args": {"dataset": "squad"}},
    "qa_2": {"task": "qa", "args": {"dataset": "hotpotqa"}},
}
SYNTHETIC = tuple(t for t in TASKS if not t.startswith("qa_"))

NIAH_NEEDLE = "One of the special magic {type_needle_v} for {key} is: {value}."
NOISE = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again."
#: ``np.round(np.linspace(0, 100, num=40)).astype(int)``: RULER's needle depths in percent.
DEPTHS = tuple(round(100 * i / 39) for i in range(40))
#: RULER's effective-length bar: Llama-2-7B's average at 4K.
RULER_BAR = 85.6
