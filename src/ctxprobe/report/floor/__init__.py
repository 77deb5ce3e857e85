"""The noise floor in the reports: the floor's rows read from a run (:mod:`.rows`) and its
terminal table (:mod:`.table`)."""
