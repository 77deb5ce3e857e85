"""ctxprobe: measure a language model's effective context length.

Library use mirrors the CLI::

    import ctxprobe
    spec = ctxprobe.make_spec({"model": "sim:perfect", "lengths": "1k,2k", "reps": 2})
    result = ctxprobe.run_sweep(spec, "ctxprobe.sqlite")
    report = ctxprobe.load_report(result.run_id, "ctxprobe.sqlite")
    print(report.profiles[0].effective_length)
    ctxprobe.print_report(report)  # exactly what `ctxprobe report RUN_ID` prints

A plugin (a provider, tokenizer, family or report section) imports from :mod:`ctxprobe.plugin`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ctxprobe._version import __version__
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec import Spec, load_spec, make_spec, merge_spec, parse_length

if TYPE_CHECKING:  # the checkers see the lazy names' real types; `import ctxprobe` stays light
    from ctxprobe.report.load import run_completeness as run_completeness
    from ctxprobe.report.load import load_report as load_report
    from ctxprobe.report.runreport import Report as Report
    from ctxprobe.report.terminal import print_report as print_report
    from ctxprobe.sweep.run import run_sweep as run_sweep

__all__ = [
    "CtxprobeError", "Report", "Spec", "__version__", "load_report", "load_spec", "make_spec", "merge_spec",
    "parse_length", "print_report", "run_completeness", "run_sweep",
]

#: The names imported on first use: name → the module that defines it.
_LAZY = {
    "run_sweep": "ctxprobe.sweep.run",
    "load_report": "ctxprobe.report.load",
    "print_report": "ctxprobe.report.terminal",  # the terminal report of a loaded run, as `ctxprobe report` prints it
    "run_completeness": "ctxprobe.report.load",  # error / input_truncated cases left: what `run` exits 3 on
    "Report": "ctxprobe.report.runreport",  # what load_report returns
}


def __getattr__(name: str) -> Any:  # lazy: keep `import ctxprobe` light
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ctxprobe' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
