"""The package's public face: ``import ctxprobe`` names its lazy functions to checkers and
to ``dir()``, exports ``Report``; ``ctxprobe.plugin`` holds what a plugin imports; no
subpackage shadows a standard-library module (``ctxprobe/inspect`` once did)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from importlib import import_module
from pathlib import Path

import pytest

import ctxprobe
import ctxprobe.plugin as plugin

ROOT = Path(__file__).resolve().parents[2]


def test_lazy_names_are_listed_and_are_the_real_objects() -> None:
    from ctxprobe.report.load import load_report
    from ctxprobe.report.runreport import Report
    from ctxprobe.report.terminal import print_report
    from ctxprobe.sweep.run import run_sweep

    for name in ("run_sweep", "load_report", "print_report", "run_completeness", "Report"):
        assert name in dir(ctxprobe) and name in ctxprobe.__all__
    assert (ctxprobe.run_sweep, ctxprobe.load_report, ctxprobe.print_report, ctxprobe.Report) == (
        run_sweep, load_report, print_report, Report)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        ctxprobe.nothing  # type: ignore[attr-defined]  # noqa: B018


def test_import_ctxprobe_stays_light() -> None:
    code = "import sys, ctxprobe; print(any(m.startswith(('ctxprobe.report', 'ctxprobe.sweep')) for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "False"


def test_plugin_exports_what_a_plugin_needs() -> None:
    from ctxprobe.core.family import FamilyBase
    from ctxprobe.core.registry import register
    from ctxprobe.report.hooks import FamilyReportHooks

    for name in plugin.__all__:
        assert getattr(plugin, name) is not None
    assert (plugin.register, plugin.FamilyBase, plugin.FamilyReportHooks) == (register, FamilyBase, FamilyReportHooks)
    needed = {"register", "ProviderInfo", "GenerateRequest", "GenerateResult", "FamilyBase", "Case", "Scored",
              "FamilyReportHooks", "TokenizerBase", "ProviderBase", "ReportSection", "CaseRecord"}
    assert needed <= set(plugin.__all__)


def test_no_subpackage_shadows_the_standard_library() -> None:
    ours = {p.stem if p.suffix == ".py" else p.name for p in (ROOT / "src" / "ctxprobe").iterdir()
            if (p.suffix == ".py" or (p / "__init__.py").is_file()) and not p.name.startswith("_")}
    assert not ours & set(sys.stdlib_module_names), ours & set(sys.stdlib_module_names)


def test_the_inspect_entry_point_names_a_module_that_exists() -> None:
    pytest.importorskip("inspect_ai")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (target,) = project["entry-points"]["inspect_ai"].values()
    module = import_module(target)  # importing it registers the tasks, one per registered family
    from inspect_ai._util.registry import registry_find, registry_info

    from ctxprobe.core.family_lookup import family_names

    tasks = registry_find(lambda info: info.type == "task" and info.name.startswith("ctxprobe/"))
    assert module.__name__ == target
    assert {f"ctxprobe/{name}" for name in family_names()} <= {registry_info(t).name for t in tasks}


@pytest.mark.slow
def test_checkers_see_the_lazy_names_types(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    probe = tmp_path / "probe.py"
    probe.write_text("import ctxprobe\nreveal_type(ctxprobe.run_sweep)\nreveal_type(ctxprobe.load_report)\n"
                     "reveal_type(ctxprobe.print_report)\nreveal_type(ctxprobe.Report)\n")
    done = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent", "--cache-dir", str(tmp_path / "c"),
                           str(probe)], capture_output=True, text=True, timeout=900, cwd=tmp_path,
                          env={**os.environ, "MYPYPATH": str(ROOT / "src")})
    revealed = [line for line in done.stdout.splitlines() if "Revealed type is" in line]
    assert len(revealed) == 4, done.stdout + done.stderr
    assert not any('Revealed type is "Any"' in line for line in revealed), revealed
    assert 'Revealed type is "def (spec: ctxprobe.spec.schema.Spec' in revealed[0]
    assert "-> ctxprobe.report.runreport.Report" in revealed[1] and "report: ctxprobe.report.runreport.Report" in revealed[2]
