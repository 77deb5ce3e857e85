"""Loopback servers speaking the batch wire protocols of OpenAI, Anthropic and Gemini.

The official SDKs are pointed at them through their base URLs; nothing is patched.

- OpenAI: ``POST /v1/files`` (multipart, purpose ``batch``), ``POST /v1/batches``,
  ``GET /v1/batches/{id}``, ``GET /v1/batches``, ``POST /v1/batches/{id}/cancel``,
  ``GET /v1/files/{id}/content`` (output and error JSONL files), ``DELETE /v1/files/{id}``
  (recorded in ``deleted``; with ``refuse_delete`` set, answered 400 echoing the key).
- Anthropic: ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}`` (its
  ``results_url`` once ended), ``GET …/results`` (JSONL), ``POST …/cancel``, list.
- Gemini: ``POST /v1beta/models/{m}:batchGenerateContent`` (an operation named
  ``batches/…``), ``GET /v1beta/batches/{id}``, ``POST /v1beta/batches/{id}:cancel``, list
  (the SDK says ``v1`` instead of ``v1beta`` when given a base URL: both are served).

Answers come from ``sim:perfect`` reading the prompt it is sent (never the answer key).
What each request gets is chosen by ``policy(times this prompt was seen, index in its
batch)``: ``ok``, ``length`` (cut short), ``refusal``, ``short_prompt`` (the server read
fewer tokens: input truncation), ``transient`` / ``permanent`` (an error), ``expired``.
A batch stays in progress while ``hold`` is set; the batches numbered in ``expire`` (1 =
the first created) expire whole. ``calls`` counts each operation; ``answered`` counts answers per prompt.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest
from ctxprobe.tokenizers import resolve_tokenizer

Policy = Callable[[int, int], str]
Raw = tuple[int, bytes, str]  # status, body, content type

SIM = resolve_provider("sim:perfect", resolve_tokenizer("local"))


def _json(status: int, obj: Any) -> Raw:
    return status, json.dumps(obj).encode(), "application/json"


def _text(content: Any) -> str:
    """A Messages API content: a string, or text blocks (cut at cache breakpoints) joined."""
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def _jsonl(lines: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


class BatchFake:
    """One provider's batch API on 127.0.0.1 (subclasses route the wire protocol)."""

    suffix = ""  # what the SDK's base URL ends with

    def __init__(self, policy: Policy | None = None) -> None:
        self.policy: Policy = policy or (lambda seen, i: "ok")
        self.hold = threading.Event()  # set: batches stay in progress
        self.expire: set[int] = set()  # batches (1 = the first created) that expire whole
        self.calls: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()  # prompt text -> answers generated
        self.seen: Counter[str] = Counter()
        self.batches: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.keys: list[str] = []
        #: (method, path, raw body) of every request, in order: the contract tests read them
        self.bodies: list[tuple[str, str, bytes]] = []
        #: (method, path, headers lower-cased) of every request, in the same order
        self.headers: list[tuple[str, str, dict[str, str]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body leave at once, not 40 ms apart (delayed ACK)

            def log_message(self, *args: Any) -> None:
                return None

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                outer.keys.append(headers.get("x-api-key") or headers.get("x-goog-api-key")
                                  or headers.get("authorization", ""))
                with outer.lock:
                    outer.bodies.append((method, self.path, raw))
                    outer.headers.append((method, self.path, headers))
                    status, data, ctype = outer.route(method, self.path, headers, raw)
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802
                self._handle("POST")

            def do_GET(self) -> None:  # noqa: N802
                self._handle("GET")

            def do_DELETE(self) -> None:  # noqa: N802
                self._handle("DELETE")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> BatchFake:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def route(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Raw:
        raise NotImplementedError

    # what a request gets --------------------------------------------------------------------
    def decide(self, messages: list[dict[str, str]], index: int) -> str:
        prompt = json.dumps(messages)
        self.seen[prompt] += 1
        return self.policy(self.seen[prompt], index)

    def failure(self, kind: str) -> str:
        """An item's error message; a permanent one echoes the key it was sent with, as
        "invalid key" errors do (it must never reach the store)."""
        key = self.keys[-1].removeprefix("Bearer ") if self.keys else ""
        return f"{kind} failure" + (f" for the request made with key {key}" if kind == "permanent" else "")

    def answer(self, messages: list[dict[str, str]], max_tokens: int, kind: str) -> tuple[str, str, int, int]:
        """(text, finish: stop|length|refusal, prompt tokens, output tokens) for ``kind``."""
        self.answered[json.dumps(messages)] += 1
        result = asyncio.run(SIM.generate(GenerateRequest(messages=messages, max_tokens=max_tokens)))
        prompt_tokens = result.prompt_tokens or 0
        if kind == "length":
            return "The special magic", "length", prompt_tokens, max_tokens
        if kind == "refusal":
            return "I'm sorry, I can't help with that.", "stop", prompt_tokens, 9
        if kind == "short_prompt":
            return result.text, "stop", prompt_tokens // 3, result.completion_tokens or 1
        return result.text, "stop", prompt_tokens, result.completion_tokens or 1

    def ended(self, batch: dict[str, Any]) -> bool:
        """Move a batch on by one poll; True once it has ended."""
        if batch["state"] == "cancelling":
            batch["state"] = "cancelled"
        elif batch["state"] == "in_progress" and not self.hold.is_set():
            batch["state"] = "expired" if list(self.batches.values()).index(batch) + 1 in self.expire else "completed"
        elif batch["state"] == "validating":
            batch["state"] = "in_progress"
        return batch["state"] in ("completed", "expired", "cancelled")


# -- OpenAI -----------------------------------------------------------------------------------

def _multipart(headers: dict[str, str], raw: bytes) -> dict[str, tuple[str | None, bytes]]:
    boundary = re.search(r"boundary=\"?([^\";]+)", headers.get("content-type", ""))
    assert boundary, "files.create must send multipart/form-data"
    parts: dict[str, tuple[str | None, bytes]] = {}
    for part in raw.split(b"--" + boundary.group(1).encode()):
        head, sep, body = part.partition(b"\r\n\r\n")
        name = re.search(rb'name="([^"]+)"', head)
        if not sep or not name:
            continue
        filename = re.search(rb'filename="([^"]*)"', head)
        parts[name.group(1).decode()] = (filename.group(1).decode() if filename else None, body.removesuffix(b"\r\n"))
    return parts


class OpenAIBatchFake(BatchFake):
    suffix = "/v1"

    def __init__(self, policy: Policy | None = None) -> None:
        super().__init__(policy)
        self.files: dict[str, tuple[str, bytes]] = {}  # id -> (purpose, bytes); deleted ones leave
        self.made: list[str] = []  # every file id ever created, in order
        self.deleted: list[str] = []  # file ids deleted through DELETE /v1/files/{id}, in order
        self.refuse_delete = False  # True: every delete is answered 400 (its message echoing the key)

    def _file(self, purpose: str, data: bytes, name: str) -> dict[str, Any]:
        fid = f"file-{len(self.made) + 1}"
        self.made.append(fid)
        self.files[fid] = (purpose, data)
        return {"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                "filename": name, "purpose": purpose, "status": "processed"}

    def _view(self, b: dict[str, Any]) -> dict[str, Any]:
        n = len(b["lines"])
        done = n if b["state"] in ("completed", "expired", "cancelled") else 0
        failed = len(b.get("errors", []))
        return {"id": b["id"], "object": "batch", "endpoint": b["endpoint"], "errors": None,
                "input_file_id": b["input_file_id"], "completion_window": "24h", "status": b["state"],
                "output_file_id": b.get("output_file_id"), "error_file_id": b.get("error_file_id"),
                "created_at": 1, "metadata": b["metadata"],
                "request_counts": {"total": n, "completed": done - failed if done else 0, "failed": failed}}

    def route(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Raw:
        if method == "POST" and path == "/v1/files":
            self.calls["upload"] += 1
            parts = _multipart(headers, raw)
            purpose = parts["purpose"][1].decode()
            name, data = parts["file"]
            if purpose != "batch":
                return _json(400, {"error": {"message": "purpose must be batch", "type": "invalid_request_error"}})
            return _json(200, self._file(purpose, data, name or "upload.jsonl"))
        if method == "POST" and path == "/v1/batches":
            self.calls["create"] += 1
            body = json.loads(raw)
            purpose, data = self.files[body["input_file_id"]]
            lines = [json.loads(x) for x in data.decode().splitlines() if x.strip()]
            assert body["endpoint"] in ("/v1/chat/completions", "/v1/responses") and body["completion_window"] == "24h"
            assert all(x["url"] == body["endpoint"] and x["method"] == "POST" for x in lines)
            assert len({x["custom_id"] for x in lines}) == len(lines), "custom ids must be unique"
            bid = f"batch_{len(self.batches) + 1}"
            self.batches[bid] = {"id": bid, "endpoint": body["endpoint"], "input_file_id": body["input_file_id"],
                                 "metadata": body.get("metadata"), "lines": lines, "state": "validating"}
            return _json(200, self._view(self.batches[bid]))
        if method == "GET" and path.startswith("/v1/batches?") or path == "/v1/batches":
            self.calls["list"] += 1
            data = [self._view(b) for b in reversed(self.batches.values())]
            return _json(200, {"object": "list", "data": data, "has_more": False,
                               "first_id": data[0]["id"] if data else None, "last_id": data[-1]["id"] if data else None})
        m = re.fullmatch(r"/v1/batches/([^/]+)(/cancel)?", path)
        if m:
            b = self.batches.get(m.group(1))
            if b is None:
                return _json(404, {"error": {"message": "No batch found", "type": "invalid_request_error"}})
            if m.group(2):
                self.calls["cancel"] += 1
                if b["state"] in ("validating", "in_progress"):
                    b["state"] = "cancelling"
                return _json(200, self._view(b))
            self.calls["retrieve"] += 1
            if "output_file_id" not in b and self.ended(b):
                self._finish(b)
            return _json(200, self._view(b))
        m = re.fullmatch(r"/v1/files/([^/]+)/content", path)
        if m:
            self.calls["download"] += 1
            if m.group(1) not in self.files:
                return _json(404, {"error": {"message": "No such File object", "type": "invalid_request_error"}})
            return 200, self.files[m.group(1)][1], "application/octet-stream"
        m = re.fullmatch(r"/v1/files/([^/]+)", path)
        if m and method == "DELETE":
            self.calls["delete"] += 1
            if self.refuse_delete:
                return _json(400, {"error": {"message": self.failure("permanent"), "type": "invalid_request_error"}})
            if self.files.pop(m.group(1), None) is None:
                return _json(404, {"error": {"message": "No such File object", "type": "invalid_request_error"}})
            self.deleted.append(m.group(1))
            return _json(200, {"id": m.group(1), "object": "file", "deleted": True})
        return _json(404, {"error": {"message": f"no route {method} {path}"}})

    def _finish(self, b: dict[str, Any]) -> None:
        out: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for i, line in enumerate(b["lines"]):
            cid, body = line["custom_id"], line["body"]
            if b["state"] != "completed":
                code = "batch_expired" if b["state"] == "expired" else "batch_cancelled"
                errors.append({"id": f"req_{i}", "custom_id": cid, "response": None,
                               "error": {"code": code, "message": f"request not run: {code}"}})
                continue
            responses = b["endpoint"] == "/v1/responses"
            messages = body["input"] if responses else body["messages"]
            kind = self.decide(messages, i)
            if kind in ("transient", "permanent", "expired"):
                status, etype = {"transient": (500, "server_error"), "permanent": (400, "invalid_request_error"),
                                 "expired": (None, "batch_expired")}[kind]
                errors.append({"id": f"req_{i}", "custom_id": cid,
                               "response": {"status_code": status, "request_id": f"r{i}",
                                            "body": {"error": {"message": self.failure(kind), "type": etype}}}
                               if status else None,
                               "error": None if status else {"code": etype, "message": "expired"}})
                continue
            cap = body.get("max_output_tokens") if responses else body.get("max_tokens")
            text, finish, p, c = self.answer(messages, cap or 48, kind)
            if responses:  # a Response, as openai-python's types.responses.Response declares it
                from fake_llm_apis import responses_reply

                reply = responses_reply(body["model"], text, status="completed" if finish == "stop" else "incomplete",
                                        reason=None if finish == "stop" else "max_output_tokens")
                reply["usage"].update(input_tokens=p, output_tokens=c, total_tokens=p + c)
                out.append({"id": f"req_{i}", "custom_id": cid, "error": None,
                            "response": {"status_code": 200, "request_id": f"r{i}", "body": reply}})
                continue
            message: dict[str, Any] = {"role": "assistant", "content": text}
            out.append({"id": f"req_{i}", "custom_id": cid, "error": None, "response": {
                "status_code": 200, "request_id": f"r{i}",
                "body": {"id": f"chatcmpl-{i}", "object": "chat.completion", "created": 0, "model": body["model"],
                         "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                         "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}}}})
        b["errors"] = errors
        b["output_file_id"] = self._file("batch_output", _jsonl(out), "out.jsonl")["id"] if out else None
        b["error_file_id"] = self._file("batch_output", _jsonl(errors), "err.jsonl")["id"] if errors else None


# -- Anthropic --------------------------------------------------------------------------------

class AnthropicBatchFake(BatchFake):
    def _view(self, b: dict[str, Any]) -> dict[str, Any]:
        ended = b["state"] in ("completed", "expired", "cancelled")
        counts = Counter(r["result"]["type"] for r in b.get("results", []))
        status = "ended" if ended else "canceling" if b["state"] == "cancelling" else "in_progress"
        return {"id": b["id"], "type": "message_batch", "processing_status": status,
                "request_counts": {"processing": 0 if ended else len(b["requests"]), "succeeded": counts["succeeded"],
                                   "errored": counts["errored"], "canceled": counts["canceled"],
                                   "expired": counts["expired"]},
                "created_at": "2026-12-01T00:00:00Z", "expires_at": "2026-12-02T00:00:00Z",
                "ended_at": "2026-12-01T01:00:00Z" if ended else None, "archived_at": None,
                "cancel_initiated_at": "2026-12-01T00:30:00Z" if b.get("cancelled") else None,
                "results_url": f"{self.url}/v1/messages/batches/{b['id']}/results" if ended else None}

    def route(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Raw:
        if method == "POST" and path == "/v1/messages/batches":
            self.calls["create"] += 1
            requests = json.loads(raw)["requests"]
            for r in requests:
                assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", r["custom_id"]), r["custom_id"]
                assert {"model", "max_tokens", "messages"} <= set(r["params"])
            assert len({r["custom_id"] for r in requests}) == len(requests)
            bid = f"msgbatch_{len(self.batches) + 1:04d}"
            self.batches[bid] = {"id": bid, "requests": requests, "state": "in_progress"}
            return _json(200, self._view(self.batches[bid]))
        if method == "GET" and path.split("?")[0] == "/v1/messages/batches":
            self.calls["list"] += 1
            data = [self._view(b) for b in self.batches.values()]
            return _json(200, {"data": data, "has_more": False, "first_id": None, "last_id": None})
        m = re.fullmatch(r"/v1/messages/batches/([^/]+)(/cancel|/results)?", path)
        if not m or m.group(1) not in self.batches:
            return _json(404, {"type": "error", "error": {"type": "not_found_error", "message": "no such batch"}})
        b = self.batches[m.group(1)]
        if m.group(2) == "/cancel":
            self.calls["cancel"] += 1
            b["cancelled"] = True
            if b["state"] == "in_progress":
                b["state"] = "cancelling"
            return _json(200, self._view(b))
        if m.group(2) == "/results":
            self.calls["results"] += 1
            return 200, _jsonl(b["results"]), "application/binary"
        self.calls["retrieve"] += 1
        if "results" not in b and self.ended(b):
            self._finish(b)
        return _json(200, self._view(b))

    def _finish(self, b: dict[str, Any]) -> None:
        results = []
        for i, r in enumerate(b["requests"]):
            cid, params = r["custom_id"], r["params"]
            if b["state"] != "completed":
                results.append({"custom_id": cid, "result": {"type": "expired" if b["state"] == "expired" else "canceled"}})
                continue
            messages = [{"role": m["role"], "content": _text(m["content"])} for m in
                        ([{"role": "system", "content": params["system"]}] if params.get("system") else [])
                        + params["messages"]]
            kind = self.decide(messages, i)
            if kind in ("transient", "permanent"):
                etype = "overloaded_error" if kind == "transient" else "invalid_request_error"
                results.append({"custom_id": cid, "result": {"type": "errored", "error": {
                    "type": "error", "error": {"type": etype, "message": self.failure(kind)}}}})
                continue
            if kind == "expired":
                results.append({"custom_id": cid, "result": {"type": "expired"}})
                continue
            text, finish, p, c = self.answer(messages, params["max_tokens"], kind)
            stop = {"stop": "end_turn", "length": "max_tokens"}[finish]
            results.append({"custom_id": cid, "result": {"type": "succeeded", "message": {
                "id": f"msg_{i}", "type": "message", "role": "assistant", "model": params["model"],
                "content": [{"type": "text", "text": text}], "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": p, "output_tokens": c}}}})
        b["results"] = results


# -- Gemini -----------------------------------------------------------------------------------

STATES = {"validating": "BATCH_STATE_PENDING", "in_progress": "BATCH_STATE_RUNNING", "cancelling": "BATCH_STATE_RUNNING",
          "completed": "BATCH_STATE_SUCCEEDED", "expired": "BATCH_STATE_EXPIRED", "cancelled": "BATCH_STATE_CANCELLED"}


class GeminiBatchFake(BatchFake):
    def _view(self, b: dict[str, Any]) -> dict[str, Any]:
        meta: dict[str, Any] = {"@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
                                "model": b["model"], "displayName": b["display_name"], "state": STATES[b["state"]],
                                "createTime": "2026-12-01T00:00:00Z", "updateTime": "2026-12-01T00:00:00Z",
                                "batchStats": {"requestCount": str(len(b["requests"]))}}
        op: dict[str, Any] = {"name": b["name"], "metadata": meta, "done": "responses" in b}
        if b.get("responses") is not None:
            out = {"inlinedResponses": {"inlinedResponses": b["responses"]}}
            meta["output"] = out
            op["response"] = {"@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput",
                              **out}
        return op

    def route(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Raw:
        path = re.sub(r"^/v1(beta)?/", "/", path)  # the SDK's API version (v1beta; v1 with a custom base URL)
        m = re.fullmatch(r"/models/([^/:]+):batchGenerateContent", path)
        if method == "POST" and m:
            self.calls["create"] += 1
            batch = json.loads(raw)["batch"]
            requests = batch["inputConfig"]["requests"]["requests"]
            assert all("contents" in r["request"] for r in requests)
            name = f"batches/b{len(self.batches) + 1}"
            self.batches[name] = {"name": name, "model": f"models/{m.group(1)}", "requests": requests,
                                  "display_name": batch.get("displayName"), "state": "validating"}
            return _json(200, self._view(self.batches[name]))
        if method == "GET" and path.split("?")[0] == "/batches":
            self.calls["list"] += 1
            return _json(200, {"operations": [self._view(b) for b in self.batches.values()]})
        m = re.fullmatch(r"/(batches/[^/:]+)(:cancel)?", path.split("?")[0])
        if not m or m.group(1) not in self.batches:
            return _json(404, {"error": {"code": 404, "message": "batch not found", "status": "NOT_FOUND"}})
        b = self.batches[m.group(1)]
        if m.group(2):
            self.calls["cancel"] += 1
            if b["state"] in ("validating", "in_progress"):
                b["state"] = "cancelling"
            return _json(200, {})
        self.calls["retrieve"] += 1
        if "responses" not in b and self.ended(b):
            self._finish(b)
        return _json(200, self._view(b))

    def _finish(self, b: dict[str, Any]) -> None:
        if b["state"] != "completed":
            b["responses"] = None  # an expired or cancelled job has no output
            return
        responses = []
        for i, r in enumerate(b["requests"]):
            req, meta = r["request"], r.get("metadata")
            system = "".join(p["text"] for p in (req.get("systemInstruction") or {}).get("parts", []))
            messages = ([{"role": "system", "content": system}] if system else []) + [
                {"role": "assistant" if c["role"] == "model" else "user", "content": "".join(p["text"] for p in c["parts"])}
                for c in req["contents"]]
            kind = self.decide(messages, i)
            if kind in ("transient", "permanent", "expired"):
                # an item's error is a google.rpc.Status: its code a google.rpc.Code, not an HTTP
                # status (https://ai.google.dev/api/batch-mode#InlinedResponse, "error": Status;
                # https://github.com/googleapis/googleapis/blob/master/google/rpc/code.proto)
                code, status = {"transient": (14, "UNAVAILABLE"), "permanent": (3, "INVALID_ARGUMENT"),
                                "expired": (4, "DEADLINE_EXCEEDED")}[kind]
                responses.append({"error": {"code": code, "message": f"{status}: {self.failure(kind)}"},
                                  "metadata": meta})
                continue
            config = req.get("generationConfig") or {}
            text, finish, p, c = self.answer(messages, config.get("maxOutputTokens") or 48, kind)
            responses.append({"metadata": meta, "response": {
                "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "index": 0,
                                "finishReason": {"stop": "STOP", "length": "MAX_TOKENS"}[finish]}],
                "usageMetadata": {"promptTokenCount": p, "candidatesTokenCount": c, "totalTokenCount": p + c},
                "modelVersion": b["model"]}})
        b["responses"] = responses


FAKES: dict[str, tuple[type[BatchFake], str, str]] = {
    # provider: (fake, key variable, base-url variable)
    "openai": (OpenAIBatchFake, "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "anthropic": (AnthropicBatchFake, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    "gemini": (GeminiBatchFake, "GEMINI_API_KEY", "GEMINI_BASE_URL"),
}
