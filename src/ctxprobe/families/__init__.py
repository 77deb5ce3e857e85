"""Task families as packages: each ``families/<name>/`` holds one family's task, scorer,
sim skill, analysis and report hooks, registered in :mod:`ctxprobe.core.builtins`."""
