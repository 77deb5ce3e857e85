"""The simulator: simulated models with known behaviour, for testing the harness end to end.

``sim:*`` models (:mod:`ctxprobe.sim.model`) read the prompt like a model would, with one
*skill* per task family (:mod:`ctxprobe.sim.skills`); simulated judges
(:mod:`ctxprobe.sim.judge`); an OpenAI-compatible server around any provider
(:mod:`ctxprobe.sim.server`, its wire format :mod:`ctxprobe.sim.wire`, its app
:mod:`ctxprobe.sim.app`), with injected faults (:mod:`ctxprobe.sim.faults`) and a
llama.cpp-like prefix cache (:mod:`ctxprobe.sim.prefix_cache`).

Nothing outside this package imports it except through the registry
(:mod:`ctxprobe.core.builtins` names its entries by path), so ``import ctxprobe.models``
never loads the simulator. This ``__init__`` imports nothing.
"""
