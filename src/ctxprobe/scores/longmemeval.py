"""LongMemEval's scoring rule (``xiaowu0162/LongMemEval``, ``src/evaluation/evaluate_qa.py``).

LongMemEval grades a reply with a judge model (GPT-4o, temperature 0, at most 10 tokens):
the judge is asked one prompt, chosen by the question's type (``get_anscheck_prompt``), and
its reply counts as correct when ``'yes'`` occurs anywhere in it, lowercased
(:func:`judge_says_yes`). A question whose ``question_id`` contains ``_abs`` is an
abstention question: whatever its type, the judge is asked whether the reply identifies it
as unanswerable, and the reference is an explanation.

The prompts are built here from their sentences (so a test can hold them against the
original's template text written out whole); the reply is stripped first, as
``run_generation.py`` strips the model's reply before saving it as the hypothesis.
"""

from __future__ import annotations

from ctxprobe.errors import CtxprobeError

#: The question types LongMemEval's data uses (``question_type``).
QUESTION_TYPES = ("single-session-user", "single-session-assistant", "single-session-preference",
                  "temporal-reasoning", "knowledge-update", "multi-session")
#: The judge's decoding in ``evaluate_qa.py``.
JUDGE_MAX_TOKENS = 10
JUDGE_TEMPERATURE = 0.0

_GIVE = "I will give you a question, a correct answer, and a response from a model. "
_YES_IF = "Please answer yes if the response contains the correct answer. Otherwise, answer no. "
_STEPS = ("If the response is equivalent to the correct answer or contains all the intermediate steps to get the "
          "correct answer, you should also answer yes. If the response only contains a subset of the information "
          "required by the answer, answer no. ")
_OFF_BY_ONE = ("In addition, do not penalize off-by-one errors for the number of days. If the question asks for the "
               "number of days/weeks/months, etc., and the model makes off-by-one errors (e.g., predicting 19 days "
               "when the answer is 18), the model's response is still correct. ")
_UPDATED = ("If the response contains some previous information along with an updated answer, the response should "
            "be considered as correct as long as the updated answer is the required answer.")
_PREFERENCE = ("I will give you a question, a rubric for desired personalized response, and a response from a model. "
               "Please answer yes if the response satisfies the desired response. Otherwise, answer no. The model "
               "does not need to reflect all the points in the rubric. The response is correct as long as it recalls "
               "and utilizes the user's personal information correctly.")
_UNANSWERABLE = ("I will give you an unanswerable question, an explanation, and a response from a model. Please "
                 "answer yes if the model correctly identifies the question as unanswerable. The model could say "
                 "that the information is incomplete, or some other information is given but the asked information "
                 "is not.")
_IS_CORRECT = "Is the model response correct?"
_IDENTIFIES = "Does the model correctly identify the question as unanswerable?"


def _instruction(question_type: str, abstention: bool) -> tuple[str, str, str]:
    """(instruction, the reference's label, the closing question) for one question."""
    if abstention:
        return _UNANSWERABLE, "Explanation", _IDENTIFIES
    if question_type in ("single-session-user", "single-session-assistant", "multi-session"):
        return _GIVE + _YES_IF + _STEPS, "Correct Answer", _IS_CORRECT
    if question_type == "temporal-reasoning":
        return _GIVE + _YES_IF + _STEPS + _OFF_BY_ONE, "Correct Answer", _IS_CORRECT
    if question_type == "knowledge-update":
        return _GIVE + _YES_IF + _UPDATED, "Correct Answer", _IS_CORRECT
    if question_type == "single-session-preference":
        return _PREFERENCE, "Rubric", _IS_CORRECT
    raise CtxprobeError(f"LongMemEval has no judge prompt for question type {question_type!r} "
                        f"(one of {', '.join(QUESTION_TYPES)})")


def is_abstention(question_id: str) -> bool:
    """``evaluate_qa.py``: ``abstention='_abs' in entry['question_id']``."""
    return "_abs" in question_id


def anscheck_prompt(question_type: str, question: str, answer: str, response: str, abstention: bool = False) -> str:
    """The judge prompt ``get_anscheck_prompt`` builds (``answer`` as ``str.format`` writes it)."""
    instruction, label, closing = _instruction(question_type, abstention)
    return (f"{instruction}\n\nQuestion: {question}\n\n{label}: {answer}\n\nModel Response: {response}\n\n"
            f"{closing} Answer yes or no only.")


def judge_says_yes(reply: str) -> bool:
    """``evaluate_qa.py``: ``label = 'yes' in eval_response.lower()`` (the reply stripped first,
    which changes nothing for a substring test): "Yes.", "no, not yes" and "yesterday" all
    count as yes; "YES" does too; "Y", "yeah" and "no" do not."""
    return "yes" in reply.strip().lower()
