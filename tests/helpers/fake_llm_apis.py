"""Tiny loopback servers speaking just enough of the OpenAI, Anthropic and Gemini APIs.

The official SDKs are pointed at them through their ``base_url``; nothing is patched. The
behaviour of each request is chosen by the model name it asks for (``ok``, ``rate``,
``boom``, ``reason``, ``think``, ``cutoff``, ``auth``, ``bad``), so one server covers every
case. ``auth`` answers 401 echoing the key it received, like real "incorrect API key"
errors do, to prove the key never reaches an exception text.

Successful answers have the shape of each provider's published example response (the
fields, their nesting and types; the contract tests validate every body served with the
SDKs' own response models, tests/models/test_contract_responses.py):

- OpenAI: https://platform.openai.com/docs/api-reference/chat/create ("Response": a
  ``chat.completion`` with ``message.refusal``/``annotations``, ``logprobs``, the usage
  details and ``service_tier``);
- Anthropic: https://docs.anthropic.com/en/api/messages ("Response": a ``message`` whose
  usage has the input, output and cache token counts);
- Gemini: https://ai.google.dev/api/generate-content#v1beta.GenerateContentResponse
  (``candidates``, ``usageMetadata`` with ``promptTokensDetails``, ``modelVersion``,
  ``responseId``).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = tuple[int, dict[str, Any], dict[str, str]]


class FakeServer:
    """Serve ``route(method, path, headers, body) -> (status, json, headers)`` on 127.0.0.1:0."""

    def __init__(self, route: Callable[[str, str, dict[str, str], dict[str, Any]], Reply]) -> None:
        self.route = route
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        #: (path, status, body) of every answer, in order: the contract tests validate them
        self.responses: list[tuple[str, int, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body leave at once, not 40 ms apart (delayed ACK)

            def log_message(self, *args: Any) -> None:
                return None

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else {}
                headers = {k.lower(): v for k, v in self.headers.items()}
                outer.requests.append((self.path, headers, body))
                status, payload, extra = outer.route(method, self.path, headers, body)
                outer.responses.append((self.path, status, payload))
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802
                self._handle("POST")

            def do_GET(self) -> None:  # noqa: N802
                self._handle("GET")

            def do_PATCH(self) -> None:  # noqa: N802
                self._handle("PATCH")

            def do_DELETE(self) -> None:  # noqa: N802
                self._handle("DELETE")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _key_of(headers: dict[str, str]) -> str:
    return headers.get("x-api-key") or headers.get("x-goog-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


# -- OpenAI ---------------------------------------------------------------------------------

def responses_reply(model: str, text: str, *, status: str = "completed", reason: str | None = None,
                    reasoning_tokens: int = 0, cached: int = 0, summary: str | None = None) -> dict[str, Any]:
    """A ``Response`` as openai-python's ``openai.types.responses.Response`` declares it (its
    required fields: id, created_at, model, object, output, parallel_tool_calls, tool_choice,
    tools; usage with ``input_tokens_details.cached_tokens``/``cache_write_tokens`` and
    ``output_tokens_details.reasoning_tokens``), validated with it by the contract tests."""
    output: list[dict[str, Any]] = []
    if summary is not None:
        output.append({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": summary}]})
    if text:
        output.append({"type": "message", "id": "msg_1", "role": "assistant", "status": status,
                       "content": [{"type": "output_text", "text": text, "annotations": []}]})
    return {"id": "resp_1", "object": "response", "created_at": 1741569952, "model": model, "status": status,
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None,
            "incomplete_details": {"reason": reason} if reason else None, "instructions": None, "metadata": {},
            "usage": {"input_tokens": 21, "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
                      "output_tokens": 5 + reasoning_tokens,
                      "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
                      "total_tokens": 26 + reasoning_tokens}}


#: Models whose usage reports the tokens written to the cache (openai 3.60's
#: ``cache_write_tokens``; genai-prices bills those writes for gpt-5.6 and gpt-6).
WRITES_CACHE = re.compile(r"gpt-(5\.6|[6-9])")
#: ``incomplete_details.reason`` a model named ``incomplete-REASON`` answers with.
INCOMPLETE = re.compile(r"incomplete-(max_output_tokens|max_messages|content_filter|steered)")


def _written(model: str, body: Any) -> tuple[int, int]:
    """(prompt tokens, tokens written to the cache) of a model that reports writes: the
    prompt read roughly (4 characters a token), its 128-token prefix blocks past 1,024 written
    (automatic caching writes every long prompt's prefix); (21, 0) for the others."""
    if not WRITES_CACHE.match(model):
        return 21, 0
    tokens = 10 + len(json.dumps(body)) // 4
    return tokens, (tokens // 128) * 128 if tokens >= 1024 else 0


def _responses_route(body: dict[str, Any]) -> Reply:
    model = body.get("model", "")
    if model == "cutoff":  # thought until the cap: no answer, status incomplete
        return 200, responses_reply(model, "", status="incomplete", reason="max_output_tokens",
                                    reasoning_tokens=body.get("max_output_tokens", 64)), {}
    if (cut := INCOMPLETE.fullmatch(model)) is not None:
        return 200, responses_reply(model, "The code is", status="incomplete", reason=cut.group(1)), {}
    thought = 77 if body.get("reasoning") else 0
    cached = 1024 if body.get("prompt_cache_key") else 0
    reply = responses_reply(model, "The code is 4819203.", reasoning_tokens=thought, cached=cached,
                            summary="Looking for the key... 1111111 is a distractor." if thought else None)
    tokens, written = _written(model, body.get("input"))
    if written:
        reply["usage"]["input_tokens"] = tokens
        reply["usage"]["input_tokens_details"]["cache_write_tokens"] = written
        reply["usage"]["total_tokens"] = tokens + reply["usage"]["output_tokens"]
    return 200, reply, {}


def openai_route(method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply:
    model = body.get("model", "")
    if path.split("?")[0].endswith("/responses") and model not in ("rate", "boom", "auth", "bad"):
        return _responses_route(body)
    tokens, written = _written(model, body.get("messages"))
    usage: dict[str, Any] = {"prompt_tokens": tokens, "completion_tokens": 5, "total_tokens": tokens + 5,
                             "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0,
                                                       **({"cache_write_tokens": written} if written else {})}}

    def completion(content: str | None, finish: str, **message: Any) -> Reply:
        msg = {"role": "assistant", "content": content, "refusal": None, "annotations": [], **message}
        usage.setdefault("completion_tokens_details", {"reasoning_tokens": 0, "audio_tokens": 0,
                                                       "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0})
        return 200, {"id": "chatcmpl-1", "object": "chat.completion", "created": 1741569952, "model": model,
                     "choices": [{"index": 0, "message": msg, "logprobs": None, "finish_reason": finish}],
                     "usage": usage, "service_tier": "default"}, {}

    if model == "rate":
        return 429, {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}, {"retry-after": "7"}
    if model == "boom":
        return 500, {"error": {"message": "The server had an error", "type": "server_error"}}, {}
    if model == "auth":
        return 401, {"error": {"message": f"Incorrect API key provided: {_key_of(headers)}", "type": "invalid_request_error"}}, {}
    if model == "bad":
        return 400, {"error": {"message": "This model's maximum context length is 8192 tokens", "type": "invalid_request_error"}}, {}
    if model == "reason":
        return completion("The code is 4819203.", "stop", reasoning_content="Looking for the key... 1111111 is a distractor.")
    if model == "think":
        return completion("<think>the value might be 2222222</think>\nThe code is 4819203.", "stop")
    if model == "cutoff":
        usage["completion_tokens_details"] = {"reasoning_tokens": 64}
        return completion("", "length")
    if body.get("reasoning_effort") or body.get("chat_template_kwargs", {}).get("enable_thinking"):
        # a reasoning request: the tokens it thought are billed and reported, as OpenAI and vLLM do
        usage["completion_tokens_details"] = {"reasoning_tokens": 77}
    return completion("The code is 4819203.", "stop")


# -- Anthropic ------------------------------------------------------------------------------

#: The ``anthropic-version`` from which ``temperature``, ``top_p`` and ``top_k`` are a 400
#: (Anthropic's migration guide for 2026-10-21; the anthropic SDK from 2.0 sends it and its
#: ``MessageCreateParams`` no longer names them).
NO_SAMPLING_VERSION = "2026-10-21"
#: What the fake Models API states of a few models (``ModelInfo.capabilities``/``lifecycle``,
#: anthropic 2.17's types): thinking types as the issue reports them per model; any other
#: model is stated with no ``capabilities`` (an older API or a proxy), ``active``.
FAKE_CLAUDE: dict[str, dict[str, Any]] = {
    "claude-sonnet-5-5": {"thinking": {"adaptive": True, "enabled": False, "disabled": True}, "efforts": 5},
    "claude-fable-5": {"thinking": {"adaptive": True, "enabled": False, "disabled": False}, "efforts": 5},
    "claude-opus-4-1": {"thinking": {"adaptive": False, "enabled": True, "disabled": True}, "efforts": 0,
                        "lifecycle": "deprecated", "retires_at": "2027-02-15T00:00:00Z"},
    "claude-opus-4-0": {"thinking": {"adaptive": False, "enabled": False, "disabled": True}, "efforts": 0,
                             "lifecycle": "retired", "retires_at": "2026-01-05T00:00:00Z"},
}
#: Tokens the fake Claude thinks when asked to: a cap below it cuts the thinking.
FAKE_THINKING = 200


def _model_info(name: str) -> dict[str, Any]:
    """A ``ModelInfo`` as anthropic 2.17 declares it (capabilities with every key present)."""
    known = FAKE_CLAUDE.get(name)
    info: dict[str, Any] = {"id": name, "type": "model", "display_name": name, "created_at": "2026-04-16T00:00:00Z",
                            "lifecycle": "active", "max_input_tokens": FAKE_WINDOWS.get(name, 1_000_000),
                            "max_tokens": 128_000, "deprecated_at": None, "retires_at": None}
    if known is None:
        return info
    yes = {"supported": True}
    no = {"supported": False}
    levels = ("low", "medium", "high", "xhigh", "max")
    types = {k: {"supported": known["thinking"].get(k, False)} for k in ("adaptive", "enabled", "disabled")}
    types["between_tools"] = no
    info["capabilities"] = {
        "batch": yes, "citations": yes, "code_execution": no, "image_input": yes, "pdf_input": yes,
        "structured_outputs": yes, "context_management": {"supported": False},
        "server_tools": {"supported": False, "code_execution": no, "web_search": no},
        "effort": {"supported": bool(known["efforts"]),
                   **{lv: {"supported": i < known["efforts"]} for i, lv in enumerate(levels)}},
        "thinking": {"supported": any(known["thinking"].values()), "types": types}}
    if "lifecycle" in known:
        info.update(lifecycle=known["lifecycle"], retires_at=known["retires_at"], deprecated_at="2026-06-01T00:00:00Z")
    return info


def anthropic_route(method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply:
    model = body.get("model", "")
    got = re.fullmatch(r"/v1/models/([^/?]+)(\?.*)?", path)
    if method == "GET" and got:  # models.retrieve: anthropic's types.ModelInfo
        return 200, _model_info(got.group(1)), {}
    version = headers.get("anthropic-version", "")
    sampled = sorted(k for k in ("temperature", "top_p", "top_k") if k in body)
    if version >= NO_SAMPLING_VERSION and sampled:  # what the real API rejects under this version
        return 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                "message": f"{sampled[0]}: not supported under anthropic-version "
                                                           f"{version}"}}, {}
    if path.startswith("/v1/messages/count_tokens"):
        chars = sum(len(m["content"]) for m in body["messages"]) + len(body.get("system", ""))
        return 200, {"input_tokens": 10 + chars // 4}, {}
    thinking = (body.get("thinking") or {}).get("type") in ("adaptive", "enabled")
    cap = int(body.get("max_tokens") or 0)
    # the prompt's tokens, roughly (as count_tokens above), for the replies that think
    read = 10 + (len(json.dumps(body.get("messages"))) + len(json.dumps(body.get("system", "")))) // 4

    def message(blocks: list[dict[str, Any]], stop: str, thought: int = 0) -> Reply:
        return 200, {"id": "msg_013Zva2CMHLNnXjNJJKqJ2EF", "type": "message", "role": "assistant", "model": model,
                     "content": blocks, "stop_reason": stop, "stop_sequence": None,
                     "usage": {"input_tokens": 30, "output_tokens": 9 + thought, "cache_creation_input_tokens": 0,
                               "cache_read_input_tokens": 4, "service_tier": "standard",
                               "output_tokens_details": {"thinking_tokens": thought}}}, {}

    if model == "rate":
        return 429, {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}, {"retry-after": "3"}
    if model == "boom":
        return 529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, {}
    if model == "auth":
        return 401, {"type": "error", "error": {"type": "authentication_error", "message": f"invalid x-api-key {_key_of(headers)}"}}, {}
    if model == "bad":
        return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}}, {}
    if model == "reason":
        return message([{"type": "thinking", "thinking": "maybe 1111111?", "signature": "sig"},
                        {"type": "text", "text": "The code is 4819203."}], "end_turn", 12)
    if model == "cutoff":
        return message([{"type": "thinking", "thinking": "still thinking about", "signature": "sig"}], "max_tokens",
                       cap)
    if thinking and cap < FAKE_THINKING:  # thought until the cap; the text omitted, as Claude 5 does by default
        return 200, {"id": "msg_01cut", "type": "message", "role": "assistant", "model": model,
                     "content": [{"type": "thinking", "thinking": "", "signature": "sig"}], "stop_reason": "max_tokens",
                     "stop_sequence": None,
                     "usage": {"input_tokens": read, "output_tokens": cap, "cache_creation_input_tokens": 0,
                               "cache_read_input_tokens": 4, "output_tokens_details": {"thinking_tokens": cap}}}, {}
    if thinking:
        return message([{"type": "thinking", "thinking": "", "signature": "sig"},
                        {"type": "text", "text": "The code is 4819203."}], "end_turn", FAKE_THINKING - 20)
    return message([{"type": "text", "text": "The code is 4819203."}], "end_turn")


# -- Gemini ---------------------------------------------------------------------------------

#: The windows the fakes' model endpoints state (a model named ``tiny`` states 500 tokens).
FAKE_WINDOWS = {"tiny": 500}


def gemini_route(method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply:
    got = re.fullmatch(r"/v1(?:beta)?/models/([^/:?]+)(\?.*)?", path)
    if method == "GET" and got:  # models.get: google-genai's types.Model (inputTokenLimit, outputTokenLimit)
        name = got.group(1)
        # thinking: google-genai's Model.thinking; a model named "plain" states it does not think
        return 200, {"name": f"models/{name}", "displayName": name, "inputTokenLimit": FAKE_WINDOWS.get(name, 1_048_576),
                     "outputTokenLimit": 65_536, "thinking": name != "plain"}, {}
    match = re.search(r"/models/([^/:]+):(\w+)", path)
    model, action = (match.group(1), match.group(2)) if match else ("", "")
    if action == "countTokens":
        chars = sum(len(p.get("text", "")) for c in body.get("contents", []) for p in c.get("parts", []))
        return 200, {"totalTokens": 7 + chars // 4}, {}
    usage = {"promptTokenCount": 40, "candidatesTokenCount": 6, "thoughtsTokenCount": 12, "totalTokenCount": 58,
             "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 40}]}

    def answer(parts: list[dict[str, Any]], finish: str) -> Reply:
        return 200, {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}],
                     "usageMetadata": usage, "modelVersion": model, "responseId": "mXm7aKqdLcfJ1MkP8vGu4Qk"}, {}

    if model == "rate":
        return 429, {"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED",
                               "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "11s"}]}}, {}
    if model == "boom":
        return 503, {"error": {"code": 503, "message": "The model is overloaded", "status": "UNAVAILABLE"}}, {}
    if model == "auth":
        return 400, {"error": {"code": 400, "message": f"API key not valid: {_key_of(headers)}", "status": "INVALID_ARGUMENT"}}, {}
    if model == "reason":
        return answer([{"text": "hmm, 1111111 or", "thought": True}, {"text": "The code is 4819203."}], "STOP")
    if model == "cutoff":
        return answer([{"text": "thinking and thinking", "thought": True}], "MAX_TOKENS")
    if model == "hops":  # stops to be continued (FinishReason.CONTINUATION); the SDK sends the token back
        if "continuationToken" not in body:
            status, reply, extra = answer([{"text": "The code is"}], "CONTINUATION")
            reply["candidates"][0]["continuationToken"] = "aG9wLTE="  # base64 bytes, as the API sends them
            return status, reply, extra
        return answer([{"text": " 4819203."}], "STOP")
    return answer([{"text": "The code is 4819203."}], "STOP")
