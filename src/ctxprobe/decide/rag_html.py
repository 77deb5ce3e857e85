"""``decide --rag --html FILE``: the retrieval settings (and their confirmation) as a page,
in the decide page's template: all plain text, escaped on the page."""

from __future__ import annotations

from pathlib import Path

from ctxprobe.decide.rag_decide import RagDecision
from ctxprobe.errors import CtxprobeError
from ctxprobe.report.rag_confirmed import stored_confirmation_line
from ctxprobe.report.html.parts import ReportSection, Table, render

__all__ = ["rag_section", "write_rag_html"]


def rag_section(res: RagDecision) -> ReportSection:
    settings = Table(["model", "run", "chunk tokens", "k", "bound by", "fit", "tolerated", "order"], [
        [s.model, s.run_id, f"{s.chunk_tokens:,}", str(s.k), s.bound_by, str(s.k_length), str(s.k_distractors),
         s.order.text()] for s in res.settings], caption="retrieval depth per chunk size")
    evidence = Table(["model", "run", "product limit", "distractor tolerance"], [
        [e.run.model, e.run.run.run_id, e.limit.line(), e.tolerance.line()] for e in res.evidence],
        caption="the evidence: the use's reliable length and the look-alikes tolerated at the bar")
    curve = Table(["model", "look-alikes", "cases", "accuracy", "95% interval"], [
        [e.run.model, str(p.count), str(p.n), "—" if p.mean is None else f"{p.mean:.3f}", f"{p.lo:.3f}–{p.hi:.3f}"]
        for e in res.evidence for p in e.tolerance.curve], caption="distractor tolerance curve")
    tables = [settings, evidence, curve]
    if res.confirmations:
        tables.append(Table(["model", "chunk tokens", "k", "held", "result"], [
            [c.setting.model, f"{c.setting.chunk_tokens:,}", str(c.at_k.k), "yes" if c.held else "no", c.line()]
            for c in res.confirmations], caption="confirmed on retrieval-shaped cases"))
    if res.confirmed:
        tables.append(Table(["model", "chunk tokens", "k", "held", "confirmed on", "result"], [
            [r["model"], f"{r['chunk_tokens']:,}", str(r["k"]), "yes" if r["held"] else "no",
             f"run {r['run_id']}, {r['confirmed_at']}", stored_confirmation_line(r)] for r in res.confirmed],
            caption="confirmed earlier (decide --rag --confirm, read from the store)"))
    return ReportSection("Retrieval settings: chunk size, depth and order", tables,
                         text=f"use: {'+'.join(res.use)}; " + " ".join(res.decision.caveats))


def write_rag_html(res: RagDecision, path: str | Path) -> Path:
    from ctxprobe._version import __version__

    out = Path(path)
    page = render("decide.html.j2", heading="ctxprobe decide --rag", anchor="decide-rag", s=rag_section(res),
                  version=__version__, sub=", ".join(e.run.model for e in res.evidence))
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as err:
        raise CtxprobeError(f"cannot write {out}: {err.strerror}") from None
    return out
