"""``--method post`` with the post's variants, checked against the original's rules written
out here (not by calling ours).

The original's code, for a model with no system (or developer) role, sends
``conversation = [{"role": "user", "content": system_instructions}, {"role": "user",
"content": user_message}]``: the system text (prompt text + "\\n\\n# Phone book\\n\\n" +
"\\n".join(entries)) as the first user message, the question as a second one. The post
names its other next experiments (instructions repeated at the end, examples,
chain-of-thought, the book in the user prompt) without their text; ours are built from the
post's own strings by the rules docs/anchors.md states, re-derived below.
"""

from __future__ import annotations

import pytest

from ctxprobe.core.case import Cell
from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.families.phonebook.task_book import COT_PROMPT
from ctxprobe.families.phonebook.task_grid import phonebook_spec
from ctxprobe.tokenizers import resolve_tokenizer

HEADER = "\n\n# Phone book\n\n"
ASK = "Please find phone numbers for these names: "
FAMILY = make_family("phonebook", BuildContext(tokenizer=resolve_tokenizer("local"), haystack=None))


def _case(m: int, n: int, rep: int = 0, **params):
    p = validate_params("phonebook", {"method": "post", "unit": "entries", "needles": [n], **params})
    return FAMILY.generate(Cell("phonebook", m, 0.0), rep, seed=11, params=p)


def original(prompt_md: str, phone_book: list[str], selected: list[str], *, system_role: bool) -> list[dict]:
    """The original's request: its OpenAI path, with ``system_message_role = "user"`` for a
    model with no system or developer role (its o1-mini branch)."""
    system_instructions = prompt_md
    system_instructions += HEADER + "\n".join(phone_book)
    system_message_role = "system" if system_role else "user"
    conversation = [{"role": system_message_role, "content": system_instructions}]
    user_message = ASK + ", ".join(selected)
    conversation.append({"role": "user", "content": user_message})
    return conversation


def book_of(messages: list) -> tuple[str, list[str]]:
    """The prompt text and the entries of a plain post prompt (whose bytes test_phonebook_post
    checks against the original)."""
    prompt_md, _, book = messages[0]["content"].partition(HEADER)
    return prompt_md, book.split("\n")


@pytest.mark.parametrize(("m", "n", "rep"), [(100, 10, 0), (1005, 10, 3), (37, 5, 1)])
def test_no_system_role_is_the_originals_fallback(m: int, n: int, rep: int) -> None:
    plain, nosys = _case(m, n, rep), _case(m, n, rep, system_role=False)
    prompt_md, phone_book = book_of(plain.messages)
    assert plain.messages == original(prompt_md, phone_book, plain.meta["names"], system_role=True)
    assert nosys.messages == original(prompt_md, phone_book, plain.meta["names"], system_role=False)
    assert [x["role"] for x in nosys.messages] == ["user", "user"]
    # the same book and the same names: the pair differs only in the role of one message
    assert (nosys.seed, nosys.expected, nosys.meta["indices"]) == (plain.seed, plain.expected, plain.meta["indices"])


def ours(prompt_md: str, phone_book: list[str], selected: list[str], worked: list[tuple[str, str]], *,
         repeat: bool, book_in: str, system_role: bool, cot: str | None) -> list[dict]:
    """docs/anchors.md's rules for the variants the post names without their text."""
    book = HEADER + "\n".join(phone_book)
    system = prompt_md + (book if book_in == "system" else "")
    question = ASK + ", ".join(selected) + (" " + cot if cot else "")
    if repeat:
        question = prompt_md + "\n\n" + question
    turns = [q for q, _ in worked] + [question]
    if book_in == "user":
        turns[0] = "# Phone book\n\n" + "\n".join(phone_book) + "\n\n" + turns[0]
    out = [{"role": "system" if system_role else "user", "content": system}]
    for i, turn in enumerate(turns):
        out.append({"role": "user", "content": turn})
        if i < len(worked):
            out.append({"role": "assistant", "content": worked[i][1]})
    return out


@pytest.mark.parametrize("settings", [
    {"repeat_instructions": True},
    {"book_in": "user"},
    {"examples": 2},
    {"cot": True},
    {"book_in": "user", "system_role": False, "examples": 1},
    {"repeat_instructions": True, "book_in": "user", "cot": True},
])
def test_the_posts_next_experiments_are_built_from_its_strings(settings: dict) -> None:
    plain, case = _case(200, 10, 2), _case(200, 10, 2, **settings)
    prompt_md, phone_book = book_of(plain.messages)
    assert (case.seed, case.expected, case.meta["names"]) == (plain.seed, plain.expected, plain.meta["names"])
    worked = []  # the worked turns: a question about three names and its answer lines
    for q, a in zip(case.messages[1::2], case.messages[2::2]):
        if a["role"] != "assistant":
            break
        asked = q["content"].rpartition(ASK)[2].split(", ")
        lines = a["content"].split("\n")
        entries = dict(x.split(" : ") for x in phone_book)
        assert len(asked) == 3 and [x.split(" : ")[0] for x in lines] == asked
        assert lines[0] == f"{asked[0]} : {entries[asked[0]]}" and lines[2] == f"{asked[2]} : {entries[asked[2]]}"
        assert asked[1] not in entries and lines[1] == f"{asked[1]} : NOT_FOUND"
        assert not set(asked) & set(plain.meta["names"])
        worked.append((ASK + ", ".join(asked), a["content"]))
    assert len(worked) == settings.get("examples", 0)
    cot = COT_PROMPT if settings.get("cot") else None  # ctxprobe's wording (the post's is unpublished)
    assert case.messages == ours(prompt_md, phone_book, plain.meta["names"], worked,
                                 repeat=settings.get("repeat_instructions", False),
                                 book_in=settings.get("book_in", "system"),
                                 system_role=settings.get("system_role", True), cot=cot)
    right = "\n".join(f"{name} : {number}" for name, number in zip(case.meta["names"], case.expected))
    assert FAMILY.score(case, right).score == 1.0  # scored by the post's exact rule, as the plain case


def test_variants_under_post_keep_the_posts_decoding_and_refuse_its_wording() -> None:
    spec = phonebook_spec(model="sim:perfect", entries=[100], needles=[10], runs=1, method="post",
                          variants="plain, repeat:repeat_instructions=true, nosys:system_role=false, user:book_in=user")
    assert spec.decoding.top_p == 0.95 and spec.decoding.temperature == 0.0
    assert set(spec.families) == {"phonebook~plain", "phonebook~repeat", "phonebook~nosys", "phonebook~user"}
    assert all(p["method"] == "post" for p in spec.families.values())
    with pytest.raises(CtxprobeError, match="method=ctxprobe"):
        phonebook_spec(model="sim:perfect", entries=[100], needles=[10], runs=1, method="post",
                       variants="plain, four:shards=4")


def test_the_fallback_runs_from_the_command_line_and_is_stored_as_sent(tmp_path, capsys) -> None:
    """``ctxprobe phonebook --param phonebook.system_role=false`` (method post, the default):
    no longer refused; the stored request is the original's two user messages, scored by the
    post's exact rule (sim:perfect reads the book from the first user turn)."""
    from ctxprobe.cli import main
    from ctxprobe.store import open_existing

    store = str(tmp_path / "f.sqlite")
    code = main(["phonebook", "--model", "sim:perfect", "--tokenizer", "local", "--entries", "60", "--needles", "5",
                 "--runs", "2", "--param", "phonebook.system_role=false", "--store", store, "--no-plots",
                 "--no-progress"])
    assert code == 0, capsys.readouterr().err
    with open_existing(store) as st:
        recs = list(st.iter_case_records(st.list_runs()[0].run_id))
    assert len(recs) == 2
    for r in recs:
        messages = r["messages"]
        prompt_md, phone_book = book_of(messages)
        assert messages == original(prompt_md, phone_book, r["meta"]["names"], system_role=False)
        assert r["meta"]["method"] == "post" and r["score"] == 1.0
