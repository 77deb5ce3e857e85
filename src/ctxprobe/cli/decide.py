"""``ctxprobe decide``: parses, calls :func:`ctxprobe.decide.decide`, prints."""

from __future__ import annotations

import argparse
import json

from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from ctxprobe.decide import Decision

__all__ = ["add_decide_parser", "cmd_decide"]


def add_decide_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], default_store: str) -> None:
    p = sub.add_parser("decide", help="which model for which need: the cheapest run meeting the bar per band")
    p.add_argument("run_ids", nargs="*", metavar="RUN_ID", help="runs to choose among (`ctxprobe runs` lists them)")
    p.add_argument("--bars", help="per-family bars: niah=0.9,vartrack=nolima (default: each run's, 0.856)")
    p.add_argument("--threshold", type=float, help="the bar of every family --bars does not name")
    p.add_argument("--bands", help="needs, as upper ends: 100k,200k,1m (default: every tested length)")
    p.add_argument("--use", help="families a product needs together: its limit is the weakest one's")
    p.add_argument("--layout", choices=["single", "turns", "tools"],
                   help="the message layout the product sends: only the families measured in it (a variant's "
                        "or the run's; docs/layouts.md)")
    p.add_argument("--unit", choices=["tokens", "words", "chars", "entries"], default="tokens",
                   help="unit of the bands and limits (default tokens; words/chars: of the prompts' content)")
    p.add_argument("--prices", help="YAML price file (model: {input: USD/1M, output: USD/1M}); may price any "
                                    "model, sims and local ones included")
    p.add_argument("--json", action="store_true", help="machine-readable: {choices: [...], runs, limits, caveats}")
    p.add_argument("--html", metavar="PATH", help="also write an HTML page with the Pareto plot")
    p.add_argument("--run", action="append", dest="models", metavar="MODEL",
                   help="with --adaptive: a model to measure for the decision (repeatable)")
    p.add_argument("--adaptive", action="store_true",
                   help="send cases model by model and band by band, only while they can still change a choice")
    p.add_argument("--family", help="with --run: the task family (one; default niah)")
    p.add_argument("--depths", help="with --run: evidence depths (the walk uses 3 of them; default 0,0.5,1)")
    p.add_argument("--tokenizer", help="with --run: the tokenizer of every model (default: inferred per model)")
    p.add_argument("--token-budget", help="with --adaptive: prompt tokens per model at most, e.g. 2m")
    p.add_argument("--rag", action="store_true",
                   help="retrieval settings for the --use: per chunk size the depth k, what bounds it, and the order")
    p.add_argument("--chunks", help="with --rag: chunk sizes in tokens, e.g. 256,512,1k (default 256,512,1k)")
    p.add_argument("--chunks-from", metavar="DOCS",
                   help="with --rag: a folder of your documents (plain text), split at paragraphs into the chunks")
    p.add_argument("--instruction-tokens", type=int, default=100, help="with --rag: the instruction's budget")
    p.add_argument("--question-tokens", type=int, default=50, help="with --rag: the question's budget")
    p.add_argument("--answer-tokens", type=int, default=50, help="with --rag: the answer's budget")
    p.add_argument("--confirm", action="store_true",
                   help="with --rag: run retrieval-shaped cases on each model at k, 2k and the other order "
                        "(stored in --store beside the run)")
    p.add_argument("--confirm-reps", type=int, default=40, help="with --confirm: cases per arm (default 40)")
    p.add_argument("--store", default=default_store, metavar="PATH", help="SQLite results file")
    p.set_defaults(func=cmd_decide)


def _bands(text: str | None, unit: str) -> list[int] | None:
    if not text:
        return None
    from ctxprobe.spec import parse_lengths

    if unit == "tokens":
        return list(parse_lengths(text))
    from ctxprobe.decide.bands import parse_counts

    return parse_counts(text)


def _adaptive(args: argparse.Namespace, err: Console) -> object:
    from ctxprobe.errors import CtxprobeError
    from ctxprobe.spec import parse_length
    from ctxprobe.sweep.decide_adaptive import adaptive_decision

    if not args.adaptive:
        raise CtxprobeError("--run sends cases: add --adaptive, or run each model with `ctxprobe run` and "
                            "decide on the run ids")
    if args.run_ids:
        raise CtxprobeError("decide --adaptive measures its --run models itself: drop the run ids")
    if args.unit != "tokens" or not args.bands:
        raise CtxprobeError("decide --adaptive needs --bands in tokens: they are the lengths it measures")
    spec = {k: v for k, v in (("families", args.family), ("depths", args.depths or "0,0.5,1"),
                              ("tokenizer", args.tokenizer), ("bars", args.bars),
                              ("threshold", args.threshold)) if v is not None}
    res = adaptive_decision(args.models, _bands(args.bands, "tokens") or [], args.store, spec=spec,
                            prices=args.prices,
                            token_budget=parse_length(args.token_budget) if args.token_budget else None)
    err.print(f"adaptive decision: {res.total_tokens:,} prompt tokens sent ("
              + ", ".join(f"{m}: {t:,}" for m, t in res.tokens.items()) + ")", highlight=False, markup=False)
    return res.decision


def cmd_decide(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.decide import Decision, decide
    from ctxprobe.spec.threshold import check_threshold, parse_bars

    if args.layout and (args.rag or args.confirm or args.models or args.adaptive):
        from ctxprobe.errors import CtxprobeError

        raise CtxprobeError("--layout picks families of the runs given: not with --rag or --adaptive yet")
    if args.rag or args.confirm:
        return _rag(args, out, err)
    if args.models or args.adaptive:
        decision = _adaptive(args, err)
        assert isinstance(decision, Decision)
        return _show(decision, args, out, err)
    decision = decide(args.run_ids, args.store, bands=_bands(args.bands, args.unit),
                      bars=parse_bars(args.bars) if args.bars else None,
                      threshold=check_threshold(args.threshold) if args.threshold is not None else None,
                      use=[u.strip() for u in args.use.split(",") if u.strip()] if args.use else None,
                      unit=args.unit, prices=args.prices, layout=args.layout)
    return _show(decision, args, out, err)


def _rag(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.decide.rag import Budgets
    from ctxprobe.decide.rag_decide import decide_rag
    from ctxprobe.errors import CtxprobeError
    from ctxprobe.spec import parse_lengths
    from ctxprobe.spec.threshold import check_threshold, parse_bars

    if not args.rag:
        raise CtxprobeError("--confirm checks retrieval settings: add --rag (and --use FAMILIES)")
    if min(args.instruction_tokens, args.question_tokens, args.answer_tokens) < 0:
        raise CtxprobeError("--instruction-tokens, --question-tokens and --answer-tokens must be 0 or more")
    res = decide_rag(args.run_ids, args.store, use=[u.strip() for u in (args.use or "").split(",") if u.strip()],
                     chunks=list(parse_lengths(args.chunks)) if args.chunks else None, chunks_from=args.chunks_from,
                     budgets=Budgets(args.instruction_tokens, args.question_tokens, args.answer_tokens),
                     bars=parse_bars(args.bars) if args.bars else None,
                     threshold=check_threshold(args.threshold) if args.threshold is not None else None,
                     prices=args.prices, stored=not args.confirm)
    if args.confirm:
        from ctxprobe.decide.rag_confirm import confirm_all

        res = confirm_all(res, reps=args.confirm_reps, chunks_from=args.chunks_from, store_path=args.store)
    if args.html:
        from ctxprobe.decide.rag_html import write_rag_html

        err.print(f"wrote {write_rag_html(res, args.html)}")
    if args.json:
        print(json.dumps(res.to_dict(), indent=2))
        return 0
    for line in res.lines():
        out.print(line, highlight=False, markup=False)
    return 0


def _show(decision: Decision, args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.html:
        from ctxprobe.decide.html import write_decision_html

        err.print(f"wrote {write_decision_html(decision, args.html)}")
    if args.json:
        print(json.dumps(decision.to_dict(), indent=2))
        return 0
    from ctxprobe.decide.render import decision_lines

    for line in decision_lines(decision):
        out.print(line, highlight=False, markup=False)
    return 0
