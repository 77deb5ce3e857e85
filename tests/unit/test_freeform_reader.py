"""The sims' free-form reading (sim/freeform.py): each rule at its boundary,
read through the documents prompt's question paragraph as a sim reads it."""

from __future__ import annotations

from ctxprobe.sim.skills import answer
from ctxprobe.families.documents.sim import documents_skill
from ctxprobe.sim.drafting import draft_sentence, drafting_skill
from ctxprobe.sim.freeform import best_sentence, freeform_skill, expected_type, question_terms, read, read_all

CONTEXT = ("The old mill stood by the river for a century.\n"
           "The harbour wall was constructed in 1822 by fishermen from the north.\n"
           "The school was founded by Hester Quayle, who taught 112 pupils.\n"
           "Travellers came to the market in Barrowby every week.")


def _ask(question: str, context: str = CONTEXT) -> str | None:
    return answer(f"Question: {question} Answer as briefly as possible.", context)


def test_typed_spans() -> None:
    assert _ask("When was the harbor wall built?") == "1822"  # harbor/harbour, built/constructed: synonyms
    assert _ask("How many students did the academy founder teach?") == "112"
    assert _ask("Who established the academy?") == "Hester Quayle"
    assert _ask("Where was the bazaar for travellers?") == "Barrowby"
    assert _ask("What stood by the stream for a century?") == "old mill"  # untyped: the longest non-question run


def test_question_types_and_terms() -> None:
    assert [expected_type(q) for q in ("When did it open?", "In what year?", "How many ships?", "Which number?",
                                       "Who built it?", "Which name?", "Where is it?", "Which town?", "What is it?")] == [
        "year", "year", "number", "number", "name", "name", "place", "place", "span"]
    assert question_terms("Which year goes with mill and river in the text?") == ["mill", "river"]


def test_half_the_terms_qualify_and_ties_go_to_the_earliest() -> None:
    sentences = ["alpha beta here.", "alpha beta gamma there.", "alpha beta gamma again."]
    assert best_sentence(["alpha", "beta", "gamma", "delta"], sentences) == ("alpha beta gamma there.", 3)
    assert best_sentence(["alpha", "zeta", "eta", "theta"], sentences) == (None, 0)  # 1 of 4 < half (2)
    assert best_sentence(["alpha", "beta", "eta", "theta"], sentences) == ("alpha beta here.", 2)  # 2 of 4: half


def test_knowledge_answers_only_when_the_context_does_not() -> None:
    closed = read("Which name goes with capital and France in the text?", "")
    assert closed.answer == "Paris" and closed.from_knowledge
    assert read("Which name goes with capital and France?", "The capital of France was Lutetia Prime.").answer == \
        "Lutetia Prime"
    assert _ask("Which number goes with walrus and saxophone?", "") is None  # neither knows: the sim says so


def test_every_answer_and_multiple_choice() -> None:
    ctx = "Ansel Ferro was the keeper of the lighthouse.\nDora Ferro was the keeper of the lighthouse."
    assert read_all("Which name goes with warden and beacon?", ctx) == ["Ansel Ferro", "Dora Ferro"]
    mc = ("Question: When was the harbor wall built?\nChoices:\n(A) 1809\n(B) 1822\n(C) 1877\n(D) 1791\n"
          'Format your response as follows: "The correct answer is (insert answer here)".')
    assert answer(mc, CONTEXT) == "The correct answer is (B)"


def test_other_families_questions_are_not_read() -> None:
    for q in ("What is the special magic number for calm-lake-12?", "Which city does Orlan Vesk work in?"):
        assert documents_skill(q, CONTEXT) is None and freeform_skill(q, CONTEXT) is None


def test_drafting_rule() -> None:
    pair = draft_sentence("The harbour wall was built in 1822 by fishermen who wanted shelter.")
    assert pair == {"question": "Which year goes with harbor, wall, constructed, anglers and wanted in the text?",
                    "answer": "1822", "evidence": "The harbour wall was built in 1822 by fishermen who wanted shelter."}
    assert draft_sentence("The depot employed twelve porters.")["answer"] == "12"  # digits, as many models write
    assert draft_sentence("Nothing to ask here at all.") is None  # no year, number or name
    assert draft_sentence("Built in 1822.") is None  # fewer than 2 other content words
    prompt = 'Passage:\n<<<\nThe mill opened in 1840 by the river.\nNo fact here.\n>>>'
    reply = drafting_skill("Write up to 1 question-answer pairs about facts stated in the passage above. x", prompt)
    assert reply is not None and reply.count("\n") == 0 and '"answer": "1840"' in reply
