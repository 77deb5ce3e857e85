"""A sweep, wired end to end: spec -> plan -> cases -> runner -> store (with scores).

:mod:`.session` is the one orchestration path every entry goes through (resolve,
preflight, checks, ledger, judge, store/resume, send, finish); :mod:`.run` is
``ctxprobe run`` (``ctxprobe.run_sweep``); :mod:`.adaptive` spends calls only where they
move the effective length; :mod:`.packs` re-sends a pack's exact prompts; :mod:`.preflight`
probes the serving path first; :mod:`.claiming` shares one store between processes;
:mod:`.standalone` exposes the sweep's knobs to tests and benchmarks; :mod:`.display` is
the progress bar.
"""
