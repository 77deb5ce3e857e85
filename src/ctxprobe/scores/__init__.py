"""Scoring rules: pure functions of a case and an output, below the families that use them.

Each response's strict score and one outcome label (:mod:`.outcome`); the rules the
families share (set answers, :mod:`.setscore`; miss labels, :mod:`.classify`; the
published benchmarks' own scorers, :mod:`.originals`). Each family's own scorer is in its
task module. Applying them at run time (the judge, scoring and storing each response) is
:mod:`ctxprobe.grading`, above the runner and the store.
"""
