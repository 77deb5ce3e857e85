"""Instance packs: re-run exactly the same prompts on another machine (``ctxprobe run --cases``).

A pack (written by :func:`ctxprobe.report.export.write_pack`) is JSONL, one self-contained
case per line: the chat messages as sent, the cell, repetition and seed, the answer key,
the token count it was built to, and the tokenizer, chat-template hash and spec it was
built with. Re-running a pack never regenerates anything: the stored messages are sent
as they are, through the same runner, and scored by the same family scorer as a sweep,
into a normal run of the store — so ``report``, ``export`` and ``compare`` work on it.

The tokenizer is resolved to check the pack was built for it (same chat template, same
token count per prompt): the same messages under another template are another prompt.

Every line carries a ``content_hash`` over everything that decides its score (messages,
answer key, distractors, scorer parameters, token count; :func:`ctxprobe.core.case.content_hash`).
A line that no longer matches its hash was edited after export and is refused, unless the
user asks to run the edited pack: then it forms a run of its own, because the run identity
hashes the content actually read, never the hashes a line claims. The hash does not cover
the cell (packs exported before this check keep their hashes), so the cell is checked on
its own: its depth in [0, 1], its length positive, its family known, and its coordinates
those of the line's ``case_id``. Every check runs before the store is opened: a refused
pack writes nothing.

Once checked, a pack runs through the same :class:`~ctxprobe.sweep.session.SweepSession`
as a sweep: preflight (exact counts make any shortfall ``input_truncated``), the window
check, the cost ledger (``--max-cost``), rate limits, retries and timeouts, the judge.
Each prompt is encoded once, in the checks; the ids are kept only when the provider reads
them. The run id names the model without where it is served (``openai-compat:NAME``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe._version import __version__
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.names import as_ref
from ctxprobe.core.case import Case, Cell
from ctxprobe.core.case_meta import case_meta
from ctxprobe.core.pack import PackLine



@dataclass(frozen=True)
class PackCase:
    case: Case
    line: int
    tokenizer: str
    chat_template_hash: str | None
    spec: dict[str, Any]
    source_run_id: str | None = None
    edited: bool = False  # does not match the content_hash it was exported with (allowed on request)


def _bad(path: Path, line: int, why: str) -> CtxprobeError:
    return CtxprobeError(f"{path} line {line}: {why}; re-export the pack with `ctxprobe export RUN --jsonl -o PACK`")


_EDIT_HINT = "re-export it, or pass --allow-edited-pack to run the edited pack as a run of its own"


def iter_pack(path: str | Path, *, allow_edited: bool = False) -> Iterator[PackCase]:
    """Parse and check a pack line by line (a bad line is named in a one-line error).

    A line whose content no longer matches its ``content_hash`` (or ``prompt_hash``), or
    that has none, is refused unless ``allow_edited``."""
    p = Path(path)
    try:
        fh = open(p, encoding="utf-8")
    except OSError as err:
        raise CtxprobeError(f"cannot read pack {p}: {err.strerror or err}") from None
    with fh:
        for n, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                d = json.loads(raw)
            except json.JSONDecodeError as err:
                raise _bad(p, n, f"not JSON ({err.msg})") from None
            try:
                line = PackLine.from_json(d)
            except ValueError as err:
                raise _bad(p, n, str(err)) from None
            case, cell = line.case, line.case.cell
            bad_cell = _bad_cell(cell, d)
            if bad_cell:
                raise _bad(p, n, bad_cell)
            edited = line.edited()
            if edited and not allow_edited:
                raise CtxprobeError(f"{p} line {n}: {edited}; {_EDIT_HINT}")
            yield PackCase(case, n, line.tokenizer, line.chat_template_hash, line.spec, line.source_run_id,
                           edited=bool(edited))


def _bad_cell(cell: Cell, line: dict[str, Any]) -> str | None:
    """Why a line's cell cannot be a case's (None when it can): the same bounds ``run``
    puts on a grid, and a family the line's spec (or ctxprobe) knows."""
    from ctxprobe.core.family_lookup import family_names

    known = family_names()
    if not 0.0 <= cell.depth <= 1.0:
        return f"cell depth {cell.depth:g} is outside [0, 1]"
    if cell.length <= 0:
        return f"cell length {cell.length} is not positive"
    if _family_name(cell.family, line.get("spec")) not in known:
        return f"cell family '{cell.family}' is unknown (known: {', '.join(sorted(known))})"
    return None


def _family_name(label: str, spec: object) -> str:
    """The family a label names: its own name, or its spec parameters' ``family``."""
    families = spec.get("families") if isinstance(spec, dict) else None
    params = families.get(label) if isinstance(families, dict) else None
    return str(params.get("family", label)) if isinstance(params, dict) else label


def load_pack(path: str | Path, *, allow_edited: bool = False) -> list[PackCase]:
    """All cases of a pack (prompts included: for packs too big for memory use iter_pack)."""
    cases = list(iter_pack(path, allow_edited=allow_edited))
    if not cases:
        raise CtxprobeError(f"pack {path} holds no cases")
    ids = [c.case.case_id for c in cases]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise CtxprobeError(f"pack {path} holds case {dup} twice; packs from different runs cannot be mixed")
    return cases


def pack_run_id(cases: list[PackCase], model: str, decoding: dict[str, Any]) -> str:
    """Identity of a pack run: the exact content of its cases (recomputed, not as claimed),
    the model (where a server is does not change what it is: ``ModelRef.identity``) and
    decoding, the ctxprobe version.

    Rerunning the same pack against the same model resumes instead of starting over; an
    edited pack (different answer key, say) is another run.
    """
    digest = hashlib.sha256()
    for c in sorted(cases, key=lambda c: c.case.case_id):
        digest.update(f"{c.case.case_id}\0{c.case.content_hash}\n".encode())
    blob = json.dumps({"pack": digest.hexdigest(), "model": as_ref(model).identity, "decoding": decoding,
                       "ctxprobe_version": __version__}, sort_keys=True)
    return "p" + hashlib.sha256(blob.encode()).hexdigest()[:11]


def run_pack(pack_path: str | Path, model: str | None, store_path: str | Path = "ctxprobe.sqlite", *,
             tokenizer: str | None = None, force: bool = False, allow_edited: bool = False, progress: bool = False,
             console: Any = None, **transport: Any) -> PackResult:
    """Send exactly the pack's messages to ``model`` and store/score them as a normal run.

    ``model`` defaults to the pack's own; ``tokenizer`` to the pack's. The chat template
    hash and each prompt's token count must match the pack unless ``force``; each line
    must match its content hash unless ``allow_edited``. ``transport`` takes the spec's
    transport settings (concurrency, timeout, retries, rpm, tpm, max_cost, prices, ...).
    """
    import asyncio

    return asyncio.run(arun_pack(pack_path, model, store_path, tokenizer=tokenizer, force=force,
                                 allow_edited=allow_edited, progress=progress, console=console, **transport))


async def arun_pack(pack_path: str | Path, model: str | None, store_path: str | Path = "ctxprobe.sqlite", *,
                    tokenizer: str | None = None, force: bool = False, allow_edited: bool = False,
                    progress: bool = False, console: Any = None, **transport: Any) -> PackResult:
    from ctxprobe.cases.prefixes import mark_prefix_groups, prefix_counter
    from ctxprobe.store import Store
    from ctxprobe.sweep.pricing import rules_for
    from ctxprobe.store import RunMeta
    from ctxprobe.sweep.session import SessionRun, SweepSession, Work
    from ctxprobe.core.family import Family
    from ctxprobe.haystack.context import BuildContext
    from ctxprobe.core.family_lookup import make_family
    from ctxprobe.tokenizers import resolve_tokenizer

    cases = load_pack(pack_path, allow_edited=allow_edited)
    first = cases[0]
    source = dict(first.spec)
    model = model or str(source.get("model") or "")
    if not model:
        raise CtxprobeError("the pack names no model: pass --model")
    tok_name = tokenizer or first.tokenizer
    tok = resolve_tokenizer(tok_name, model=model)  # bare "endpoint": the model's own server
    if not force and first.chat_template_hash and tok.chat_template_hash != first.chat_template_hash:
        raise CtxprobeError(
            f"tokenizer {tok_name} has chat template {tok.chat_template_hash}, the pack was built with "
            f"{first.chat_template_hash}: pass the pack's tokenizer with --tokenizer (or --force)")
    decoding = dict(source.get("decoding") or {})
    spec = pack_spec(source, model, tok_name, transport)
    families: dict[str, tuple[Family, object]] = {label: (make_family(_family_name(label, source), BuildContext(tokenizer=tok,
                                                                            haystack=source.get("haystack"))), None)
                for label in sorted({c.case.cell.family for c in cases})}
    session = SweepSession(spec, tok_name, tok, families, console=console, progress=progress)
    provider = session.resolve()
    try:
        # Every check before the store is opened: a refused pack leaves no trace in it.
        ids = _checked_ids(cases, tok, tok_name, pack_path, session.ids, force)
        for pc in cases:
            why = session.window_error(pc.case)
            if why:
                raise CtxprobeError(f"{pack_path} line {pc.line}: {why}")
        for budget in sorted({b for pc in cases if (b := pc.case.cell.reasoning_budget) is not None}):
            refused = provider.reasoning_refusal(budget)
            if refused:
                raise CtxprobeError(f"{pack_path}: {refused}")
        await session.preflight()
        session.open_ledger()
        await session.open_judge(sorted({c.case.cell.family for c in cases if case_meta(c.case.meta).get("match") == "judge"}))
        edited = sum(c.edited for c in cases)
        meta = RunMeta(chat_template_hash=tok.chat_template_hash, trained_context=tok.trained_context,
                       context_window=provider.context_window,
                       pack={"path": Path(pack_path).name, "source_run_id": _source(cases), "cases": len(cases),
                             **({"edited_lines": edited} if edited else {})})
        record = SessionRun(pack_run_id(cases, model, decoding), model=model, tokenizer=tok_name,
                           family=",".join(families), spec={**source, "model": model}, meta=meta)

        hinted = spec.cache_prompt != "off" and rules_for(spec).mechanism != "none"
        periods = _prefix_periods(source)

        def prepared(mine: Iterator[PackCase]) -> Iterator[Case]:
            def taken() -> Iterator[Case]:
                for pc in mine:
                    pc.case.prompt_ids = ids.pop(pc.line, None)  # encoded once, in the checks
                    yield pc.case

            # prompt caching: each case learns where it shares its prefix with its group
            yield from (mark_prefix_groups(taken(), periods, prefix_counter(tok_name, tok),
                                           explicit=spec.cache_prompt == "explicit")
                        if hinted else taken())

        units = {label: "entries" for label, params in (source.get("families") or {}).items()
                 if isinstance(params, dict) and params.get("unit") == "entries"}
        work = Work(cases, {c.case.case_id for c in cases}, key=lambda c: c.case.case_id, build=prepared, units=units)
        with Store(store_path) as store:
            r = await session.run(store, record, work)
        return PackResult(r.run_id, r.resumed, r.sent, r.already_done, r.store_path)
    finally:
        await session.aclose()


@dataclass(frozen=True)
class PackResult:
    run_id: str
    resumed: bool
    sent: int
    already_done: int
    store_path: Path


def pack_spec(source: dict[str, Any], model: str, tokenizer: str, transport: dict[str, Any]) -> Any:
    """The spec a pack runs under: the model, tokenizer, decoding and judge the pack was
    built with (or given), and the caller's transport settings. Its grid is not used:
    the pack's lines are the cases."""
    from pydantic import ValidationError

    from ctxprobe.spec import Spec

    keep = {k: source[k] for k in ("decoding", "judge", "judge_labels", "force_judge", "allow_beyond_window")
            if source.get(k) is not None}
    families = {label: dict(p) for label, p in (source.get("families") or {}).items() if isinstance(p, dict)}
    given = {k: v for k, v in transport.items() if v is not None}
    try:
        return Spec.model_validate({**keep, **({"families": families} if families else {}), **given,
                                    "model": model, "tokenizer": tokenizer})
    except ValidationError as err:  # a bad transport setting
        first = err.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise CtxprobeError(f"bad setting '{where}' for the pack run: {first['msg']}") from None


def _prefix_periods(source: dict[str, Any]) -> dict[str, int]:
    """Family label → repetitions sharing one text (``prefix_period``), from the source spec;
    1 where the family or its parameters are unknown here."""
    from ctxprobe.core.family_lookup import family_class, validate_params

    out: dict[str, int] = {}
    for label, params in (source.get("families") or {}).items():
        params = dict(params or {})
        name = str(params.pop("family", label))
        try:
            out[str(label)] = int(family_class(name).prefix_period(validate_params(name, params)))
        except Exception:  # a plugin family not installed here, parameters of another version
            out[str(label)] = 1
    return out


def _checked_ids(cases: list[PackCase], tok: Any, tok_name: str, pack_path: str | Path, policy: str,
                 force: bool) -> dict[int, Any]:
    """Encode every prompt once, check it has the token count the pack was built to, and
    keep its ids (by line) only as the provider needs them: none for a server, packed
    for sims and HF, a list for llama.cpp."""
    import array

    kept: dict[int, Any] = {}
    for pc in cases:
        ids = tok.encode_chat(pc.case.messages)
        if len(ids) != pc.case.token_count and not force:
            raise CtxprobeError(
                f"{pack_path} line {pc.line}: the prompt is {len(ids)} tokens with {tok_name}, the pack "
                f"says {pc.case.token_count}: use the pack's tokenizer (or --force)")
        if policy == "keep":
            kept[pc.line] = list(ids)
        elif policy == "compact":
            kept[pc.line] = array.array("i", ids)
    return kept


def _source(cases: list[PackCase]) -> str | None:
    """The run the pack was exported from (None when lines from several runs were merged)."""
    sources = {c.source_run_id for c in cases}
    return sources.pop() if len(sources) == 1 else None
