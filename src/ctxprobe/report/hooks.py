"""What a family adds to the reports: :class:`FamilyReportHooks`.

A family names its hooks on its declaration, ``report_hooks``
(:class:`ctxprobe.core.declaration.FamilyDeclaration`: a ``"module:attr"`` path, imported
only when a report needs it, so the family's other parts never import the report layer;
default None: the family adds nothing). The generic report code asks
:func:`family_hooks` and never names a family.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from ctxprobe.errors import CtxprobeError

if TYPE_CHECKING:
    from ctxprobe.core.records import CaseRecord
    from ctxprobe.core.rows import ResultRow
    from ctxprobe.report.html.parts import PageSection
    from ctxprobe.store import RunRecord


class FamilyReportHooks:
    """The report hooks of a family; each default adds nothing. Subclass it and override
    what the family adds."""

    #: Whether the family's cases go into RULER's prediction files (``export --ruler``).
    ruler_predictions: bool = True
    #: Whether :meth:`json_extra` reads the records' prompts (``messages``): the report's
    #: loader keeps them only for such families' cases (a run's prompts can be large).
    json_reads_prompts: bool = False

    def json_extra(self, records: Iterable[CaseRecord]) -> dict[str, Any] | None:
        """An object the JSON report carries under the family's name, from the run's case
        records (None: nothing)."""
        return None

    #: Whether runs of only this family get :meth:`print_runs` instead of the generic tables.
    own_terminal: bool = False

    def print_runs(self, run_ids: list[str], store_path: str | Path, console: Console,
                   png_dir: Path | None, *, options: Mapping[str, Any] | None = None) -> None:
        """The terminal report of runs that hold only this family (asked only when
        :attr:`own_terminal`), and their PNGs into ``png_dir`` when given; ``options``:
        the family's own report flags (``report --trend-degree 1`` → ``trend_degree``),
        refused in one line when the family has no such option."""
        raise NotImplementedError(f"{type(self).__name__} has no terminal report of its own")

    def at_bars(self, extra: Any, bars: Mapping[str, float]) -> Any:
        """The object :meth:`json_extra` (or :meth:`html_data`) made, with what it measures
        against a bar measured again at the report's: ``bars`` maps each of the run's family
        labels to its bar (``--threshold``, the run's own, a per-family one). Default: as is."""
        return extra

    def write_pngs(self, extra: Mapping[str, Any], out_dir: Path, title: str) -> list[Path]:
        """The family's own PNGs of one run into ``out_dir`` (what ``run`` and ``report``
        write beside the run's heatmaps and curves), from the object :meth:`json_extra`
        made, at the report's bars (:meth:`at_bars`); ``title``: the run's ("model · run …").
        Drawing needs matplotlib (the ``plot`` extra): without it, the one-line
        :class:`ctxprobe.errors.MissingExtraError`. Returns the paths written (default: none)."""
        return []

    def terminal_lines(self, extra: Mapping[str, Any]) -> list[str]:
        """Lines the terminal report prints for the family after the profiles, from the
        object :meth:`json_extra` made (empty: nothing)."""
        return []

    def html_data(self, records: Iterable[CaseRecord]) -> Any | None:
        """What the HTML page needs of one run beyond its profiles, from its case records
        (None: nothing); handed back to :meth:`html_sentence` and :meth:`html_section`."""
        return None

    #: The family's own ``report`` flags that shape its part of the HTML page too (option
    #: names as :meth:`print_runs` takes them: the phone book's ``x_axis``…); empty: none.
    html_options: tuple[str, ...] = ()

    def html_run_data(self, records: Iterable[CaseRecord], run: RunRecord,
                      options: Mapping[str, Any]) -> Any | None:
        """:meth:`html_data` knowing the stored run (its model and meta: a window it
        recorded) and the family's report options (only names in :attr:`html_options`);
        what the page asks. Default: :meth:`html_data` of the records."""
        return self.html_data(records)

    def html_sentence(self, data: Any) -> str | None:
        """The page summary's sentence for the family in one run (None: the generic verdict)."""
        return None

    def html_section(self, data: Mapping[str, Any], png_dir: Path) -> PageSection | None:
        """The family's own section of the page, from :meth:`html_data` of each run (run
        label → data); PNGs go under ``png_dir``."""
        return None


    #: Whether the family has a scorer of its own (:meth:`rescore`): every scored case of a
    #: run of the family is re-scored with it for its :meth:`headline`, and
    #: ``report --scorer NAME`` (NAME the family's) reports any run by it.
    rescores: bool = False
    #: How the terminal report's header names that scorer ("RULER string match").
    scorer_label: str = "the family's own scorer"

    def rescore(self, record: CaseRecord, family: str) -> float:
        """The family's own score of one stored, scored case record (``family``: the name of
        the record's family; any family's case is asked under ``--scorer``)."""
        raise NotImplementedError(f"{type(self).__name__} has no scorer of its own")

    def headline(self, rows: Sequence[ResultRow], run: RunRecord) -> Any | None:
        """A headline of the run from the rows :meth:`rescore` made (an object with
        ``to_dict()``: the JSON report carries it as ``<family>_headline``); None: none."""
        return None

    def print_headline(self, headline: Any, out: Console, strict_effective: Mapping[str, int | None] | None,
                       threshold: float | None) -> None:
        """The headline in the terminal report, after the profiles (``strict_effective``: the
        strict scorer's effective length per label, when the report is strict)."""

    def html_headlines(self, runs: Sequence[tuple[str, Any]]) -> PageSection | None:
        """The page's section of the headlines of ``runs`` (run label, headline)."""
        return None


NO_HOOKS = FamilyReportHooks()


def rescoring_families() -> list[str]:
    """The families whose report hooks have a scorer of their own (``--scorer`` names)."""
    from ctxprobe.core import registry

    return [name for name in registry.names("families") if family_hooks(name).rescores]


def check_scorer(scorer: str) -> None:
    """``strict``, or a family with a scorer of its own; else a one-line error naming them."""
    if scorer != "strict" and not family_hooks(scorer).rescores:
        raise CtxprobeError(f"unknown scorer '{scorer}': use strict (default) or {' or '.join(rescoring_families())}")


def family_hooks(name: str) -> FamilyReportHooks:
    """The report hooks of the family ``name`` (the defaults for a family that declares
    none, or one not installed here: reports still read its stored rows)."""
    from ctxprobe.core import registry

    entry = registry.find("families", name)
    if entry is None:
        return NO_HOOKS
    hooks = entry.declaration().load("report_hooks")
    if hooks is None:
        return NO_HOOKS
    if not isinstance(hooks, FamilyReportHooks):
        raise CtxprobeError(f"family '{name}': its report hooks ({entry.declaration().report_hooks}) must be a "
                            "ctxprobe.report.hooks.FamilyReportHooks")
    return hooks
