"""An async client for OpenAI-compatible ``/chat/completions`` and ``/completions`` endpoints.

One connection pool per client, a concurrency limit, a per-request timeout, retries with
exponential backoff and jitter on 429, 5xx, timeouts and connection errors (honouring
``Retry-After``), and an optional per-repeat response cache.

The pool is ``concurrency`` lanes, each an ``httpx.AsyncClient`` holding one keep-alive
connection; a request borrows an idle lane. A single shared httpx pool scans every connection for
every request it assigns, which at concurrency 32 cost 3x the wall time (benchmarks/bench_runner.py). Failures come back as a
:class:`Completion` with ``error`` set, never as an exception, so a long run goes on.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import httpx

from ._cache import ResponseCache, cache_key
from ._completion import Completion, error_completion, excerpt, parse_response
from ._endpoint import Endpoint
from ._retry import RetryPolicy


class ChatClient:
    """Send requests to one endpoint with bounded concurrency, retries and caching.

    Use it as an async context manager; ``retries`` counts every retry it made.

    Example:
        >>> import asyncio
        >>> from jevalkit.client import ChatClient, Endpoint
        >>> async def main():
        ...     async with ChatClient(Endpoint("http://127.0.0.1:9/v1"), timeout=1,
        ...                           retry=RetryPolicy(max_retries=0)) as client:
        ...         return await client.chat({"model": "m", "messages": []})
        >>> asyncio.run(main()).error["type"]
        'connection'
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        concurrency: int = 8,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        cache: ResponseCache | None = None,
        on_retry: Callable[[], None] | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.endpoint = endpoint
        self.concurrency = concurrency
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.cache = cache
        self.on_retry = on_retry
        self.retries = 0
        self._lanes: list[httpx.AsyncClient] = []
        self._idle: asyncio.Queue[httpx.AsyncClient] | None = None

    async def __aenter__(self) -> ChatClient:
        one = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        tls = httpx.create_ssl_context()  # loading CA certificates costs ~50 ms: do it once
        self._lanes = [
            httpx.AsyncClient(
                limits=one,
                timeout=httpx.Timeout(self.timeout),
                headers=self.endpoint.headers(),
                verify=tls,
            )
            for _ in range(self.concurrency)
        ]
        self._idle = asyncio.Queue()
        for lane in self._lanes:
            self._idle.put_nowait(lane)
        return self

    async def __aexit__(self, *exc: object) -> None:
        for lane in self._lanes:
            await lane.aclose()
        self._lanes, self._idle = [], None

    async def chat(self, body: dict[str, Any], *, repeat: int = 0) -> Completion:
        """POST ``body`` to ``/chat/completions``; ``repeat`` keeps repeats apart in the cache."""
        return await self._request("/chat/completions", body, repeat, chat=True)

    async def complete(self, body: dict[str, Any], *, repeat: int = 0) -> Completion:
        """POST ``body`` to ``/completions`` (a raw prompt, for completion-style judges)."""
        return await self._request("/completions", body, repeat, chat=False)

    def key_for(self, path: str, body: dict[str, Any], repeat: int) -> str:
        """The cache key: base URL, path, the full body (model, messages, every parameter, seed)
        and the repeat index."""
        return cache_key(base_url=self.endpoint.base_url, path=path, body=body, repeat=repeat)

    async def _request(
        self, path: str, body: dict[str, Any], repeat: int, *, chat: bool
    ) -> Completion:
        key = self.key_for(path, body, repeat) if self.cache else None
        if key is not None:
            hit = self.cache.get(key)
            if hit is not None:
                result = parse_response(hit, 200, chat=chat)
                result.cached, result.latency_s = True, 0.0
                return result
        result = await self._send_with_retries(path, body, chat=chat)
        if key is not None and result.ok and result.raw is not None:
            self.cache.put(key, result.raw)
        return result

    async def _send_with_retries(
        self, path: str, body: dict[str, Any], *, chat: bool
    ) -> Completion:
        attempt = 0
        assert self._idle is not None, "use `async with ChatClient(...)`"
        while True:
            lane = await self._idle.get()
            try:
                started = time.perf_counter()
                result, retry_after = await self._send_once(lane, path, body, chat=chat)
                result.latency_s = time.perf_counter() - started
            finally:
                self._idle.put_nowait(lane)
            result.attempts = attempt + 1
            retryable = result.error is not None and result.error["type"] in (
                "http_status",
                "timeout",
                "connection",
            )
            if not retryable or not self.retry.should_retry(result.status, attempt=attempt):
                return result
            self.retries += 1
            if self.on_retry is not None:
                self.on_retry()
            await asyncio.sleep(self.retry.delay(attempt=attempt, retry_after=retry_after))
            attempt += 1

    async def _send_once(
        self, lane: httpx.AsyncClient, path: str, body: dict[str, Any], *, chat: bool
    ) -> tuple[Completion, str | None]:
        url = self.endpoint.base_url + path
        redact = self.endpoint.redact
        try:
            response = await lane.post(url, json=body)
        except httpx.TimeoutException:
            return error_completion(
                "timeout", f"no answer from {url} within {self.timeout:g} s"
            ), None
        except httpx.TransportError as exc:
            reason = redact(str(exc) or type(exc).__name__)
            return error_completion("connection", f"{type(exc).__name__}: {excerpt(reason)}"), None
        status = response.status_code
        text = redact(response.text)
        if status >= 400:
            message = f"HTTP {status}: {excerpt(text)}"
            return error_completion("http_status", message, status), response.headers.get(
                "retry-after"
            )
        try:
            payload = json.loads(text)
        except ValueError:
            return error_completion(
                "invalid_response", f"body is not JSON: {excerpt(text)}", status
            ), None
        return parse_response(payload, status, chat=chat), None
