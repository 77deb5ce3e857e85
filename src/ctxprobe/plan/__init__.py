"""The plan: the grid of cells x repetitions in sending order (:mod:`.grid`) and what it
will cost (:mod:`.prices`), printed before anything is sent."""
