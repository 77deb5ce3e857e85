"""The HTML report's jinja2 templates ship with the package (wheel and sdist) and render
with autoescaping on: a report built from an installed ctxprobe is the same page."""

from __future__ import annotations

import fnmatch
import shutil
import subprocess
import sys
import tarfile
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    from pip._vendor import tomli as tomllib
import zipfile
from importlib import resources
from pathlib import Path

from ctxprobe.report.html.parts import Cell, Table, environment, render

ROOT = Path(__file__).resolve().parents[3]
TEMPLATES = ROOT / "src" / "ctxprobe" / "report" / "templates"
FAMILIES = ROOT / "src" / "ctxprobe" / "families"
#: a family's own HTML section, beside its code (``"ctxprobe.families.NAME:FILE"`` templates)
FAMILY_TEMPLATES = sorted(FAMILIES.glob("*/*.j2"))


def _shipped_globs() -> list[str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return data["tool"]["setuptools"]["package-data"]["ctxprobe.report"]


def test_every_template_file_is_declared_package_data_and_found_as_a_resource() -> None:
    files = sorted(p.name for p in TEMPLATES.iterdir() if p.is_file())
    assert "page.html.j2" in files and "report.css" in files
    globs = _shipped_globs()
    assert [f for f in files if not any(fnmatch.fnmatch(f"templates/{f}", g) for g in globs)] == []
    found = sorted(p.name for p in (resources.files("ctxprobe.report") / "templates").iterdir())
    assert found == files
    # every template the page includes or imports exists and compiles
    for name in files:
        if name.endswith(".j2"):
            environment().get_template(name)
    # a family's template: declared, found as its package's resource, and compiling (macros imported)
    family_globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "ctxprobe.families"]
    assert {p.parent.name for p in FAMILY_TEMPLATES} >= {"phonebook", "ruler"}
    for path in FAMILY_TEMPLATES:
        rel = f"{path.parent.name}/{path.name}"
        assert any(fnmatch.fnmatch(rel, g) for g in family_globs), rel
        assert (resources.files(f"ctxprobe.families.{path.parent.name}") / path.name).is_file()
        environment().get_template(f"ctxprobe.families.{path.parent.name}:{path.name}")


def test_templates_escape_every_value() -> None:
    evil = '<script>alert("x")</script>'
    page = render("runs.html.j2", runs=Table([evil], [[evil, Cell(evil, cls="num", title=evil, bold="#000")]],
                                             caption=evil))
    assert "<script" not in page and page.count("&lt;script&gt;") == 5


def test_wheel_and_sdist_carry_the_templates(tmp_path: Path) -> None:
    # build from a copy: an in-tree build would leave build/ and *.egg-info in the checkout
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    out = tmp_path / "dist"
    for kind in ("sdist", "wheel"):  # one process each: after a wheel, the same process wrote no sdist here
        code = f"import sys; from setuptools import build_meta as b; print(b.build_{kind}(sys.argv[1]))"
        done = subprocess.run([sys.executable, "-c", code, str(out)], cwd=tree, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
    expected = {f"ctxprobe/report/templates/{p.name}" for p in TEMPLATES.iterdir() if p.is_file()}
    expected |= {f"ctxprobe/families/{p.parent.name}/{p.name}" for p in FAMILY_TEMPLATES}
    wheel = next(out.glob("*.whl"))
    assert expected <= set(zipfile.ZipFile(wheel).namelist())
    sdist = next(out.glob("*.tar.gz"))
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {f"src/{e}" for e in expected} <= names
