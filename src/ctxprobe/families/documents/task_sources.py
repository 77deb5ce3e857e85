"""Where a ``documents`` case's text comes from besides the asked document: the other
documents as filler sentences or as whole distractor documents, and where the answer sits
(the rules are stated in :mod:`ctxprobe.families.documents.task`)."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack import is_clean_sentence, split_sentences
from ctxprobe.haystack.packer import find_subsequence
from ctxprobe.tokenizers.base import Tokenizer

MIN_FILLER_SENTENCES = 20


def other_documents(documents: dict[str, str], exclude: str, seed: int) -> Iterator[str]:
    """The other documents' clean sentences, from a seeded start, cycling."""
    sentences = [s for name, text in documents.items() if name != exclude
                 for para in text.split("\n") for s in split_sentences(para) if is_clean_sentence(s)]
    if len(sentences) < MIN_FILLER_SENTENCES:
        raise CtxprobeError(
            f"filler 'other-documents' needs at least {MIN_FILLER_SENTENCES} sentences outside '{exclude}' "
            f"(found {len(sentences)}); add documents or use filler: haystack")
    i = random.Random(seed).randrange(len(sentences))
    while True:
        yield sentences[i % len(sentences)]
        i += 1


def wrap_document(name: str, text: str) -> str:
    """A document as ``filler: documents`` shows every document, the asked one included:
    its paragraphs joined by spaces (as filler paragraphs are joined), inside its tags."""
    joined = " ".join(text.split("\n"))
    return f'<document name="{name}">\n{joined}\n</document>'


def distractor_documents(documents: dict[str, str], exclude: str, seed: int) -> Iterator[str]:
    """The other documents' paragraphs, document by document in a seeded order, each
    document opened and closed by its tags; reshuffled for each pass."""
    names = sorted(n for n in documents if n != exclude)
    if not names:
        raise CtxprobeError(f"filler 'documents' needs documents besides '{exclude}'; add documents or use filler: haystack")
    rng = random.Random(seed)
    while True:
        rng.shuffle(names)
        for name in names:
            paras = documents[name].split("\n")
            for i, para in enumerate(paras):
                head = f'<document name="{name}">\n' if i == 0 else ""
                tail = "\n</document>" if i == len(paras) - 1 else ""
                yield head + para + tail


def answer_token_pos(tok: Tokenizer, prompt_ids: Sequence[int], doc_pos: int, body: str,
                     answers: tuple[str, ...]) -> int | None:
    """Token position of the answer's first occurrence in the document: its ids searched
    from the document's first token to its last (plus a margin for the tags), with and
    without a leading space; None when neither form occurs as ids there."""
    end = doc_pos + tok.count(" " + body) + 64
    for answer in answers:
        for form in (" " + answer, answer):
            at = find_subsequence(prompt_ids, tok.encode(form), doc_pos)
            if at is not None and at < end:
                return at
    return None
