"""``ctxprobe draft-questions``: parse, plan, run with a progress bar, print (the work is
:mod:`ctxprobe.natural.draft`'s)."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from ctxprobe.errors import CtxprobeError


def add_natural_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("draft-questions", help="draft question/answer pairs from your documents with a model, "
                       "check each (answer once in the document, not answerable closed-book, low overlap, "
                       "unambiguous), keep the good ones as a documents QA file")
    p.add_argument("docs", help="folder of .txt/.md documents")
    p.add_argument("--model", required=True, help="the drafting model (sim:perfect drafts by a fixed rule)")
    p.add_argument("-o", "--output", required=True, help="QA JSONL to write (rejected pairs beside it: "
                   "NAME.rejected.jsonl; the call journal: NAME.calls.jsonl)")
    p.add_argument("--n", type=int, default=300, help="questions to draft (default 300)")
    p.add_argument("--closed-book-model", help="a second model that must not answer the questions without the document")
    p.add_argument("--tokenizer", help="tokenizer for the plan and sims (default: inferred from the model)")
    p.add_argument("--max-overlap", type=float, default=0.5,
                   help="largest share of a question's content words found in its evidence (default 0.5)")
    p.add_argument("--max-cost", type=float, help="refuse to start when the planned cost exceeds this many USD")
    p.add_argument("--plan", action="store_true", help="print the plan and stop")
    p.add_argument("--per-passage", type=int, default=8, help="pairs asked of each passage (default 8)")
    p.add_argument("--draft-tokens", type=int, default=768, help="output limit of a drafting call (default 768)")
    p.add_argument("--concurrency", type=int, default=4, help="calls in flight (default 4)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_draft_questions)


def cmd_draft_questions(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.natural.draft import DraftConfig, draft_questions, open_models, plan_drafting

    cfg = DraftConfig(docs=args.docs, model=args.model, out=args.output, n=args.n,
                      closed_book_model=args.closed_book_model, tokenizer=args.tokenizer,
                      max_overlap=args.max_overlap, concurrency=args.concurrency, per_passage=args.per_passage,
                      draft_tokens=args.draft_tokens)
    plan = plan_drafting(cfg)  # a mistyped model is refused here, before anything is printed
    dear = args.max_cost is not None and plan.cost_usd is not None and plan.cost_usd > args.max_cost
    # the models are built (a missing key refused) before the plan is shown; --plan needs no key
    models = None if args.plan or dear else open_models(cfg)
    out.print(f"plan: {plan.line()}", highlight=False)
    if dear:
        raise CtxprobeError(f"planned cost ${plan.cost_usd:.4f} exceeds --max-cost {args.max_cost}; "
                            "lower --n or raise --max-cost")
    if models is None:
        return 0
    bar = Progress(TextColumn("{task.description:<6}"), BarColumn(), MofNCompleteColumn(), console=err,
                   disable=args.no_progress, transient=True)
    tasks: dict[str, TaskID] = {}

    def progress(phase: str, done: int, total: int) -> None:
        if phase not in tasks:
            tasks[phase] = bar.add_task(phase, total=total)
        bar.update(tasks[phase], completed=done, total=total)

    with bar:
        result = draft_questions(cfg, progress, models)
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(result.reasons.items())) or "none"
    out.print(f"kept {result.kept} questions in {result.kept_path}; rejected {result.rejected} "
              f"({reasons}) in {result.rejected_path}", highlight=False)
    out.print(f"calls: {result.calls_sent} sent, {result.calls_reused} reused from the journal", highlight=False)
    if result.failed_calls:
        out.print(f"{result.failed_calls} calls failed after their retries; their pairs are left out: "
                  "rerun the same command to complete them", highlight=False)
    if result.unparsed_lines:
        out.print(f"{result.unparsed_lines} reply lines were not a question/answer pair (left out)", highlight=False)
    return 0
