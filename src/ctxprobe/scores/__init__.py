"""Scores: each response's strict score and one outcome label (:mod:`.outcome`), a
calibrated judge for open-ended answers (:mod:`.judge`), and the step that scores a
response and stores it (:mod:`.record`). Each family's own scorer is in its task module.
"""
