"""The ``ctxprobe`` command line: parses, calls the library, prints. Nothing else."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.text import Text

from ctxprobe._version import __version__
from ctxprobe.core.catalog import model_help
from ctxprobe.core.profiles.local import sim_forms
from ctxprobe.errors import CtxprobeError

from ctxprobe.cli.common import (CHECK_EPILOG, DEFAULT_REPORT_DIR, DEFAULT_STORE, EXAMPLES, OneLineErrors, family_commands,
                                 family_report_flags, preset_flags, spec_default)
from ctxprobe.cli.reading import (
    cmd_check,
    cmd_compare,
    cmd_export,
    cmd_failures,
    cmd_report,
    cmd_runs,
)
from ctxprobe.cli.imports import add_import_parsers
from ctxprobe.cli.prices import add_prices_parser
from ctxprobe.cli.decide import add_decide_parser
from ctxprobe.cli.view import add_view_parser
from ctxprobe.cli.natural import add_natural_commands
from ctxprobe.cli.sweeps import cmd_plan, cmd_run, cmd_serve_local, cmd_serve_sim

__all__ = ["build_parser", "main"]


RUN_HELP = "a run id from `ctxprobe runs` (a unique prefix is enough)"
BASE_URL_HELP = ("the OpenAI-compatible server for vllm/, sglang/, openai-api/ (and openai/) models, "
                 "e.g. http://127.0.0.1:8000/v1 (default $VLLM_BASE_URL or $SGLANG_BASE_URL for those, "
                 "else $OPENAI_BASE_URL)")
TOKENIZER_HELP = ("local | gguf:/path.gguf | hf:/dir | tiktoken:o200k_base | endpoint:URL | anthropic-count:MODEL "
                  "| gemini-count:MODEL | openai-count:MODEL | approx (default: inferred from the model, and printed)")


def _add_store(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", default=DEFAULT_STORE, metavar="PATH", help="SQLite results file (default ./%(default)s)")


def _add_cost_flags(p: argparse.ArgumentParser) -> None:
    """Spending, rate and batch flags, and the reasoning-budget axis: the same for run, plan
    and phonebook (each is a spec key, read by the same sweep machinery)."""
    d = spec_default
    p.add_argument("--reasoning-budgets", metavar="TOKENS",
                   help="reasoning (thinking) budgets as a grid axis, comma list: 0,1k,4k (0 = no thinking; "
                        "on top of --max-tokens; default: no such axis)")
    p.add_argument("--rpm", type=float, help="requests per minute limit")
    p.add_argument("--tpm", type=float, help="tokens per minute limit (prompt + max output)")
    p.add_argument("--max-cost", type=float, help="stop before spending more than this many USD")
    p.add_argument("--prices", help="YAML price file (model: {input: USD/1M, output: USD/1M}) extending the built-ins")
    p.add_argument("--cache-prompt", choices=["auto", "explicit", "off"],
                   help=f"prompt caching of hosted APIs (default {d('cache_prompt')}): auto (Anthropic breakpoints, "
                        "OpenAI cache keys, Gemini implicit or explicit caches), explicit (Gemini explicit caches "
                        "always), off")
    p.add_argument("--pricing", choices=["on-demand", "cached", "batch"],
                   help="which of plan's three prices --max-cost caps (default: cached; on-demand with "
                        "--cache-prompt off)")
    p.add_argument("--batch", action="store_true", default=None,
                   help="send the sweep as provider batches (openai, anthropic, gemini: about half price, "
                        "results within 24 h); a rerun resumes polling them")
    p.add_argument("--batch-poll", type=float, metavar="SECONDS",
                   help=f"with --batch: seconds between two polls of a waiting batch (default {d('batch_poll')})")


def _add_plots(p: argparse.ArgumentParser, out: str) -> None:
    p.add_argument("--out", help=f"directory for PNG plots (default ./{DEFAULT_REPORT_DIR}{out})")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--details", action="store_true",
                   help="the whole terminal report: each family's grid, outcomes, interval, P(clears the bar) and "
                        "every note (default: the answer only — one table, the notes that change it, the answers)")


def _add_model_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help=model_help() + f" (default {spec_default('model')})")
    p.add_argument("--base-url", metavar="URL", help=BASE_URL_HELP)
    p.add_argument("--tokenizer", help=TOKENIZER_HELP)


def _add_grid_flags(p: argparse.ArgumentParser) -> None:
    d = spec_default
    p.add_argument("spec", nargs="?", help="YAML spec file (flags override its keys)")
    _add_model_flags(p)
    p.add_argument("--family", help=f"task families, comma list (default {d('families')})")
    preset_flags(p)
    p.add_argument("--param", action="append", metavar="FAMILY.KEY=VALUE",
                   help="a family parameter, e.g. --param niah.distractors=3 (repeatable)")
    p.add_argument("--lengths", help="comma list of prompt lengths in model tokens: 1k,4k,8k (k = 1024) or 4000")
    p.add_argument("--depths", help=f"comma list of evidence depths in [0,1] (default {d('depths')})")
    p.add_argument("--reps", type=int, help="repetitions per cell (unset: the smallest grid in which an all-correct "
                                            "length clears the bar at 95%%, ceil(24 / depths) at 0.856)")
    p.add_argument("--seed", type=int, help=f"sweep seed (default {d('seed')})")
    p.add_argument("--distractors", type=int, help="niah: same-form needles with other keys (niah.distractors)")
    p.add_argument("--variants", metavar="NAME[:KEY=VALUE+...],...",
                   help="prompt variants as a grid axis, each on the same seeded cases, compared case by case "
                        "with the first: e.g. start:instruction=before,end:instruction=after "
                        "(phone book: repeat:repeat_instructions=true, user:book_in=user, shots:examples=2, cot:cot=true; "
                        "decoding: t0:temperature=0,t07:temperature=0.7+samples=5, k samples per case)")
    p.add_argument("--haystack", help="directory of your own .txt/.md filler (default: generated prose)")
    p.add_argument("--baseline", choices=["no-context"],
                   help="also run each case with its evidence removed (label FAMILY@no-context): the "
                        "noise floor beside each accuracy (MRCR: a random instance's score, computed)")


def _add_decoding_flags(p: argparse.ArgumentParser) -> None:
    d = spec_default
    p.add_argument("--max-tokens", type=int, help=f"output token limit (default {d('max_tokens')})")
    p.add_argument("--temperature", type=float, help=f"sampling temperature (default {d('temperature')}: greedy)")
    p.add_argument("--top-p", type=float, help="nucleus sampling top_p in (0, 1] (default: not sent)")
    p.add_argument("--threshold", type=float, help=f"accuracy bar for effective length (default {d('threshold')})")
    p.add_argument("--bars", help="per-family bars: niah=0.9,vartrack=nolima (ruler = 0.856; nolima = 85%% of "
                                  "the family's score at its shortest length; relative:F)")
    p.add_argument("--instruction", choices=["before", "after", "both", "none"],
                   help="where the instruction line sits: before the haystack, after it, both, none "
                        f"(default {d('instruction')})")
    p.add_argument("--separator", metavar="TOKENS",
                   help=f"filler tokens between the haystack's start and depth 0, e.g. 256 (default {d('separator')})")
    p.add_argument("--layout", dest="messages", choices=["single", "turns", "tools"],
                   help="how the context is sent: one user message, prior chat turns, or tool results "
                        f"(docs/layouts.md; default {d('messages')})")
    p.add_argument("--turn-tokens", metavar="TOKENS",
                   help=f"with --layout turns/tools: about how many tokens each turn holds (default {d('turn_tokens')})")
    p.add_argument("--evidence-role", choices=["user", "assistant", "tool"],
                   help="with --layout turns/tools: the role of the turn holding the evidence "
                        "(default: user for turns, tool for tools)")
    p.add_argument("--no-share-prefix", dest="share_prefix", action="store_false", default=None,
                   help="independent filler per case (default: depths of a length and rep share it)")
    p.add_argument("--allow-beyond-window", action="store_true", default=None,
                   help="allow lengths beyond the model's window (for local/GGUF models: its trained context)")


def _add_transport_flags(p: argparse.ArgumentParser) -> None:
    d = spec_default
    p.add_argument("--concurrency", type=int, help=f"requests in flight (default {d('concurrency')})")
    p.add_argument("--slots", type=int, help="the server's parallel prefix-cache slots: cases sharing a prefix go "
                   "in order to one slot (default: as the server reports, llama.cpp's /props; 0: off)")
    p.add_argument("--timeout", type=float, help=f"seconds per request attempt (default {d('timeout')})")
    p.add_argument("--retries", type=int, help=f"retries on transient errors (default {d('retries')})")
    _add_cost_flags(p)
    p.add_argument("--judge", help="judge model for open-ended answers (documents with match=judge), e.g. "
                                     "openai:gpt-4o-mini; calibrated before use")
    p.add_argument("--judge-labels", help="labelled JSONL to calibrate the judge on (default: built-in synthetic set)")
    p.add_argument("--force-judge", action="store_true", default=None, help="use the judge even if calibration fails")
    p.add_argument("--executor", choices=["local", "ray"],
                   help=f"where requests are sent from (default {d('executor')})")
    p.add_argument("--ray-address", help="Ray cluster address (default $RAY_ADDRESS, else a local Ray instance)")
    p.add_argument("--ray-replicas", type=int, help="Ray actors, each calling the endpoint or hosting the model")
    p.add_argument("--endpoint", action="append", dest="endpoints", metavar="MODEL",
                   help="with --executor ray: a replica's model spec, balanced across (repeatable)")
    p.add_argument("--build-workers", type=int,
                   help=f"processes building cases (0 = every core; default {d('build_workers')})")
    p.add_argument("--live-tokens", help="cap on tokens held in built but unstored cases, e.g. 4m")


def _add_spec_flags(p: argparse.ArgumentParser) -> None:
    """Every flag that sets a spec key (``run`` and ``plan``)."""
    _add_grid_flags(p)
    _add_decoding_flags(p)
    _add_transport_flags(p)


def _add_adaptive_flags(p: argparse.ArgumentParser, *, run: bool) -> None:
    if run:
        p.add_argument("--adaptive", action="store_true",
                       help="walk the lengths up, sending cases only where the effective-length answer is still open")
    else:
        p.add_argument("--adaptive", action="store_true",
                       help="also the expected tokens per decision of run --adaptive, by the true accuracy")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="adaptive: P(confident and wrong) <= 1 - this, at any accuracy (default %(default)s)")
    p.add_argument("--token-budget", help="adaptive: cap on prompt tokens sent, e.g. 2m "
                   "(default: what a 5-depth x 20-rep grid of the lengths costs)")
    p.add_argument("--bisect", type=int, default=0,
                   help="adaptive: bisect between grid lengths this many times (default %(default)s)")


def _run_parser(sub: Any) -> None:
    p = sub.add_parser("run", help="run (or resume) a sweep, then print the report",
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXAMPLES)
    _add_spec_flags(p)
    _add_store(p)
    _add_plots(p, "/RUN_ID")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--cases", metavar="PACK", help="re-send an exported pack's exact prompts (export --jsonl)")
    p.add_argument("--force", action="store_true", help="--cases: run even if the tokenizer/template differs")
    p.add_argument("--allow-edited-pack", action="store_true",
                   help="--cases: run a pack edited after export (answers, prompts...) as a run of its own")
    _add_adaptive_flags(p, run=True)
    p.set_defaults(func=cmd_run)


def _compare_parsers(sub: Any) -> None:
    p = sub.add_parser("compare", help="paired comparison of two runs on the same seeded cases")
    p.add_argument("run_a", help=RUN_HELP)
    p.add_argument("run_b", help=RUN_HELP)
    _add_store(p)
    p.add_argument("--store-b", help="store of RUN_B when it lives in another file")
    p.add_argument("--alpha", type=float, default=0.05, help="family-wise error rate (Holm) (default %(default)s)")
    p.add_argument("--threshold-rule", help="0.856 (absolute), relative or relative:0.85 (NoLiMa)")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("check", help="regression gate: exit 1 when RUN is significantly worse than the baseline, "
                       "4 when the slice could not have shown a drop of --max-drop",
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=CHECK_EPILOG)
    p.add_argument("run_id", nargs="?", help=RUN_HELP + "; with --plan: a YAML spec of the slice (optional)")
    p.add_argument("--baseline", help="baseline run id (same seeded cases)")
    _add_store(p)
    p.add_argument("--baseline-store", help="store of the baseline when it lives in another file")
    p.add_argument("--max-drop", type=float, default=0.05, help="largest tolerated accuracy drop (default %(default)s)")
    p.add_argument("--alpha", type=float, default=0.05, help="family-wise error rate (default %(default)s)")
    p.add_argument("--allow-inconclusive", action="store_true",
                   help="exit 0, not 4, when the slice could not have shown a drop of --max-drop")
    p.add_argument("--plan", action="store_true",
                   help="send nothing, read no run: say how many reps the slice (SPEC and/or --lengths, --depths, "
                        "--family, --reps) needs for the gate to see a drop of --drop")
    p.add_argument("--drop", type=float, help="--plan: the drop to detect (default: twice --max-drop)")
    p.add_argument("--lengths", help="--plan: the slice's lengths, e.g. 32k,64k")
    p.add_argument("--depths", help="--plan: the slice's depths, e.g. 0,0.5,1")
    p.add_argument("--family", help="--plan: the slice's families, comma list")
    p.add_argument("--reps", type=int, help="--plan: the slice's repetitions per cell")
    p.set_defaults(func=cmd_check)


def _plan_parser(sub: Any) -> None:
    p = sub.add_parser("plan", help="print the grid size and token cost of a spec without sending anything")
    _add_spec_flags(p)
    _add_adaptive_flags(p, run=False)
    p.add_argument("--json", action="store_true",
                   help="print the plan as JSON: requests, tokens, the three prices in USD, their source, the window")
    p.set_defaults(func=cmd_plan)


def _reading_parsers(sub: Any) -> None:
    p = sub.add_parser("report", help="grid table with 95%% intervals, effective length, PNG plots, HTML")
    p.add_argument("run_ids", nargs="+", metavar="RUN_ID", help="run id(s); " + RUN_HELP)
    p.add_argument("--html", metavar="PATH", help="write one self-contained HTML report (several runs side by side)")
    p.add_argument("--failures", type=int, default=20,
                   help="failures to sample into the HTML report (default %(default)s)")
    p.add_argument("--scorer", default="strict",
                   help="strict (default), or a family with a scorer of its own (an unknown name lists them): "
                        "re-score the stored outputs with it")
    _add_store(p)
    p.add_argument("--json", action="store_true", help="print the results as JSON (for CI pipelines)")
    p.add_argument("--threshold", type=float, help=f"accuracy bar (default: the run's, else {spec_default('threshold')})")
    p.add_argument("--bars", help="per-family bars: niah=0.9,vartrack=nolima (default: the run's)")
    _add_plots(p, "/RUN_ID")
    p.set_defaults(func=cmd_report, family_flags=family_report_flags(p))

    p = sub.add_parser("runs", help="list stored runs")
    _add_store(p)
    p.add_argument("--json", action="store_true", help="print every run as JSON (full ids and dates)")
    p.set_defaults(func=cmd_runs)

    p = sub.add_parser("export", help="every case of a run: messages, answer, token counts, depth, output, outcome")
    p.add_argument("run_id", help=RUN_HELP)
    _add_store(p)
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--jsonl", action="store_true",
                     help="JSON Lines, one case per line with its result; also an instance pack that "
                          "`ctxprobe run --cases FILE` re-sends byte for byte (the default)")
    fmt.add_argument("--csv", action="store_true", help="CSV, one row per case")
    fmt.add_argument("--parquet", action="store_true", help="Parquet, one row per case (needs -o and ctxprobe[export])")
    fmt.add_argument("--ruler", action="store_true",
                     help="RULER predictions: -o DIR gets DIR/<length>/<task>.jsonl for RULER's evaluate.py")
    fmt.add_argument("--lm-eval", metavar="DIR",
                     help="an lm-evaluation-harness task folder of the run's exact cases, scored as ctxprobe "
                          "scores them: lm_eval --include_path DIR --tasks ctxprobe_RUN (docs/lm-eval.md)")
    p.add_argument("-o", "--output", help="file to write (default: stdout)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("failures", help="a sample of failed cases with the evidence highlighted")
    p.add_argument("run_id", help=RUN_HELP)
    _add_store(p)
    p.add_argument("--outcome", help="only this outcome, e.g. distractor, wrong, not_found, input_truncated")
    p.add_argument("--n", type=int, default=10, help="how many (default %(default)s)")
    p.set_defaults(func=cmd_failures)


def _serve_parsers(sub: Any) -> None:
    p = sub.add_parser("serve-sim", help="serve a simulated model over a loopback OpenAI-compatible API")
    p.add_argument("--model", default="sim:perfect", help="the simulated model to serve (default %(default)s); "
                   f"sim:{sim_forms()}, options as ?key=value")
    p.add_argument("--tokenizer", default="local", help="tokenizer the sim counts and reads with (default %(default)s)")
    p.add_argument("--model-id", help="model id the server reports in /v1/models (default: the --model spec)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default %(default)s: loopback only)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default %(default)s; 0 = any free port)")
    p.add_argument("--truncate-to", type=int, default=None,
                   help="silently left-truncate prompts longer than N tokens (a fault to detect)")
    p.set_defaults(func=cmd_serve_sim)

    p = sub.add_parser("serve-local", help="serve a GGUF with llama.cpp's native server on 127.0.0.1 (no compiler)")
    p.add_argument("--model", default="local", help="local (the embedded SmolLM2, default) or /path/model.gguf")
    p.add_argument("--port", type=int, default=8080, help="port on 127.0.0.1 (default %(default)s; 0 = any free port)")
    p.add_argument("--slots", type=int, default=1, help="parallel slots, continuously batched (default %(default)s)")
    p.add_argument("--ctx", type=int, default=None,
                   help="window of each slot in tokens (default: the model's trained window)")
    p.set_defaults(func=cmd_serve_local)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrors(
        prog="ctxprobe", description="Measure a language model's effective context length.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"ctxprobe {__version__}")
    # COMMAND, not a 250-character {run,compare,...} line at the top of --help: each is listed below
    sub: Any = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     title="commands")  # its parsers are OneLineErrors too
    adders: list[Callable[[Any], None]] = [
        _run_parser, _compare_parsers, _plan_parser, _reading_parsers, _serve_parsers, add_import_parsers,
        add_prices_parser, lambda s: add_decide_parser(s, DEFAULT_STORE), add_natural_commands,
        lambda s: add_view_parser(s, DEFAULT_STORE)]
    for add in adders + [c.add for c in family_commands()]:  # then each family's own command, by name
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = Console()
    err = Console(stderr=True)
    try:
        return int(args.func(args, out, err) or 0)
    except CtxprobeError as e:
        from ctxprobe.redaction import scrub

        err.print(Text.assemble(("error: ", "bold red"), scrub(str(e))), highlight=False, soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        err.print("interrupted: every response received so far is stored; rerun the same command to resume")
        return 130
    except BrokenPipeError:
        return _closed_pipe()


def _closed_pipe() -> int:
    """The reader went away (``ctxprobe export RUN | head``): stop quietly, exit 0.

    stdout is pointed at /dev/null so the interpreter's final flush does not raise again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
