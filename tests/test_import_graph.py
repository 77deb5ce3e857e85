"""No import circles between ctxprobe's own modules, deferred (function-level) imports
included: when two modules need each other, the shared piece belongs a layer below both.

The graph is read from the source with `ast` (nothing is imported), so a circle hidden
behind a lazy import inside a function is found as surely as a top-level one. Imports
under ``if TYPE_CHECKING:`` never run (they only name types for annotations), so they are
not edges."""

from __future__ import annotations

import ast
from pathlib import Path


SRC = Path(__file__).resolve().parents[1] / "src"
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


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of the module except the bodies of ``if TYPE_CHECKING:`` blocks."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every ctxprobe module `name` imports, at any depth of its code."""
    is_package = path.name == "__init__.py"
    targets: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"), str(path))):
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
        # a type-only import never runs: no edge; the same import at run time is one
        typed = "from typing import TYPE_CHECKING\nthing = 1\nif TYPE_CHECKING:\n    from ctxprobe.a import x\n"
        (pkg / "sub" / "b.py").write_text(typed)
        assert find_cycles(import_graph()) == []
        (pkg / "sub" / "b.py").write_text(typed.replace("if TYPE_CHECKING:", "if not TYPE_CHECKING:"))
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
#: layer and the ones before it, never a later one. Top-level names of src/ctxprobe.
#: An entry names a folder (``scores``) or one module in it (``scores.setscore``); a module
#: is in the layer of its longest entry, so a folder can lend a low layer a few modules.
LAYERS: list[set[str]] = [
    {"errors", "redaction", "_version"},
    {"core"},
    {"scores.setscore", "scores.classify", "scores.originals"},  # scoring rules the families use
    {"spec"},
    {"embedded"},
    {"tokenizers"},
    {"haystack"},
    {"tasks"},
    {"plan"},
    {"cases"},
    {"models"},
    {"runner"},
    {"store"},
    {"scores"},
    {"analysis"},
    {"report"},
    {"sweep"},
    {"natural"},  # draft-questions: drafting and checking natural cases (uses models, runner, tasks)
    {"cli", ""},  # "" = the package itself (ctxprobe/__init__.py: the public API)
]


def _layer(module: str) -> int:
    rel = module.split(".", 1)[1] if "." in module else ""
    best: tuple[int, int] | None = None  # (length of the entry, layer)
    for i, names in enumerate(LAYERS):
        for entry in names:
            if (rel == entry or rel.startswith(entry + ".")) and (
                    best is None or len(entry) > best[0]):
                best = (len(entry), i)
    if best is None:
        top = rel.split(".")[0]
        raise AssertionError(f"{module}: its folder {top!r} is in no layer; add it to LAYERS and docs/architecture.md")
    return best[1]


def _bare_package(graph: dict[str, set[str]], name: str) -> bool:
    """A package whose ``__init__`` imports nothing of ours: importing one of its low
    modules runs it, but it carries nothing of a higher layer."""
    path = _modules()[name]
    return path.name == "__init__.py" and not graph[name]


def test_every_import_points_down_the_pipeline() -> None:
    graph = import_graph()
    upward = sorted(f"{mod} -> {dep}" for mod, deps in graph.items() for dep in deps
                    if _layer(dep) > _layer(mod) and not _bare_package(graph, dep))
    assert not upward, "imports of a later pipeline stage (move the shared piece down):\n" + "\n".join(upward)


def test_the_layer_check_sees_an_upward_import() -> None:
    assert _layer("ctxprobe.tasks.niah") < _layer("ctxprobe.runner.execute") < _layer("ctxprobe.report.html")
    assert _layer("ctxprobe.analysis.grid") < _layer("ctxprobe.report.format")
    assert _layer("ctxprobe") == _layer("ctxprobe.cli")
    # a module listed on its own sits below its folder: the families use the set scorer
    assert _layer("ctxprobe.scores.setscore") < _layer("ctxprobe.tasks.niah") < _layer("ctxprobe.scores.record")
    assert _layer("ctxprobe.core.case") < _layer("ctxprobe.spec.names")
