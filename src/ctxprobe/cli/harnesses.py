"""Commands that bridge other harnesses: import-inspect, import-lm-eval, export --lm-eval."""

from __future__ import annotations

import argparse

from rich.console import Console

from ctxprobe.harnesses.importing import Imported


def _print_imported(done: list[Imported], store: str, out: Console) -> None:
    for imp in done:
        labels = ", ".join(f"{k} {v}" for k, v in sorted(imp.outcomes.items()))
        again = " (already stored: only what was missing was added)" if imp.resumed else ""
        out.print(f"run {imp.run_id}: {imp.answered}/{imp.planned} planned cases answered ({labels}){again}; "
                  f"`ctxprobe report {imp.run_id} --store {store}`", highlight=False)
        if imp.note:
            out.print(f"  {imp.note}", highlight=False)


def cmd_import_inspect(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.harnesses.inspect_log import import_inspect_logs

    _print_imported(import_inspect_logs(args.logs, args.store), args.store, out)
    return 0


def cmd_import_lm_eval(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.harnesses.lm_eval_samples import import_lm_eval_samples

    _print_imported(import_lm_eval_samples(args.samples, args.store, args.source_store), args.store, out)
    return 0


def cmd_export_lm_eval(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.harnesses.lm_eval_export import write_lm_eval_folder

    group, n, tasks = write_lm_eval_folder(args.run_id, args.store, args.lm_eval)
    err.print(f"wrote {n} cases as {len(tasks)} lm-eval task(s) to {args.lm_eval}; run them with\n"
              f"  lm_eval --include_path {args.lm_eval} --tasks {group} --apply_chat_template "
              "--model local-chat-completions --model_args model=NAME,base_url=URL/v1/chat/completions "
              "--log_samples --output_path OUT", highlight=False, soft_wrap=True)
    return 0
