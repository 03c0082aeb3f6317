"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests, with fault injection.

Not a mock transport: the client under test opens TCP connections to it. Faults are scripted per
model name: ``server.faults["m"] = ["429", "500"]`` makes the next two requests for model ``m``
fail that way, then it answers normally. Fault names:

``429`` (with ``Retry-After``), ``500``, ``503``, ``hang`` (answers after ``hang_s``),
``malformed`` (200 with a body that is not JSON), ``no_choices`` (200, ``{}``), ``error_object``
(200 with an ``error`` object), ``drop`` (closes the connection without answering), ``length``
(the answer cut in half with ``finish_reason`` ``length``, as when ``max_tokens`` runs out).

Hostile answers (a well-formed HTTP exchange with a body no client should trust):
``usage_list`` (``usage`` is a list), ``tokens_text`` / ``tokens_nan`` / ``tokens_inf``
(``prompt_tokens`` is ``"lots"``, NaN or Infinity), ``model_dict`` (``model`` is an object),
``surrogate`` (the content holds a lone surrogate), ``deep`` (a body nested 100,000 deep),
``bigint`` (the content is a 5,000-digit integer), ``huge`` (the content is ``huge_bytes`` of
``[1,1,...]``), ``gzip_bomb`` (a small gzip body that inflates to ``huge_bytes``), ``drip`` (a
valid answer sent one byte every ``drip_s`` seconds), ``echo_key_escaped`` (the Authorization
key echoed back with every ``-`` written as ``\u002d``), ``echo_auth`` / ``echo_auth_cut`` (the content
is the Authorization header as received / minus its last 4 characters), ``overbill`` (reports 1,000,000
completion tokens whatever ``max_tokens`` said).

A request with ``"stream": true`` is answered with server-sent events, one token (about four
characters) each, ``token_s`` seconds apart (not streamed, the answer comes after as many
``token_s`` as it has tokens), as llama-server streams them (with a last ``usage``
event when ``stream_options.include_usage`` asks). Streaming faults: ``stall`` (two tokens, then
nothing for ``hang_s``, then the rest), ``bad_event`` (an event that is not JSON), ``deep_event``
(an event nested 100,000 deep), ``stream_error`` (an ``error`` event).

Run standalone for benchmarks: ``python tests/openai_server.py --port 8123 --latency 0.05``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

GOOD = [{"id": i, "name": f"User {i}", "active": i % 2 == 0} for i in range(1, 11)]
DRIFT = [*GOOD[:9], {"id": "10", "name": "User 10", "active": True}]


def default_reply(body: dict[str, Any]) -> str:
    """Deterministic output: the correct answer at temperature 0; at temperature > 0 the seed
    decides between the correct answer and one whose last id drifted to a string."""
    temperature = body.get("temperature", 1.0)
    if not temperature:
        return json.dumps(GOOD)
    digest = hashlib.sha256(json.dumps([body.get("seed"), body.get("messages")]).encode()).digest()
    rng = random.Random(digest)
    return json.dumps(GOOD if rng.random() < 0.6 else DRIFT)


class OpenAIServer:
    """Start with ``with OpenAIServer() as server:``; ``server.base_url`` ends in ``/v1``."""

    def __init__(self, *, latency: float = 0.0, port: int = 0) -> None:
        self.latency = latency
        self.hang_s = 5.0
        self.drip_s = 1.0
        self.token_s = 0.0
        self.huge_bytes = 5 * 1024 * 1024
        self.retry_after = "1"
        self.faults: dict[str, list[str]] = defaultdict(list)
        self.identity: dict[str, tuple[str, str | None]] = {}
        self.reply: Callable[[dict[str, Any]], str] = default_reply
        self.logprobs: Callable[[dict[str, Any]], Any] | None = None
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> OpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def next_fault(self, model: str) -> str | None:
        with self._lock:
            queue = self.faults.get(model)
            return queue.pop(0) if queue else None

    def answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        model = body.get("model", "")
        resolved, fingerprint = self.identity.get(model, (f"{model}-2026-01", "fp_test_1"))
        if path.split("?", 1)[0].endswith("/chat/completions"):  # the query: an api-version
            text = self.reply(body)
            choice: dict[str, Any] = {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        else:
            text = self.reply(body)
            choice = {"index": 0, "text": text, "finish_reason": "stop"}
        if body.get("logprobs") and self.logprobs is not None:
            choice["logprobs"] = self.logprobs(body)
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": resolved,
            "system_fingerprint": fingerprint,
            "choices": [choice],
            "usage": {
                "prompt_tokens": 42,
                "completion_tokens": len(text) // 4,
                "total_tokens": 42 + len(text) // 4,
            },
        }

    def hostile(self, fault: str, path: str, body: dict[str, Any], headers: Any) -> bytes | None:
        """The body of a hostile answer, or None when ``fault`` is not one."""
        answer = self.answer(path, body)
        message = answer["choices"][0].get("message", answer["choices"][0])
        key = "content" if "content" in message else "text"
        if fault == "usage_list":
            answer["usage"] = [1, 2]
        elif fault in ("tokens_text", "tokens_nan", "tokens_inf"):
            answer["usage"]["prompt_tokens"] = {
                "tokens_text": "lots",
                "tokens_nan": float("nan"),
                "tokens_inf": float("inf"),
            }[fault]
        elif fault == "overbill":
            answer["usage"]["completion_tokens"] = 1_000_000
        elif fault == "model_dict":
            answer["model"] = {"name": "m", "nested": [1, 2]}
        elif fault == "surrogate":
            return (
                json.dumps(answer).replace(json.dumps(message[key])[1:-1], "ok \\ud800 ok").encode()
            )
        elif fault == "deep":
            return b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
        elif fault == "bigint":
            message[key] = "9" * 5000
        elif fault == "huge":
            message[key] = "[" + ",".join(["1"] * (self.huge_bytes // 2)) + "]"
        elif fault in ("echo_auth", "echo_auth_cut"):
            auth = headers.get("Authorization", "")
            message[key] = "you sent " + (auth[:-4] if fault == "echo_auth_cut" else auth)
        elif fault == "echo_key_escaped":
            auth = headers.get("Authorization", "")
            echoed = json.dumps(answer).replace('"stop"', json.dumps("stop " + auth))
            return echoed.replace("-", "\\u002d").encode()
        else:
            return None
        return json.dumps(answer).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _send(
                self, status: int, body: bytes, headers: dict[str, str] | None = None
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

            def _stream(self, body: dict[str, Any], fault: str | None) -> None:
                """Answer as server-sent events, one token of the reply at a time."""
                answer = server.answer(self.path, body)
                choice = answer["choices"][0]
                chat = "message" in choice
                text = choice["message"]["content"] if chat else choice["text"]
                tokens = [text[i : i + 4] for i in range(0, len(text), 4)]
                head = {k: answer[k] for k in ("id", "created", "model", "system_fingerprint")}

                def event(**choice_fields: Any) -> bytes:
                    return b"data: " + json.dumps({**head, "choices": [choice_fields]}).encode()

                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for i, token in enumerate(tokens):
                        if fault == "stall" and i == 2:
                            time.sleep(server.hang_s)
                        if fault == "bad_event" and i == 1:
                            self._chunk(b"data: {this is not json\n\n")
                        if fault == "deep_event" and i == 1:
                            self._chunk(b"data: " + b"[" * 100_000 + b"]" * 100_000 + b"\n\n")
                        if fault == "stream_error" and i == 1:
                            self._chunk(b'data: {"error": {"message": "slot crashed"}}\n\n')
                        delta = {"delta": {"content": token}} if chat else {"text": token}
                        self._chunk(event(index=0, finish_reason=None, **delta) + b"\n\n")
                        if server.token_s:
                            time.sleep(server.token_s)
                    last = {"delta": {}} if chat else {"text": ""}
                    self._chunk(event(index=0, finish_reason="stop", **last) + b"\n\n")
                    if (body.get("stream_options") or {}).get("include_usage"):
                        usage = {**head, "choices": [], "usage": answer["usage"]}
                        self._chunk(b"data: " + json.dumps(usage).encode() + b"\n\n")
                    self._chunk(b"data: [DONE]\n\n")
                    self._chunk(b"")
                except OSError:  # the client gave up
                    self.close_connection = True

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, b'{"object": "list", "data": [{"id": "test-model"}]}')
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    self._send(400, b'{"error": {"message": "bad json"}}')
                    return
                with server._lock:
                    server.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "body": body}
                    )
                if server.latency:
                    time.sleep(server.latency)
                fault = server.next_fault(body.get("model", ""))
                if body.get("stream") and fault in (
                    None,
                    "stall",
                    "bad_event",
                    "deep_event",
                    "stream_error",
                ):
                    self._stream(body, fault)
                elif fault == "429":
                    self._send(
                        429,
                        b'{"error": {"message": "rate limited"}}',
                        {"Retry-After": server.retry_after},
                    )
                elif fault in ("500", "503"):
                    self._send(int(fault), b'{"error": {"message": "upstream trouble"}}')
                elif fault == "hang":
                    time.sleep(server.hang_s)
                    self._send(200, json.dumps(server.answer(self.path, body)).encode())
                elif fault == "malformed":
                    self._send(200, b'{"choices": [ this is not json')
                elif fault == "no_choices":
                    self._send(200, b"{}")
                elif fault == "error_object":
                    self._send(200, b'{"error": {"message": "model overloaded", "code": 529}}')
                elif fault == "length":
                    answer = server.answer(self.path, body)
                    choice = answer["choices"][0]
                    key = "message" if "message" in choice else None
                    text = choice["message"]["content"] if key else choice["text"]
                    cut = text[: len(text) // 2]
                    if key:
                        choice["message"]["content"] = cut
                    else:
                        choice["text"] = cut
                    choice["finish_reason"] = "length"
                    self._send(200, json.dumps(answer).encode())
                elif fault == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                elif fault == "drip":
                    payload = json.dumps(server.answer(self.path, body)).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    try:
                        for i in range(len(payload)):
                            self.wfile.write(payload[i : i + 1])
                            self.wfile.flush()
                            time.sleep(server.drip_s)
                    except OSError:  # the client gave up: good
                        self.close_connection = True
                elif fault == "gzip_bomb":
                    import gzip

                    self._send(
                        200, gzip.compress(b" " * server.huge_bytes), {"Content-Encoding": "gzip"}
                    )
                elif fault and (hostile := server.hostile(fault, self.path, body, self.headers)):
                    self._send(200, hostile)
                else:
                    answer = server.answer(self.path, body)
                    if server.token_s:  # a slow model: every token takes token_s
                        time.sleep(server.token_s * answer["usage"]["completion_tokens"])
                    self._send(200, json.dumps(answer).encode())

        return Handler


async def serve_fast(port: int, latency: float, reply_items: int = 0) -> None:
    """A minimal asyncio HTTP/1.1 keep-alive server answering every POST normally after
    ``latency`` seconds: for benchmarks, where a thread per connection would be the bottleneck.
    ``reply_items`` > 0: every answer is a list of that many records (a large output to score),
    rendered once."""
    import asyncio

    big = json.dumps((GOOD * (reply_items // len(GOOD) + 1))[:reply_items]) if reply_items else None
    rendered: dict[str, bytes] = {}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1]
                length = next(
                    (
                        int(x.split(":", 1)[1])
                        for x in lines
                        if x.lower().startswith("content-length:")
                    ),
                    0,
                )
                body = json.loads(await reader.readexactly(length)) if length else {}
                if latency:
                    await asyncio.sleep(latency)
                if big is None:
                    payload = json.dumps(server.answer(path, body)).encode()
                elif path not in rendered:
                    payload = rendered[path] = json.dumps(server.answer(path, body)).encode()
                else:
                    payload = rendered[path]
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(payload)}\r\n\r\n".encode()
                    + payload
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = OpenAIServer.__new__(OpenAIServer)
    server.identity, server.logprobs = {}, None
    server.reply = default_reply if big is None else (lambda body: big)
    listener = await asyncio.start_server(handle, "127.0.0.1", port)
    print(f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}/v1", flush=True)
    async with listener:
        await listener.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--fast", action="store_true", help="asyncio server, no fault injection")
    parser.add_argument("--reply-items", type=int, default=0, help="with --fast: answer N records")
    args = parser.parse_args()
    if args.fast:
        import asyncio

        asyncio.run(serve_fast(args.port, args.latency, args.reply_items))
        return
    with OpenAIServer(latency=args.latency, port=args.port) as server:
        print(server.base_url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
