"""A local fake of an OpenAI-compatible chat-completions server, for offline end-to-end tests.

It listens on 127.0.0.1 on a random port, answers ``POST /v1/chat/completions`` from a script
of replies (one per request), records every request body, and stops by itself after
``lifetime_s`` seconds even if a test forgets to stop it.

Replies:
- ``ToolCall(type_name, arguments)``: calls the request's output tool whose name ends with
  ``_<type_name>`` (or the only one) - as a model choosing its structured output;
- ``RawToolCall(type_name, arguments_text)``: the same with arguments sent verbatim (e.g. bad
  JSON);
- ``Status(code, body, headers)``: an HTTP error such as a 429 with ``retry-after-ms``;
- ``RawBody(text)``: a 200 response with this body (e.g. malformed JSON);
- ``Slow(seconds, then)``: waits, then answers ``then`` (to trip the client's timeout).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    type_name: str
    arguments: dict[str, Any]
    usage: dict[str, int] | None = field(
        default_factory=lambda: {"prompt_tokens": 321, "completion_tokens": 45,
                                 "total_tokens": 366})


@dataclass(frozen=True)
class RawToolCall:
    type_name: str
    arguments_text: str


@dataclass(frozen=True)
class Status:
    code: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RawBody:
    text: str


@dataclass(frozen=True)
class Slow:
    seconds: float
    then: ToolCall


Reply = ToolCall | RawToolCall | Status | RawBody | Slow


def _pick_tool(request: dict[str, Any], type_name: str) -> str:
    names = [tool["function"]["name"] for tool in request.get("tools", [])]
    for name in names:
        if name.endswith(f"_{type_name}") or name == type_name:
            return name
    if len(names) == 1:
        return names[0]
    raise AssertionError(f"no tool for {type_name} in {names}")


def _completion(request: dict[str, Any], tool_name: str, arguments: str,
                usage: dict[str, int] | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": request.get("model", "fake"),
        "choices": [{
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"call_{tool_name}", "type": "function",
                                "function": {"name": tool_name, "arguments": arguments}}],
            },
        }],
    }
    if usage is not None:
        body["usage"] = usage
    return body


class FakeChatServer:
    """The server; use as a context manager.

    ``requests`` holds every parsed request body, ``headers`` each request's headers.
    """

    def __init__(self, replies: list[Reply], *, lifetime_s: float = 60.0) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                request = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(request)
                    server.paths.append(self.path)
                    server.headers.append(dict(self.headers.items()))
                    reply = server.replies.pop(0) if server.replies else Status(
                        500, {"error": {"message": "fake server: script exhausted"}})
                if isinstance(reply, Slow):
                    time.sleep(reply.seconds)
                    reply = reply.then
                if not self.path.endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": "not found"}}), {})
                elif isinstance(reply, Status):
                    self._send(reply.code, json.dumps(reply.body), reply.headers)
                elif isinstance(reply, RawBody):
                    self._send(200, reply.text, {})
                elif isinstance(reply, RawToolCall):
                    tool = _pick_tool(request, reply.type_name)
                    self._send(200, json.dumps(_completion(request, tool, reply.arguments_text,
                                                           None)), {})
                else:
                    tool = _pick_tool(request, reply.type_name)
                    self._send(200, json.dumps(_completion(
                        request, tool, json.dumps(reply.arguments), reply.usage)), {})

            def _send(self, code: int, text: str, headers: dict[str, str]) -> None:
                data = text.encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._watchdog = threading.Timer(lifetime_s, self.stop)
        self._watchdog.daemon = True

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> FakeChatServer:
        self._thread.start()
        self._watchdog.start()
        return self

    def stop(self) -> None:
        self._watchdog.cancel()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
