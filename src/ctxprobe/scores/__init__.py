"""Scores: each response's strict score and one outcome label (:mod:`.outcome`), a
calibrated judge for open-ended answers (:mod:`.judge`), and the step that scores a
response and stores it (:mod:`.record`); the scoring rules the families share (set answers,
:mod:`.setscore`; miss labels, :mod:`.classify`). Each family's own scorer is in its task
module. This file imports nothing: the rules sit below the families, the rest above the store.
"""
