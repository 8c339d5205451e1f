"""A local fake OpenAI-compatible chat server for tests of the LLM path.

Real HTTP on 127.0.0.1 (stdlib `ThreadingHTTPServer`), so the client under test
(litellm and the OpenAI SDK inside it) runs unchanged. Responses come from a
queue of scripted steps, or from a `responder` callable; an empty queue answers
a plain text "ok".

    with FakeLLM() as fake:
        fake.enqueue_tool_calls([{"name": "list_invitations", "arguments": {}}])
        fake.enqueue_text("Done.")
        ...  # model="openai/fake", api_base=fake.url, api_key="sk-local"
        assert fake.requests[0]["temperature"] == 0
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

__all__ = ["FakeLLM", "Step", "fake_llm"]


@dataclass
class Step:
    """One scripted answer: a status, a body (dict is sent as JSON), extra response
    headers (e.g. Retry-After) and a delay first."""

    status: int = 200
    body: dict[str, Any] | str = field(default_factory=dict)
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


Responder = Callable[[dict[str, Any]], "Step | dict[str, Any] | str"]
"""Maps a request body to a Step, a response dict (status 200) or plain reply text."""


class FakeLLM:
    """A scripted OpenAI-compatible server: POST /v1/chat/completions."""

    def __init__(self, responder: Responder | None = None, model: str = "fake") -> None:
        self.responder = responder
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.request_times: list[float] = []  # time.monotonic() of each request
        self._queue: deque[Step] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------

    def start(self) -> FakeLLM:
        if self._server is not None:
            return self
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                try:
                    request = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "request body is not JSON"}})
                    return
                step = fake._next(request)
                if step.delay:
                    time.sleep(step.delay)
                self._send(step.status, step.body, step.headers)

            def _send(
                self,
                status: int,
                body: dict[str, Any] | str,
                headers: dict[str, str] | None = None,
            ) -> None:
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    # No keep-alive: litellm caches a client per server, and a kept
                    # connection would hold a socket on each side after the test.
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): nothing to answer

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeLLM is not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The api_base to give the client: http://127.0.0.1:PORT/v1."""
        return f"http://127.0.0.1:{self.port}/v1"

    # --- scripting ------------------------------------------------------------

    def enqueue(self, step: Step) -> None:
        with self._lock:
            self._queue.append(step)

    def enqueue_text(self, text: str) -> None:
        """A plain assistant reply."""
        self.enqueue(Step(body=self.completion(content=text)))

    def enqueue_tool_calls(self, calls: list[dict[str, Any]], text: str | None = None) -> None:
        """An assistant turn with tool calls: [{"name": ..., "arguments": dict or raw str}]."""
        self.enqueue(Step(body=self.completion(content=text, tool_calls=calls)))

    def enqueue_status(
        self,
        code: int,
        body: dict[str, Any] | str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """An HTTP error (429, 500, ...) with an OpenAI-style error body by default;
        `headers` adds response headers, e.g. {"Retry-After": "1"}."""
        if body is None:
            body = {"error": {"message": f"fake error {code}", "type": "server_error"}}
        self.enqueue(Step(status=code, body=body, headers=dict(headers or {})))

    def enqueue_delay(self, seconds: float, then: str | dict[str, Any] | None = None) -> None:
        """Wait `seconds` before answering (to trigger a client timeout), then reply `then`."""
        if isinstance(then, dict):
            body: dict[str, Any] | str = then
        else:
            body = self.completion(content="ok" if then is None else then)
        self.enqueue(Step(body=body, delay=seconds))

    def enqueue_raw(self, body: str, status: int = 200) -> None:
        """A raw body, sent as is (truncated JSON, HTML, ...)."""
        self.enqueue(Step(status=status, body=body))

    @property
    def pending(self) -> int:
        """Scripted steps not yet served."""
        with self._lock:
            return len(self._queue)

    # --- responses --------------------------------------------------------------

    def completion(
        self,
        content: str | None = None,
        tool_calls: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """A full chat.completion body in OpenAI's shape."""
        n = next(self._ids)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.get("id") or f"call_{n}_{i}",
                    "type": "function",
                    "function": {
                        "name": call["name"],
                        "arguments": call["arguments"]
                        if isinstance(call.get("arguments"), str)
                        else json.dumps(call.get("arguments") or {}),
                    },
                }
                for i, call in enumerate(tool_calls)
            ]
        prompt_tokens, completion_tokens = 10, max(1, len((content or "").split()))
        return {
            "id": f"chatcmpl-fake-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if tool_calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _next(self, request: dict[str, Any]) -> Step:
        with self._lock:
            self.requests.append(request)
            self.request_times.append(time.monotonic())
            step = self._queue.popleft() if self._queue else None
        if step is not None:
            return step
        if self.responder is not None:
            answer = self.responder(request)
            if isinstance(answer, Step):
                return answer
            if isinstance(answer, str):
                return Step(body=self.completion(content=answer))
            return Step(body=answer)
        return Step(body=self.completion(content="ok"))


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A started FakeLLM, stopped after the test."""
    with FakeLLM() as fake:
        yield fake
