"""The simulated models' profile (``sim:KIND``): free, counted by the local tokenizer. The
other providers' profiles are in their folders (``ctxprobe/providers/<name>/profile.py``)."""

from __future__ import annotations

from ctxprobe.core.catalog import ProviderInfo

#: The core simulated model kinds (``sim:KIND``), those ctxprobe.sim.model answers itself.
SIM_KINDS: tuple[str, ...] = ("perfect", "echo", "blind-middle", "decay", "first-half", "late-reader", "reasoner", "rag",
                                "turns-forget", "tools-forget")


def sim_kinds() -> tuple[str, ...]:
    """Every simulated model kind: the core ones, then each registered family's own (its
    declaration's ``sim_kinds``), the one list the sims' messages, the --model help and
    serve-sim read, so a new family's kind is named everywhere without an edit here."""
    from ctxprobe.core import registry
    from ctxprobe.errors import CtxprobeError

    own: set[str] = set()
    for entry in registry.entries("families"):
        try:
            own.update(str(k) for k in entry.declaration().sim_kinds)
        except CtxprobeError:  # a plugin family that cannot load: its run says why, not --help
            continue
    return (*SIM_KINDS, *sorted(k for k in own if k not in SIM_KINDS))


def sim_forms() -> str:
    """``perfect|echo|…|interference``: the kinds as one ``sim:`` spelling."""
    return "|".join(sim_kinds())


SIM = ProviderInfo(default_tokenizer="local", free=True, help=lambda: f"sim:KIND ({', '.join(sim_kinds())})")
