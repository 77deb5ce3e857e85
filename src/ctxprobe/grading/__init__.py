"""Grading at run time: the scoring that needs the running machinery.

:mod:`.record` scores each response as it arrives (with its family's scorer, or a
judge's grade) and commits it to the store at once; :mod:`.judge` is a model judge for
open-ended answers, calibrated before its grades count, called through the runner's
client. The rules they score with are :mod:`ctxprobe.scores`, a layer below the families.
This package sits above the runner and the store (it calls one and writes the other).
"""
