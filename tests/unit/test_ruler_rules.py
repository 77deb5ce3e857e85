"""RULER's own rules, re-implemented here from NVIDIA/RULER's ``scripts/data`` (not from
ctxprobe), checked against the cases the ``ruler`` family builds:

- ``qa.py``: sample ``i`` asks the ``i``-th question (``generate_input_output(index, …)``);
- ``freq_words_extraction.py`` (``sys_kwext``): the word count starts at ``B // 6`` and
  grows by ``B // 32`` while the prompt counts under ``B = L − tokens_to_generate``; the
  last count before that is kept (then stepped back while a sample's prompt is over ``B``);
- ``common_words_extraction.py``: the worked example is ``template.format(example) + ' ' +
  answer`` with the *model* template inside ``template`` — its own user/assistant exchange
  under a chat template, plain text before the question under ``base``;
- ``variable_tracking.py``: one example per run; per sample ``randomize_icl`` re-draws only
  its answer names and its value;
- ``niah.py``: the 40 even depths place needles in essays only; line haystacks use
  ``random.sample(range(num_haystack), …)``;
- ``template.py``: the ``base`` template adds nothing, while a model's chat template may add
  a default system prompt (SmolLM2's does).
"""

from __future__ import annotations

import json
import math
import re

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.core.case import Cell
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer
from ctxprobe.tokenizers.base import TokenizerBase

# RULER's texts, typed from scripts/data/synthetic/constants.py
FWE_HEAD = ("Read the following coded text and track the frequency of each coded word. Find the three most "
            "frequently appeared coded words. ")
FWE_QUESTION = ("\nQuestion: Do not provide any explanation. Please ignore the dots '....'. What are the three most "
                "frequently appeared words in the above coded text?")
FWE_PREFIX = " Answer: According to the coded text above, the three most frequently appeared words are:"
CWE_HEAD = ("Below is a numbered list of words. In these words, some appear more often than others. "
            "Memorize the ones that appear most often.\n")
CWE_QUESTION = "\nQuestion: What are the 10 most common words in the above list?"
CWE_PREFIX = " Answer: The top 10 words that appear most often in the list are:"
VT_HEAD = "Memorize and track the chain(s) of variable assignment hidden in the following text.\n\n"
RULER_DEPTHS = [round(x) for x in (100 * i / 39 for i in range(40))]  # np.round(np.linspace(0, 100, 40))


@pytest.fixture(scope="module")
def tok():
    return resolve_tokenizer("local")


def _case(family, task: str, length: int = 4096, depth: float = 0.5, rep: int = 0, seed: int = 7, **params):
    return family.generate(Cell(task, length, depth), rep, seed=seed,
                           params=validate_params("ruler", {"task": task, **params}))


# --- qa: the i-th question for sample i ---------------------------------------------------

def _squad(tmp_path, n_articles: int = 6):
    articles = []
    for a in range(n_articles):
        paragraphs = [{"context": f"Paragraph {p} of article {a} tells of the {a}{p} lantern by the river.",
                       "qas": [{"question": f"Which lantern is in paragraph {p} of article {a}?", "is_impossible": False,
                                "answers": [{"text": f"{a}{p}"}]},
                               {"question": "no answer?", "is_impossible": True, "answers": []}]}
                      for p in range(3)]
        articles.append({"title": f"A{a}", "paragraphs": paragraphs})
    path = tmp_path / "squad.json"
    path.write_text(json.dumps({"data": articles}))
    return path


def _ruler_squad_questions(path) -> list[str]:
    """RULER's read_squad's question list, in its order (answerable questions only)."""
    data = json.loads(path.read_text())
    return [qa["question"] for d in data["data"] for p in d["paragraphs"] for qa in p["qas"] if not qa["is_impossible"]]


def test_qa_sample_i_asks_the_i_th_question(tok, tmp_path) -> None:
    path = _squad(tmp_path)
    questions = _ruler_squad_questions(path)
    family = make_family("ruler", BuildContext(tok, None))
    for rep in (0, 1, 2, 7, len(questions) - 1):
        for depth in (0.0, 1.0):  # depth places nothing in QA: the question is the sample's
            case = _case(family, "qa_1", rep=rep, depth=depth, qa_file=str(path))
            assert case.meta["qa_index"] == rep
            assert case.messages[0]["content"].endswith("Question: " + questions[rep])


def test_qa_past_the_last_question_is_one_line(tok, tmp_path) -> None:
    path = _squad(tmp_path, n_articles=2)
    family = make_family("ruler", BuildContext(tok, None))
    _case(family, "qa_1", rep=5, qa_file=str(path))  # 6 questions: the last one
    with pytest.raises(CtxprobeError, match="holds 6 answerable questions; use --reps 6 or fewer") as err:
        _case(family, "qa_1", rep=6, qa_file=str(path))
    assert "\n" not in str(err.value)


# --- fwe: RULER's stepped word counts -------------------------------------------------------

class WordTokenizer(TokenizerBase):
    """One token per whitespace-separated word, no chat template: counts known by eye."""

    name = "words"
    chat_template_hash = None
    trained_context = None

    def encode(self, text: str) -> list[int]:
        return [len(w) for w in text.split()]

    def count(self, text: str) -> int:
        return len(text.split())

    def render_chat(self, messages) -> str:
        return "".join(m["content"] for m in messages)

    def encode_chat(self, messages) -> list[int]:
        return self.encode(self.render_chat(messages))

    def count_chat(self, messages) -> int:
        return len(self.encode_chat(messages))


def _ruler_fwe_words(length: int, tokens_to_generate: int = 50, alpha: float = 2.0) -> tuple[int, int]:
    """RULER's sys_kwext word count for a one-token-per-word tokenizer, and the largest count
    that fits (what ctxprobe built before), for comparison."""
    budget = length - tokens_to_generate
    vocab = budget // 50
    zeta = math.pi**2 / 6

    def count(n: int) -> int:  # template.format(context=words) + answer prefix, one token a word
        words = sum(int(n * k**-alpha / zeta) for k in range(1, vocab + 1))
        return len((FWE_HEAD + FWE_QUESTION + FWE_PREFIX).split()) + words

    step = budget // 32
    n = budget // 6
    while count(n) < budget:
        n += step
    n -= step
    while count(n) > budget:  # the per-sample loop
        n -= step
    largest = max(m for m in range(1, 2 * budget) if count(m) <= budget)
    return n, largest


@pytest.mark.parametrize("length", [4096, 8192, 5000])
def test_fwe_word_count_is_rulers_stepped_count(length) -> None:
    family = make_family("ruler", BuildContext(WordTokenizer(), None))
    case = _case(family, "fwe", length=length)
    ruler, largest = _ruler_fwe_words(length)
    assert case.meta["haystack_units"] == ruler
    assert ruler != largest  # the old rule (largest that fits) gives another count here
    text = case.messages[0]["content"]
    assert text.startswith(FWE_HEAD) and text.endswith(FWE_QUESTION)


def test_fwe_steps_from_rulers_start_with_the_real_tokenizer(tok) -> None:
    family = make_family("ruler", BuildContext(tok, None))
    for length in (4096, 8192):
        case = _case(family, "fwe", length=length)
        budget = length - 50
        n = case.meta["haystack_units"]
        assert (n - budget // 6) % (budget // 32) == 0  # a count RULER's steps reach
        assert case.token_count <= budget


# --- cwe: the worked example as its own exchange --------------------------------------------

def test_cwe_example_is_its_own_exchange_under_a_chat_template(tok) -> None:
    family = make_family("ruler", BuildContext(tok, None))
    case = _case(family, "cwe")
    roles = [m["role"] for m in case.messages]
    assert roles == ["user", "assistant", "user", "assistant"]
    example, reply, question, prefix = (m["content"] for m in case.messages)
    assert example.startswith(CWE_HEAD) and example.endswith(CWE_QUESTION)
    assert question.startswith(CWE_HEAD) and question.endswith(CWE_QUESTION)
    assert re.fullmatch(re.escape(CWE_PREFIX) + r" 1\. \S+( \d+\. \S+){9}", reply)
    assert reply.split()[-1] == case.meta["shot_answer"][-1]
    assert prefix == CWE_PREFIX
    # rendered by the model's template: the example's reply is an assistant turn before the
    # real question's user turn
    rendered = tok.render_chat(case.messages)
    assert rendered.index(example) < rendered.index(reply) < rendered.index(question)
    assert case.token_count == len(tok.encode_chat(case.messages)) and case.token_count + 120 <= 4096


def test_cwe_example_is_inline_text_without_a_chat_template() -> None:
    """RULER's ``base`` template: example + prefix + ' ' + answer, a newline, the question."""
    family = make_family("ruler", BuildContext(resolve_tokenizer("approx"), None))
    case = _case(family, "cwe")
    user, prefix = case.messages
    answer = " ".join(f"{i + 1}. {w}" for i, w in enumerate(case.meta["shot_answer"]))
    example, sep, question = user["content"].partition(CWE_PREFIX + " " + answer + "\n")
    assert sep and example.startswith(CWE_HEAD) and example.endswith(CWE_QUESTION)
    assert question.startswith(CWE_HEAD) and question.endswith(CWE_QUESTION)
    assert prefix == {"role": "assistant", "content": CWE_PREFIX}


# --- vt: one example per run, names and value re-drawn per sample ----------------------------

def _vt_example(case) -> tuple[str, list[str], str]:
    example = case.messages[0]["content"].split("\n" + VT_HEAD)[0]
    return example, case.meta["icl_names"], example.split("assigned the value ")[1].split(" ")[0]


def test_vt_builds_one_example_per_run_and_redraws_its_names_and_value(tok) -> None:
    family = make_family("ruler", BuildContext(tok, None))
    cases = [_case(family, "vt", length=L, depth=d, rep=r) for L, d, r in ((4096, 0.5, 0), (4096, 0.0, 1),
                                                                           (8192, 1.0, 3))]
    skeletons, names, values = set(), [], []
    for case in cases:
        example, icl, value = _vt_example(case)
        assert len(icl) == 5 and all(re.fullmatch(r"[A-Z]{3}", n) for n in icl)
        assert re.fullmatch(r"\d{5}", value) and value != "12345"
        assert example.endswith("they are:  " + " ".join(icl) + "\n")  # RULER: prefix, a space, the names
        skeleton = example.replace(value, "<V>")
        for i, n in enumerate(icl):
            skeleton = re.sub(rf"\b{n}\b", f"<N{i}>", skeleton)
        skeletons.add(skeleton)
        names.append(tuple(icl))
        values.append(value)
    assert len(skeletons) == 1  # the same example text (noise, layout) in every case of the run
    assert len(set(names)) == len(cases) and len(set(values)) == len(cases)  # re-drawn per sample
    # another run (another spec seed) builds its own example: another noise layout
    example, icl, value = _vt_example(_case(family, "vt", seed=8))
    skeleton = example.replace(value, "<V>")
    for i, n in enumerate(icl):
        skeleton = re.sub(rf"\b{n}\b", f"<N{i}>", skeleton)
    assert skeleton not in skeletons


# --- niah: RULER's 40 even depths in essays, uniform lines elsewhere --------------------------

def test_essay_needles_use_rulers_40_depths_line_needles_are_where_the_meta_says(tok) -> None:
    """Essays: the needles after the first sit at RULER's 40 even depths. Line haystacks
    (niah_single_1's noise, multikey_2/3's needles) hold one real needle, at the cell's
    depth (RULER: a uniformly random line); the meta says where each needle is."""
    family = make_family("ruler", BuildContext(tok, None))
    essay = _case(family, "niah_multikey_1", depth=0.5)
    depths = essay.meta["needle_depths"]
    assert depths[0] == 0.5 and len(depths) == 4
    assert all(round(d * 100) in RULER_DEPTHS and abs(d * 100 - round(d * 100)) < 1e-9 for d in depths[1:])
    for task in ("niah_multikey_2", "niah_multikey_3"):
        case = _case(family, task, depth=0.25)
        lines = case.messages[0]["content"].split("\n")
        body = [i for i, line in enumerate(lines) if line.startswith("One of the special magic")]
        needles = case.meta["needles"]
        total = len(body) - len(needles)  # filler lines (needles with other keys)
        for j, (needle, depth) in enumerate(zip(needles, case.meta["needle_depths"])):
            at = lines.index(needle)
            before = sum(1 for i in body if i < at and lines[i] not in needles)
            # the asked needle at the cell's depth; the others where their recorded depth says
            assert before == (int(total * depth) if j == 0 else round(depth * total))


# --- the chat template's default system prompt ------------------------------------------------

def test_smollm2s_template_adds_a_system_prompt_rulers_base_has_none(tok) -> None:
    family = make_family("ruler", BuildContext(tok, None))
    case = _case(family, "niah_single_1")
    assert all(m["role"] != "system" for m in case.messages)
    rendered = tok.render_chat(case.messages)
    assert "You are a helpful AI assistant named SmolLM" in rendered  # added by the template
    assert not rendered.startswith(case.messages[0]["content"])  # RULER's base: the input itself
