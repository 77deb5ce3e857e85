"""Generic code names no family: what it asks of a family (its ability in the report's words,
whether the prompt layout moves its instruction, its instruction phrase for the sims, its
word-overlap claim, a bar known by its name, its computed floor...) is a field of the
family's declaration (:class:`ctxprobe.core.declaration.FamilyDeclaration`) or a member of
its class, read through the registry. So a family is one folder, ``families/<name>/``, and
one registration line, and a plugin's family gets every treatment a built-in one does.

The source is read with ``ast`` (nothing is imported): a string constant that is exactly a
built-in family's name, outside ``families/`` and the registration, fails, docstrings and
comments aside (they may name a family as an example)."""

from __future__ import annotations

import ast
from pathlib import Path

from ctxprobe.core import registry

SRC = Path(__file__).resolve().parents[2] / "src" / "ctxprobe"

#: Modules that still name families, each with why; the list only shrinks (an entry no
#: longer needed fails below).
ALLOWED: dict[str, set[str]] = {
    # the spec's default family (a spec that names none sweeps it; --distractors is its knob)
    "spec/schema.py": {"niah"},
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants of a module, its classes and functions."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def family_names_in(path: Path, names: set[str]) -> set[str]:
    """The family names ``path``'s code writes as whole string constants."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skip = _docstrings(tree)
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
            and id(node) not in skip}


def _builtin_names() -> set[str]:
    return {e.name for e in registry.entries("families") if e.origin == "ctxprobe"}


def test_generic_code_names_no_family() -> None:
    names = _builtin_names()
    assert len(names) == 13
    found: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("families/") or rel == "core/builtins.py":
            continue  # a family's own folder; the registration list
        named = family_names_in(path, names)
        if named:
            found[rel] = named
    extra = {rel: sorted(named - ALLOWED.get(rel, set())) for rel, named in found.items()
             if named - ALLOWED.get(rel, set())}
    assert not extra, ("generic code naming a family (make it a field of the family's declaration, "
                       f"core/declaration.py): {extra}")
    stale = {rel: sorted(allowed - found.get(rel, set())) for rel, allowed in ALLOWED.items()
             if allowed - found.get(rel, set())}
    assert not stale, f"no longer named there, drop from ALLOWED: {stale}"


def test_the_scan_sees_a_name_and_skips_docstrings(tmp_path: Path) -> None:
    mod = tmp_path / "m.py"
    mod.write_text('"""niah is an example."""\n\ndef f(x):\n    """Like niah."""\n    return x == "niah"\n')
    assert family_names_in(mod, {"niah", "mrcr"}) == {"niah"}
    mod.write_text('"""niah."""\nLABEL = f"{1} niah"\n')
    assert family_names_in(mod, {"niah"}) == set()
