"""No import circles between ctxprobe's own modules, deferred (function-level) imports
included: when two modules need each other, the shared piece belongs a layer below both.

The graph is read from the source with `ast` (nothing is imported), so a circle hidden
behind a lazy import inside a function is found as surely as a top-level one. Imports
under ``if TYPE_CHECKING:`` never run, but they still say one module needs another's
types: they are edges too, held to the same layers and the same "no circles"."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest


SRC = Path(__file__).resolve().parents[2] / "src"
PKG = "ctxprobe"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((SRC / PKG).rglob("*.py"))}


def _resolve(current: str, is_package: bool, level: int, module: str | None) -> str:
    """The absolute name a relative `from ... import` refers to."""
    base = current.split(".") if is_package else current.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _closest_module(name: str, modules: dict[str, Path]) -> str | None:
    """`ctxprobe.a.b.func` -> `ctxprobe.a.b` (the longest prefix that is one of our modules)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def _with_parents(name: str) -> list[str]:
    """Importing `pkg.sub.mod` runs `pkg/__init__`, `pkg/sub/__init__` and `mod`."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every ctxprobe module `name` imports, at any depth of its code."""
    is_package = path.name == "__init__.py"
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        found: list[str] = []
        if isinstance(node, ast.Import):
            found = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, is_package, node.level, node.module) if node.level else (node.module or "")
            # `from pkg import x`: x may be a submodule (then it is imported) or a name in pkg
            found = [base] + [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
        for target in found:
            if not (target == PKG or target.startswith(PKG + ".")):
                continue
            mod = _closest_module(target, modules)
            if mod is None:
                continue
            for dep in _with_parents(mod):
                if dep in modules and dep != name and not name.startswith(dep + "."):
                    # a module's own ancestors are already running when it is imported:
                    # `pkg/sub.py` importing `pkg` is not an edge a circle can close through
                    targets.add(dep)
            if mod == name:
                targets.add(name)  # a self-import: reported as a loop
    return targets


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (the graph has a few hundred nodes)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                out.append(sorted(comp))
    return out


def _one_cycle(graph: dict[str, set[str]], comp: list[str]) -> list[str]:
    """A concrete circle inside a strongly connected component, for the failure message."""
    members = set(comp)
    start = comp[0]
    # breadth-first from start back to start, inside the component
    prev: dict[str, str] = {}
    frontier = [start]
    seen = {start}
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [start] + list(reversed(path[:-1])) + [start] if node != start else [start, start]
                if child not in seen:
                    seen.add(child)
                    prev[child] = node
                    nxt.append(child)
        frontier = nxt
    return comp


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    cycles = []
    for comp in strongly_connected(graph):
        if len(comp) > 1 or comp[0] in graph[comp[0]]:
            cycles.append(_one_cycle(graph, comp))
    return cycles


def test_the_graph_sees_deferred_and_relative_imports(tmp_path: Path) -> None:
    """The checker itself: a circle closed only by an import inside a function, through a
    relative import and a package __init__, is found; the same tree without it is clean."""
    global SRC
    pkg = tmp_path / PKG
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .b import thing\n")
    (pkg / "a.py").write_text("from ctxprobe.sub import thing\n")
    (pkg / "sub" / "b.py").write_text("thing = 1\n\ndef late():\n    from ..a import x\n    return x\n")
    saved = SRC
    try:
        SRC = tmp_path
        cycles = find_cycles(import_graph())
        assert cycles and set(cycles[0]) == {"ctxprobe.a", "ctxprobe.sub", "ctxprobe.sub.b"}
        (pkg / "sub" / "b.py").write_text("thing = 1\n")
        assert find_cycles(import_graph()) == []
        # a type-only import never runs, but it is an edge all the same
        typed = "from typing import TYPE_CHECKING\nthing = 1\nif TYPE_CHECKING:\n    from ctxprobe.a import x\n"
        (pkg / "sub" / "b.py").write_text(typed)
        assert find_cycles(import_graph())
        (pkg / "a.py").write_text("import ctxprobe.a\n")
        assert find_cycles(import_graph()) == [["ctxprobe.a", "ctxprobe.a"]]
    finally:
        SRC = saved


def test_no_import_circles_in_ctxprobe() -> None:
    graph = import_graph()
    assert len(graph) > 50 and "ctxprobe.cli" in graph  # the walk really read the package
    cycles = find_cycles(graph)
    assert not cycles, "import circles (each line one circle, deferred imports included):\n" + "\n".join(
        "  " + " -> ".join(c) for c in cycles
    )


#: The pipeline's layers, lowest first (docs/architecture.md): a module may import its own
#: layer and the ones before it, never a later one; inside a layer, the no-circles test above
#: keeps imports one way. Eight, each a stage a newcomer can name, its folders listed.
#: An entry names a folder (``scores``) or one module in it (``prices.table``); a module is in
#: the layer of its longest entry.
LAYER_NAMES = ("foundation", "cases", "models", "running", "analysis", "reports", "orchestration", "interface")
LAYERS: list[set[str]] = [
    # foundation: shared types and the registry, the spec, scoring rules, prices
    {"errors", "redaction", "_version", "core", "prices", "scores", "spec", "prices.table", "prices.listing"},
    # cases: the model file, tokenizers, filler and the families' task files (ROLES), plan, building
    {"embedded", "tokenizers", "haystack", "plan", "cases"},
    # models: what providers share, one folder per provider, the simulator (reached only by registry)
    {"models", "providers", "sim"},
    # running: sending with limits, the store, scoring each response into it (grading)
    {"runner", "store", "grading"},
    {"analysis"},  # analysis: intervals, effective length, comparison, the gate
    {"report", "decide"},  # reports: terminal, JSON, HTML, plots; decide's choice of model
    # orchestration: one sweep wired, other harnesses' runs, the inspect_ai tasks, natural cases
    {"sweep", "harnesses", "inspect_tasks", "natural"},
    {"view", "cli", "", "plugin"},  # interface: view, the CLI, the public API ("" = ctxprobe/__init__.py)
]


#: A family package, ``families/<name>/``, holds parts of several layers; each file's layer
#: is named by its role, the file's name up to its first ``_`` (``task_book.py``: task), or
#: the name of the folder inside the package that holds it (``task/qa.py``: task). Its
#: ``__init__.py`` is the family's declaration (``FAMILY``), in the core layer: the
#: registry's built-ins import it, and it names its parts by path only.
FAMILIES = "families"
ROLES: dict[str, str] = {
    "task": "haystack", "score": "haystack", "preset": "haystack",  # the family class, its scorer, its presets
    "sim": "sim",  # its sim skill: reached only through the registry, like all of sim/
    "analysis": "analysis",  # its analysis of stored rows
    "report": "report",  # its report hooks, terminal tables, plots, HTML
    "cli": "cli",  # its command
}


def _folder_layer(rel: str) -> int:
    best: tuple[int, int] | None = None  # (length of the entry, layer)
    for i, names in enumerate(LAYERS):
        for entry in names:
            if (rel == entry or rel.startswith(entry + ".")) and (
                    best is None or len(entry) > best[0]):
                best = (len(entry), i)
    if best is None:
        top = rel.split(".")[0]
        raise AssertionError(f"ctxprobe.{rel}: its folder {top!r} is in no layer; add it to LAYERS and "
                             "docs/architecture.md")
    return best[1]


def family_role(module: str) -> str | None:
    """The role of a module of a family package (``"declaration"`` for the packages'
    ``__init__``), None for a module outside ``families/``."""
    parts = module.split(".")[1:]
    if not parts or parts[0] != FAMILIES:
        return None
    if len(parts) <= 2:
        return "declaration"
    role = parts[2].split("_")[0]
    if role not in ROLES:
        raise AssertionError(f"{module}: a family package's file is named by its role ({', '.join(sorted(ROLES))}, "
                             "optionally ROLE_more.py or in a folder ROLE/): rename it (docs/architecture.md)")
    return role


#: A provider package, ``providers/<name>/``: its ``__init__.py`` is the provider's declaration
#: (``PROVIDER``), in the core layer like a family's (the registry's built-ins import it, and
#: it names its parts by path only); every other file of it is in the providers layer.
PROVIDERS = "providers"


def is_provider_declaration(module: str) -> bool:
    parts = module.split(".")[1:]
    return parts[:1] == [PROVIDERS] and len(parts) <= 2


def _layer(module: str) -> int:
    role = family_role(module)
    if role is not None:
        return _folder_layer("core" if role == "declaration" else ROLES[role])
    if is_provider_declaration(module):
        return _folder_layer("core")
    return _folder_layer(module.split(".", 1)[1] if "." in module else "")


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a later layer; every module must have a layer (a file in a folder
    that is in no layer, or a family's file named by no role, fails here)."""
    layer = {mod: _layer(mod) for mod in graph}
    return sorted(f"{mod} -> {dep}" for mod, deps in graph.items() for dep in deps if layer[dep] > layer[mod])


def test_every_import_points_down_the_pipeline() -> None:
    upward = upward_imports(import_graph())
    assert not upward, "imports of a later pipeline stage (move the shared piece down):\n" + "\n".join(upward)


def test_the_layer_check_sees_an_upward_import() -> None:
    assert len(LAYERS) == len(LAYER_NAMES) <= 8
    assert _layer("ctxprobe.families.niah.task") < _layer("ctxprobe.runner.execute") < _layer("ctxprobe.report.html.page")
    assert _layer("ctxprobe.analysis.grid") < _layer("ctxprobe.report.format")
    assert _layer("ctxprobe") == _layer("ctxprobe.cli")
    # the scoring rules sit below the families that score with them; grading above the store's stage-mates
    assert _layer("ctxprobe.scores.setscore") < _layer("ctxprobe.families.niah.task") < _layer("ctxprobe.grading.record")
    assert _layer("ctxprobe.store.db") == _layer("ctxprobe.grading.record") < _layer("ctxprobe.analysis.grid")
    # the simulator sits with the providers, below the runner that calls it
    assert _layer("ctxprobe.models.base") == _layer("ctxprobe.sim.model") < _layer("ctxprobe.runner.execute")
    # a provider's folder: its declaration with the registry, its parts on the shared base
    assert _layer("ctxprobe.providers.anthropic") == _layer("ctxprobe.core.registry")
    assert _layer("ctxprobe.haystack.packer") < _layer("ctxprobe.providers.anthropic.api") < _layer("ctxprobe.runner.execute")
    assert _layer("ctxprobe.providers.anthropic.count") == _layer("ctxprobe.providers.anthropic.profile")
    assert _layer("ctxprobe.core.case") < _layer("ctxprobe.tokenizers.base")
    # a deliberate upward import is reported
    graph = {"ctxprobe.core.case": {"ctxprobe.report.format"}, "ctxprobe.report.format": set()}
    assert upward_imports(graph) == ["ctxprobe.core.case -> ctxprobe.report.format"]


SIM = PKG + ".sim"


def _in_simulator(module: str) -> bool:
    """sim/ and every family's sim skill (``families/<name>/sim*.py``)."""
    return module == SIM or module.startswith(SIM + ".") or family_role(module) == "sim"


def test_nothing_outside_the_simulator_imports_it() -> None:
    """The simulator is reached through the registry (``core/builtins.py`` and the families'
    declarations name its entries by path), never imported: no module outside ``sim/`` and
    the families' ``sim`` files names one of them, type-only imports included."""
    graph = import_graph()
    outside = sorted(f"{mod} -> {dep}" for mod, deps in graph.items() for dep in deps
                     if _in_simulator(dep) and not _in_simulator(mod))
    assert not outside, "imports of the simulator from outside it (register it instead):\n" + "\n".join(outside)


def test_a_family_package_places_each_file_by_its_role(tmp_path: Path) -> None:
    """A family package holds parts of several layers: each file's layer is its role's, so
    a family's analysis importing its own report, its task importing its sim skill, or a
    file named by no role is refused, while report -> analysis -> task is allowed."""
    global SRC
    fam = tmp_path / PKG / FAMILIES / "demo"
    (fam / "task").mkdir(parents=True)
    for init in (tmp_path / PKG, fam.parent, fam, fam / "task"):
        (init / "__init__.py").write_text("")
    (fam / "task" / "words.py").write_text("")
    (fam / "score.py").write_text("from ctxprobe.families.demo.task import words\n")
    (fam / "analysis.py").write_text("from ctxprobe.families.demo import score\n")
    (fam / "report_html.py").write_text("from . import analysis\n")
    (fam / "sim.py").write_text("")
    assert _layer(f"{PKG}.{FAMILIES}.demo.task.words") == _layer("ctxprobe.families.niah.task")
    assert _layer(f"{PKG}.{FAMILIES}.demo.report_html") == _layer("ctxprobe.report.html.page")
    assert _layer(f"{PKG}.{FAMILIES}.demo") == _layer(f"{PKG}.{FAMILIES}") == _layer("ctxprobe.core.registry")
    assert _in_simulator(f"{PKG}.{FAMILIES}.demo.sim") and not _in_simulator(f"{PKG}.{FAMILIES}.demo.task_sim")
    saved = SRC
    try:
        SRC = tmp_path
        assert upward_imports(import_graph()) == []
        (fam / "analysis.py").write_text("def late():\n    from ctxprobe.families.demo.report_html import x\n")
        assert upward_imports(import_graph()) == [f"{PKG}.{FAMILIES}.demo.analysis -> {PKG}.{FAMILIES}.demo.report_html"]
        (fam / "analysis.py").write_text("")
        (fam / "task" / "words.py").write_text("from ctxprobe.families.demo import sim\n")
        assert upward_imports(import_graph()) == [f"{PKG}.{FAMILIES}.demo.task.words -> {PKG}.{FAMILIES}.demo.sim"]
        (fam / "__init__.py").write_text("from ctxprobe.families.demo import score\n")  # a declaration imports no part
        assert f"{PKG}.{FAMILIES}.demo -> {PKG}.{FAMILIES}.demo.score" in upward_imports(import_graph())
        (fam / "helpers.py").write_text("")
        with pytest.raises(AssertionError, match="named by its role"):
            upward_imports(import_graph())
    finally:
        SRC = saved


def test_importing_the_models_loads_no_simulator() -> None:
    """``import ctxprobe.models`` (and resolving a hosted provider's name) loads neither the
    sim server nor a skill; a ``sim:`` model loads the simulator when it is resolved."""
    code = ("import sys, ctxprobe.models; from ctxprobe.spec.names import parse_model; parse_model('openai/x'); "
            "print(sorted(m for m in sys.modules if m.startswith('ctxprobe.sim')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(SRC)})
    assert out.stdout.strip() == "[]"
    code = ("import sys; from ctxprobe.models import resolve_provider; from ctxprobe.tokenizers import resolve_tokenizer; "
            "resolve_provider('sim:perfect', resolve_tokenizer('approx')); "
            "print('ctxprobe.sim.model' in sys.modules, 'ctxprobe.sim.server' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(SRC)})
    assert out.stdout.split() == ["True", "False"]


#: Generic modules still wired to one family's package by import (reach it through its
#: declaration instead); the list only shrinks (a new entry fails below). Empty: none.
WIRED_TO_A_FAMILY: set[str] = set()


def test_generic_code_imports_no_family_package() -> None:
    """A family's parts are reached through its declaration (the registry), never imported
    by generic code: only the built-ins' registration imports the family packages' (part-free)
    declarations."""
    graph = import_graph()
    families = f"{PKG}.{FAMILIES}."
    wired = sorted(mod for mod, deps in graph.items() if not mod.startswith(families)
                   and mod != f"{PKG}.core.builtins"
                   and any(dep.startswith(families) and family_role(dep) != "declaration" for dep in deps))
    assert set(wired) <= WIRED_TO_A_FAMILY, "generic modules importing a family's parts:\n" + "\n".join(
        sorted(set(wired) - WIRED_TO_A_FAMILY))
    assert set(wired) == WIRED_TO_A_FAMILY, f"no longer wired, drop from the list: {WIRED_TO_A_FAMILY - set(wired)}"
    declarations = sorted(dep for dep in graph[f"{PKG}.core.builtins"] if dep.startswith(families))
    assert declarations and all(family_role(dep) == "declaration" for dep in declarations)


def test_a_provider_declaration_imports_none_of_its_parts() -> None:
    """A provider's ``__init__.py`` only declares it (its parts are named by path, imported
    when used): listing or checking a model imports neither its SDK nor its code. No module
    outside a provider's folder imports its parts either, but the commands that serve it."""
    graph = import_graph()
    declarations = sorted(m for m in graph if is_provider_declaration(m) and m != f"{PKG}.{PROVIDERS}")
    assert len(declarations) >= 6
    for decl in declarations:
        assert all(not dep.startswith(f"{PKG}.{PROVIDERS}.") for dep in graph[decl]), (decl, graph[decl])
    reached = sorted(f"{mod} -> {dep}" for mod, deps in graph.items() for dep in deps
                     if dep.startswith(f"{PKG}.{PROVIDERS}.") and not is_provider_declaration(dep)
                     and not mod.startswith(dep.rsplit(".", 1)[0] + ".") and mod not in PROVIDER_PARTS_READ_BY)
    assert not reached, "generic modules importing a provider's parts (reach it through its declaration):\n" + \
        "\n".join(reached)


#: Generic modules that still import a provider's parts (the list only shrinks).
PROVIDER_PARTS_READ_BY: set[str] = {"ctxprobe.cli.sweeps"}  # serve-local: llama.cpp's own server
