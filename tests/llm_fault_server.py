"""A scripted OpenAI-compatible loopback server that injects faults (for LLM client tests).

Each request to ``/v1/chat/completions`` is answered by the next action of a script,
or by a ``responder(body) -> action`` callable. Actions:

- ``("ok", text)``: a normal completion whose message content is ``text``;
- ``("status", code)``: an HTTP error with a small JSON body (429 adds Retry-After: 0);
- ``("timeout", seconds)``: sleep, then answer ok (the client should time out first);
- ``("garbage", None)``: HTTP 200 with a body that is not JSON;
- ``("nochoices", None)``: HTTP 200 JSON without ``choices``;
- ``("body", bytes)``: HTTP 200 with exactly this body (an error object, a cut-off reply).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Action = tuple[str, Any]


class FaultServer:
    """Run with ``with FaultServer(script=[...]) as server: server.base_url``."""

    def __init__(
        self,
        script: list[Action] | None = None,
        responder: Callable[[dict[str, Any]], Action] | None = None,
        delay_s: float = 0.0,
    ) -> None:
        self.script = list(script or [])
        self.responder = responder
        self.delay_s = delay_s
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> FaultServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def next_action(self, body: dict[str, Any]) -> Action:
        with self.lock:
            self.requests.append(body)
            if self.script:
                return self.script.pop(0)
        if self.responder is not None:
            return self.responder(body)
        return ("status", 500)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(
                self, code: int, payload: bytes, headers: dict[str, str] | None = None
            ) -> None:
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    if server.delay_s:
                        time.sleep(server.delay_s)
                    kind, arg = server.next_action(body)
                    if kind == "timeout":
                        time.sleep(float(arg))
                        kind, arg = "ok", '{"label": "supported"}'
                    if kind == "ok":
                        payload = {
                            "id": "x",
                            "object": "chat.completion",
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": arg},
                                    "finish_reason": "stop",
                                }
                            ],
                            "usage": {"prompt_tokens": 11, "completion_tokens": 3},
                        }
                        self._send(200, json.dumps(payload).encode())
                    elif kind == "status":
                        headers = {"Retry-After": "0"} if arg == 429 else None
                        self._send(int(arg), b'{"error": "injected"}', headers)
                    elif kind == "garbage":
                        self._send(200, b"<html>502 bad gateway</html>")
                    elif kind == "nochoices":
                        self._send(200, b'{"object": "chat.completion"}')
                    elif kind == "body":
                        self._send(200, bytes(arg))
                    else:
                        self._send(500, b'{"error": "unknown action"}')
                finally:
                    with server.lock:
                        server.in_flight -= 1

        return Handler
