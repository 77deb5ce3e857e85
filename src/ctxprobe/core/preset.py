"""A preset: a named set of sweep families (``--preset NAME``), found in the registry
(group ``presets``) like a family, and defined beside the family it runs (RULER's in
:mod:`ctxprobe.families.ruler.task.preset`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class Preset(Protocol):
    name: str
    #: Whose prompts it reproduces, for messages ("RULER").
    title: str
    #: The preset keeps its own prompt layout (``--instruction``/``--separator`` refused).
    keeps_layout: bool
    #: What it runs, for ``--preset``'s help ("RULER's 13 tasks as RULER renders them").
    summary: str
    #: The options it reads (``--NAME-KEY`` flags of ``run``: ``ruler_docs`` → ``docs``).
    options: tuple[str, ...]
    #: Each option's help text (the CLI adds one flag per option).
    option_help: Mapping[str, str]

    def families(self, options: Mapping[str, str | None]) -> dict[str, dict[str, Any]]:
        """Label → family parameters (``{"family": NAME, ...}``) of the runnable ones."""
        ...

    def notice(self, options: Mapping[str, str | None]) -> str | None:
        """One line the sweep prints before it starts (what cannot run and why), or None."""
        ...
