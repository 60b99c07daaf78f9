"""A scripted loopback OpenAI-compatible server for the LLM extractor tests.

``POST /v1/chat/completions`` answers with the next scripted reply: a content
string (wrapped in a chat-completion payload), an HTTP status code, or
``GARBAGE`` (a 200 whose body is not JSON). When the script is exhausted the
last entry repeats. Every request body is recorded in ``server.requests``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

GARBAGE = object()


class ScriptedServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: list[Any]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def next_reply(self) -> Any:
        with self.lock:
            if len(self.script) > 1:
                return self.script.pop(0)
            return self.script[0]


class _Handler(BaseHTTPRequestHandler):
    server: ScriptedServer

    def log_message(self, format: str, *args: Any) -> None:  # silence
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        with self.server.lock:
            self.server.requests.append({"path": self.path, "body": body})
        reply = self.server.next_reply()
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, b'{"error": "not found"}')
        elif reply is GARBAGE:
            self._send(200, b"<html>this is not json")
        elif isinstance(reply, int):
            self._send(reply, b'{"error": "scripted failure"}')
        else:
            payload = {
                "id": "x",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": reply},
                    }
                ],
                "usage": {"prompt_tokens": 11, "completion_tokens": 7},
            }
            self._send(200, json.dumps(payload).encode())

    def _send(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def scripted_server(script: list[Any]) -> Iterator[ScriptedServer]:
    """Run a :class:`ScriptedServer` in a thread for the duration of the block."""
    server = ScriptedServer(script)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
