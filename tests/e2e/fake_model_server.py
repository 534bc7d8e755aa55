"""A model server of our own on 127.0.0.1 for the real agent CLIs (tests/e2e/test_agent_clis.py).

It records every request (method, path, headers, JSON body) and answers in each vendor's
streaming wire format: the OpenAI Responses API (Codex), Gemini's ``:streamGenerateContent``
and Anthropic's ``/v1/messages`` (Claude Code). What it answers is decided from the request
alone, so one server serves any number of sessions:

- the conversation already carries a tool result: a short text answer (``MC-DONE``);
- the user's prompt contains ``MC-TOOL-SEARCH <word>``: a call of the memorycloud MCP
  ``search`` tool (its name is taken from the tools the CLI offered) with that word;
- anything else: a short text answer (``MC-OK``).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TOOL_MARKER = re.compile(r"MC-TOOL-SEARCH (\S+)")


def strings_in(value: Any) -> Iterable[str]:
    """Every string inside a decoded JSON value (keys excluded)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def request_text(body: Any) -> str:
    """All text of a request body, JSON escapes undone (what the model would read)."""
    return "\n".join(strings_in(body))


def tool_names(body: Any) -> list[tuple[str | None, str]]:
    """(namespace, name) of every tool a request offers, in every vendor's shape (Codex groups
    an MCP server's tools in a ``namespace`` tool named ``mcp__<server>``)."""
    names: list[tuple[str | None, str]] = []
    tools = body.get("tools") if isinstance(body, dict) else None
    for tool in tools or []:
        if not isinstance(tool, dict):
            continue
        for decl in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
            names.append((None, decl.get("name", "")))
        if tool.get("type") == "namespace":
            names += [
                (tool.get("name"), inner["name"])
                for inner in tool.get("tools") or []
                if isinstance(inner, dict) and isinstance(inner.get("name"), str)
            ]
        elif isinstance(tool.get("name"), str):
            names.append((None, tool["name"]))
    return names


def memorycloud_search_tool(body: Any) -> tuple[str | None, str] | None:
    """(namespace, name) under which the CLI offers our MCP ``search`` tool (None: not offered)."""
    names = tool_names(body)
    for namespace, name in names:
        full = f"{namespace or ''}{name}".lower()
        if "memorycloud" in full and name.lower().endswith("search"):
            return namespace, name
    return (None, "search") if (None, "search") in names else None


def has_tool_result(vendor: str, body: dict[str, Any]) -> bool:
    """Whether the conversation already holds the result of a tool call."""
    if vendor == "openai":
        return any(
            isinstance(i, dict) and i.get("type") in ("function_call_output", "custom_tool_call_output")
            for i in body.get("input") or []
        )
    if vendor == "gemini":
        return any(
            "functionResponse" in part
            for content in body.get("contents") or []
            for part in content.get("parts") or []
            if isinstance(part, dict)
        )
    return any(
        isinstance(block, dict) and block.get("type") == "tool_result"
        for message in body.get("messages") or []
        if isinstance(message.get("content"), list)
        for block in message["content"]
    )


def user_prompt_text(vendor: str, body: dict[str, Any]) -> str:
    """The text of the user turns only (the system prompt may quote our marker)."""
    if vendor == "openai":
        items = [i for i in body.get("input") or [] if isinstance(i, dict) and i.get("role") == "user"]
    elif vendor == "gemini":
        items = [c for c in body.get("contents") or [] if c.get("role") == "user"]
    else:
        items = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    return request_text(items)


def decide(vendor: str, body: dict[str, Any]) -> tuple[str, Any]:
    """("text", str) or ("tool", (namespace, name, arguments)) for this request."""
    if has_tool_result(vendor, body):
        return "text", "MC-DONE: the memorycloud tool answered."
    if "Do NOT call any tools" in request_text(body):  # Claude Code's /compact summary request
        return "text", "<analysis>short</analysis>\n<summary>MC-SUMMARY of the session.</summary>"
    match = TOOL_MARKER.search(user_prompt_text(vendor, body))
    tool = memorycloud_search_tool(body) if match else None
    if match and tool:
        return "tool", (tool[0], tool[1], {"query": match.group(1)})
    return "text", "MC-OK"


def sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def openai_stream(kind: str, payload: Any, model: str) -> list[bytes]:
    """A Responses API stream (the events codex-rs reads: created, output_item.done, completed)."""
    rid = f"resp_{int(time.time() * 1000)}"
    if kind == "tool":
        namespace, name, args = payload
        item = {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_mc_1",
            "name": name,
            "arguments": json.dumps(args),
            "status": "completed",
        }
        if namespace:
            item["namespace"] = namespace
    else:
        item = {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": payload, "annotations": []}],
        }
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    events = [
        sse(
            "response.created",
            {"type": "response.created", "response": {"id": rid, "model": model, "status": "in_progress"}},
        ),
        sse(
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": 0, "item": item},
        ),
    ]
    if kind == "text":
        events.append(
            sse(
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "item_id": "msg_1",
                    "output_index": 0,
                    "content_index": 0,
                    "delta": payload,
                },
            )
        )
    events += [
        sse(
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": item},
        ),
        sse(
            "response.completed",
            {
                "type": "response.completed",
                "response": {
                    "id": rid,
                    "model": model,
                    "status": "completed",
                    "output": [item],
                    "usage": usage,
                },
            },
        ),
    ]
    return events


def schema_example(schema: Any) -> Any:
    """A small value that satisfies a (Gemini-style) JSON schema: the CLI's side questions
    (model routing, loop checks) ask for JSON and retry for a long time on anything else."""
    if not isinstance(schema, dict):
        return {}
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {key: schema_example(props[key]) for key in schema.get("required") or props}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return max(1, int(schema.get("minimum", 1)))
    if kind == "boolean":
        return False
    return "fake"


def gemini_json_answer(body: dict[str, Any]) -> str | None:
    """The JSON text for a request that asks for JSON (None: an ordinary request)."""
    config = body.get("generationConfig") or {}
    if config.get("responseMimeType") != "application/json":
        return None
    return json.dumps(schema_example(config.get("responseJsonSchema") or config.get("responseSchema")))


def gemini_response(kind: str, payload: Any) -> dict[str, Any]:
    part = {"functionCall": {"name": payload[1], "args": payload[2]}} if kind == "tool" else {"text": payload}
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-2.5-pro",
    }


def anthropic_blocks(kind: str, payload: Any) -> list[dict[str, Any]]:
    if kind == "tool":
        return [{"type": "tool_use", "id": "toolu_mc_1", "name": payload[1], "input": payload[2]}]
    return [{"type": "text", "text": payload}]


def anthropic_stream(kind: str, payload: Any, model: str) -> list[bytes]:
    """A Messages API stream: message_start, one content block, message_delta, message_stop."""
    block = anthropic_blocks(kind, payload)[0]
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    message = {
        "id": f"msg_{int(time.time() * 1000)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    start = dict(block, input={}) if kind == "tool" else dict(block, text="")
    delta = (
        {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        if kind == "tool"
        else {"type": "text_delta", "text": block["text"]}
    )
    return [
        sse("message_start", {"type": "message_start", "message": message}),
        sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
        sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "usage": {"output_tokens": 5},
                "delta": {"stop_reason": "tool_use" if kind == "tool" else "end_turn", "stop_sequence": None},
            },
        ),
        sse("message_stop", {"type": "message_stop"}),
    ]


class Handler(BaseHTTPRequestHandler):
    server: ModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # the record file is the log
        pass

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return {"_raw": raw.decode("utf-8", "replace")}

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, chunks: list[bytes]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")  # close-delimited: every client reads that
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(chunk)
            self.wfile.flush()
        self.close_connection = True

    def _json(self, data: Any, status: int = 200) -> None:
        self._send(status, json.dumps(data).encode())

    def do_GET(self) -> None:
        self.server.record(self, None)
        if self.path.rstrip("/").endswith("/models"):
            return self._json({"data": [], "models": []})
        self._json(
            {"error": {"type": "not_found_error", "message": f"fake model server: no {self.path}"}}, 404
        )

    def do_POST(self) -> None:
        body = self._body()
        self.server.record(self, body)
        path = self.path.split("?")[0]
        data = body if isinstance(body, dict) else {}
        model = str(data.get("model") or "fake-model")
        if path.endswith("/responses"):
            kind, payload = decide("openai", data)
            return self._stream(openai_stream(kind, payload, model))
        if ":streamGenerateContent" in path:
            kind, payload = decide("gemini", data)
            return self._stream([f"data: {json.dumps(gemini_response(kind, payload))}\r\n\r\n".encode()])
        if ":generateContent" in path:
            answer = gemini_json_answer(data)
            kind, payload = ("text", answer) if answer is not None else decide("gemini", data)
            return self._json(gemini_response(kind, payload))
        if ":countTokens" in path:
            return self._json({"totalTokens": len(request_text(data)) // 4})
        if path.endswith("/v1/messages/count_tokens"):
            return self._json({"input_tokens": len(request_text(data)) // 4})
        if path.endswith("/v1/messages"):
            kind, payload = decide("anthropic", data)
            if data.get("stream"):
                return self._stream(anthropic_stream(kind, payload, model))
            return self._json(
                {
                    "id": "msg_mc",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": anthropic_blocks(kind, payload),
                    "stop_reason": "tool_use" if kind == "tool" else "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                }
            )
        self._json({"error": {"type": "not_found_error", "message": f"fake model server: no {path}"}}, 404)


class ModelServer(ThreadingHTTPServer):
    """The server; ``requests`` holds every request received, in order."""

    daemon_threads = True

    def __init__(self, record_path: Path | None = None, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.requests: list[dict[str, Any]] = []
        self.record_path = record_path
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def record(self, handler: Handler, body: Any) -> None:
        entry = {
            "time": time.time(),
            "method": handler.command,
            "path": handler.path,
            "headers": dict(handler.headers.items()),
            "body": body,
        }
        with self._lock:
            self.requests.append(entry)
            if self.record_path is not None:
                with self.record_path.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def start(self) -> ModelServer:
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def mark(self) -> int:
        """The number of requests so far (to slice out one session's requests later)."""
        with self._lock:
            return len(self.requests)

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
