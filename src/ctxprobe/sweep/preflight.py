"""Preflight: before a sweep, prove the serving path works and measures what we think.

One probe request checks the endpoint answers and compares the prompt tokens the server
reports with our count of the same templated prompt (a tokenizer or chat-template
mismatch shows up here, before thousands of cases are built to the wrong length). At
temperature 0 the same probe is repeated: different answers mean non-deterministic
serving (batching, non-deterministic kernels), which makes small accuracy differences
between runs meaningless. A sweep with reasoning budgets above 0 sends the probe once
more with its smallest one, so a server that cannot take the budget's request shape says
so before the sweep (vLLM without a reasoning parser: the budget field is dropped and
the run says which controls reach the model). What the endpoint says it serves is
recorded with the run.

In-process models (``local``, ``llamacpp:``, ``sim:``) are deterministic by construction
and send nothing here.
"""

from __future__ import annotations

from dataclasses import replace

from ctxprobe.core.runmeta import Preflight
from ctxprobe.errors import CtxprobeError
from ctxprobe.models.base import GenerateRequest, Provider
from ctxprobe.runner.client import CallPolicy, ModelClient
from ctxprobe.spec import Spec
from ctxprobe.tokenizers.base import Message, Tokenizer

PROBE_MESSAGES: list[Message] = [
    {"role": "user", "content": "In two short sentences, describe a river at dawn."},
]
DETERMINISM_REPEATS = 2  # extra sends of the probe at temperature 0


#: What the probe found, filled in as it runs: the run's typed record of it.
PreflightReport = Preflight


def _check_trained_window(provider: Provider, report: PreflightReport) -> None:
    """A served window past the trained one, with no position scaling reported, is named
    before anything is sent (and remembered: the diagnosis names it if accuracy collapses)."""
    trained = provider.trained_context
    report.trained_context = trained
    window = provider.context_window
    if not (trained and window and window > trained):
        return
    if provider.position_scaling:
        return
    report.unscaled_extension = True
    report.warnings.append(
        f"the server's window of {window:,} tokens exceeds the model's trained window of {trained:,} and it "
        "reports no position scaling (RoPE/YaRN): lengths past the trained window measure extrapolation, and "
        "if accuracy collapses there, missing position scaling is the likely cause"
    )


async def run_preflight(provider: Provider, tokenizer: Tokenizer, spec: Spec) -> PreflightReport | None:
    if provider.preflight is None:
        return None  # in process: nothing to probe
    await provider.preflight()  # reachable? (one-line CtxprobeError otherwise) + the served window
    report = PreflightReport(endpoint=dict(provider.served_model_info or {}),
                             context_window=provider.context_window)
    _check_trained_window(provider, report)
    # through the model wrapper, like every other call: the spec's retries and rate limits hold
    client = ModelClient(provider, CallPolicy(concurrency=1, timeout=min(spec.timeout, 120.0), retries=spec.retries,
                                              requests_per_minute=spec.rpm, tokens_per_minute=spec.tpm))
    request = GenerateRequest(messages=PROBE_MESSAGES, max_tokens=24, temperature=spec.decoding.temperature,
                              seed=spec.decoding.seed)
    outcome = await client.call(request)
    first, error = outcome.result, outcome.error
    report.probe_requests += outcome.attempts
    if first is None:
        raise CtxprobeError(f"the probe request to {spec.model} failed ({error}); check the model name and server")
    report.counted_tokens = tokenizer.count_chat(PROBE_MESSAGES)
    report.reported_tokens = first.prompt_tokens
    if first.prompt_tokens is None:
        report.warnings.append("the server reports no prompt-token counts: silent truncation cannot be detected")
    elif first.prompt_tokens != report.counted_tokens:
        report.warnings.append(
            f"the server counts {first.prompt_tokens} prompt tokens where tokenizer {tokenizer.name} counts "
            f"{report.counted_tokens} for the same chat: case lengths will be off; name the model's own tokenizer "
            "with --tokenizer (or endpoint:URL to let the server count)"
        )
    for key in ("model", "system_fingerprint", "id"):
        if key in first.extra and key != "id":
            report.endpoint.setdefault(f"response_{key}", first.extra[key])
    if spec.decoding.temperature == 0:
        texts = {first.text}
        for _ in range(DETERMINISM_REPEATS):
            again = await client.call(request)
            report.probe_requests += again.attempts
            if again.result is not None:
                texts.add(again.result.text)
        report.deterministic = len(texts) == 1
        if not report.deterministic:
            report.warnings.append(
                f"non-deterministic serving: {len(texts)} different answers to the same prompt at temperature 0; "
                "differences between runs may be noise from the server, not the model"
            )
    await _probe_reasoning(client, request, spec, report)
    return report


async def _probe_reasoning(client: ModelClient, request: GenerateRequest, spec: Spec,
                           report: PreflightReport) -> None:
    """The probe at the sweep's smallest reasoning budget above 0 (if it has one): the
    controls that reached the model are recorded, a control the server refused is named."""
    budgets = [b for b in spec.reasoning_budgets or [] if b > 0]
    if not budgets:
        return
    outcome = await client.call(replace(request, reasoning_budget=min(budgets)))
    report.probe_requests += outcome.attempts
    if outcome.result is None:
        raise CtxprobeError(f"the probe request with a reasoning budget of {min(budgets):,} tokens to {spec.model} "
                            f"failed ({outcome.error}); check the model takes reasoning budgets")
    controls = outcome.result.extra.get("reasoning_controls")
    if isinstance(controls, str):
        report.endpoint["reasoning_controls"] = controls
    note = outcome.result.extra.get("reasoning_note")
    if isinstance(note, str):
        report.warnings.append(note)
