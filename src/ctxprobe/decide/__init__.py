"""From runs to a decision: which model for which need, at what price and limit.

``decide(run_ids, store, bands=..., bars=..., use=..., unit=..., prices=...)`` reads each
run's effective length per family (the interval its data allow: exact bounds for a fixed
grid, the walk's always-valid verdict for an adaptive run), what its cases contained
(tokens, words, characters, phone-book entries), its price and cost, and names per band
and family the cheapest run that meets the bar with 95% confidence.
"""

from ctxprobe.decide.decision import Decision, Limit, decide

__all__ = ["Decision", "Limit", "decide"]
