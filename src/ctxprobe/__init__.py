"""ctxprobe: measure a language model's effective context length.

Library use mirrors the CLI::

    import ctxprobe
    spec = ctxprobe.make_spec({"model": "sim:perfect", "lengths": "1k,2k", "reps": 2})
    result = ctxprobe.run_sweep(spec, "ctxprobe.sqlite")
    report = ctxprobe.load_report(result.run_id, "ctxprobe.sqlite")
    print(report.profiles[0].effective_length)
    ctxprobe.print_report(report)  # exactly what `ctxprobe report RUN_ID` prints
"""

from typing import Any

from ctxprobe._version import __version__
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec import Spec, load_spec, make_spec, merge_spec, parse_length

__all__ = [
    "CtxprobeError", "Spec", "__version__", "load_report", "load_spec", "make_spec", "merge_spec",
    "parse_length", "print_report", "run_completeness", "run_sweep",
]


def __getattr__(name: str) -> Any:  # lazy: keep `import ctxprobe` light
    if name == "run_sweep":
        from ctxprobe.sweep.run import run_sweep

        return run_sweep
    if name == "load_report":
        from ctxprobe.report.load import load_report

        return load_report
    if name == "print_report":  # the terminal report of a loaded run, as `ctxprobe report` prints it
        from ctxprobe.report.terminal import print_report

        return print_report
    if name == "run_completeness":  # error / input_truncated cases left: what `run` exits 3 on
        from ctxprobe.report.load import run_completeness

        return run_completeness
    raise AttributeError(name)
