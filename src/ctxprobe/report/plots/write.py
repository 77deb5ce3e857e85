"""The PNG plots of a loaded run: a heatmap and a curve per family, all families on one
chart, accuracy against turns back (a conversation layout's runs), and the curves a family's report hooks draw of their own (``write_pngs``);
matplotlib: the ``plot`` extra."""

from __future__ import annotations

from pathlib import Path

from ctxprobe.errors import CtxprobeError
from ctxprobe.report.format import length_unit
from ctxprobe.report.hooks import family_hooks
from ctxprobe.report.runreport import Report


def write_plots(report: Report, out_dir: str | Path) -> list[Path]:
    from ctxprobe.report.plots import curve_png, heatmap_png

    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CtxprobeError(f"cannot create report directory {out}: {err.strerror}") from None
    paths: list[Path] = []
    title = f"{report.run.model} · run {report.run.run_id} · scorer {report.scorer}"
    tag = "" if report.scorer == "strict" else f"-scorer-{report.scorer}"  # never overwrite the strict plots
    if len(report.profiles) > 1:
        from ctxprobe.report.plots.multi import all_families_png

        paths.append(all_families_png(report.profiles, out / f"all-families-curve{tag}.png", title))
    for prof in report.profiles:
        # the trained window is in tokens: not marked on an axis of book sizes in entries
        trained = report.run.meta.served_trained_context if length_unit(report.run.spec, prof.family) == "tokens" else None
        paths.append(heatmap_png(prof, out / f"{prof.family}-heatmap{tag}.png", title, trained))
        paths.append(curve_png(prof, out / f"{prof.family}-curve{tag}.png", title, trained))
    if report.distractors:
        from ctxprobe.report.plots.distractors import tolerance_png

        paths += [tolerance_png(t, out / f"{t.family}-distractors{tag}.png", title) for t in report.distractors]
    if report.turns_back:  # runs in a turns/tools layout (docs/layouts.md)
        from ctxprobe.report.plots.turns_back import turns_back_png

        paths.append(turns_back_png(report.turns_back, report.turns_back_reach, out / f"turns-back-curve{tag}.png",
                                    title))
    for name, extra in report.family_extras.items():  # a family's own curves (its report hooks')
        paths += family_hooks(name).write_pngs(extra, out, title)
    return paths
