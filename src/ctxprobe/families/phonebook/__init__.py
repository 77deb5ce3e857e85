"""The phone book (the phone-book post's experiment): M entries, N names asked at once,
recall per bin (``task.py``, its book ``task_book.py``, its grid and ``ctxprobe phonebook``'s
spec ``task_grid.py``, its reply scoring ``score.py``); its analysis of stored rows
(``analysis*.py``: ctxprobe's robust metrics and the post's own), its report hooks, tables,
plots and HTML section (``report*.py``), its sim skill (``sim.py``) and its command
(``cli.py``: ``ctxprobe phonebook``)."""

from __future__ import annotations

from ctxprobe.core.declaration import FamilyDeclaration

FAMILY = FamilyDeclaration(
    name="phonebook",
    family="ctxprobe.families.phonebook.task:Phonebook",
    sim_skill="ctxprobe.families.phonebook.sim:phonebook_skill",
    report_hooks="ctxprobe.families.phonebook.report:HOOKS",
    command="ctxprobe.families.phonebook.cli:COMMAND",
    ability="associative recall of many entries",
    instruction_phrase="You are a phone book assistant",
    summary="The phone book: N names looked up in a book of the length (no depth: ``depths`` is 0).",
    task_defaults={"depths": "0"},
)
