"""An async client for OpenAI-compatible ``/chat/completions`` and ``/completions`` endpoints.

One connection pool per client, a concurrency limit, a total deadline per attempt, a cap on the
size of a response body, retries with exponential backoff and jitter on 429, 5xx, timeouts and
connection errors (honouring ``Retry-After``), and an optional per-repeat response cache.

The pool is ``concurrency`` lanes, each an ``httpx.AsyncClient`` holding one keep-alive
connection; a request borrows an idle lane. A single shared httpx pool scans every connection for
every request it assigns, which at concurrency 32 cost 3x the wall time (benchmarks/bench_runner.py).

A paced client (the embedded model) streams its answers: tokens arrive one by one, so a long
generation on a busy machine shows its progress and its speed while it runs, and an attempt is
given up only when the server stops sending tokens, never while it is still generating.

Failures come back as a :class:`Completion` with ``error`` set, never as an exception, so a long
run goes on: whatever an endpoint sends (a body that is not JSON, nested 100,000 deep, larger than
the cap, gzip-bombed, dripped one byte a second) ends as an error completion.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import ssl
import time
import urllib.request
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol

import httpx

from ..errors import UsageError
from ..jsontext import nested_deeper_than
from ._cache import ResponseCache, cache_key
from ._completion import Completion, error_completion, excerpt, parse_response
from ._endpoint import Endpoint
from ._retry import RetryPolicy
from ._stream import STREAM_FIELDS, StreamReader, streamable

DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024
MAX_JSON_DEPTH = 64  # an OpenAI response is under 10 levels deep, logprobs included
PACE_SLACK = 2.0  # paced deadline: twice the time max_tokens take at the measured speed
PROMPT_SLACK_S = 10.0  # plus this for prompt processing
STALL_TOKENS = 20  # paced: given up after this many tokens' time (at least `timeout`) with none
CHAT: Final = "/chat/completions"
COMPLETIONS: Final = "/completions"


@dataclass(frozen=True)
class Request:
    """One request: the API path, the body (without ``model``: the client's target fills it),
    and the repeat index that keeps repeats apart in the cache.

    Example:
        >>> Request(CHAT, {"messages": []}).path
        '/chat/completions'
    """

    path: Literal["/chat/completions", "/completions"]
    body: dict[str, Any] = field(default_factory=dict)
    repeat: int = 0

    @property
    def chat(self) -> bool:
        """Whether the response carries ``message.content`` (chat) or ``text`` (completions)."""
        return self.path == CHAT


def _tls_context(base_url: str) -> ssl.SSLContext:
    """The lanes' TLS context. Loading the CA certificates costs 50-70 ms, more than a
    thousand loopback requests' worth of client time: the verified context is made once per
    process, and a plain ``http`` endpoint reached without a proxy (the embedded model, a local
    server), which never shakes hands, gets a context that trusts nothing (no redirect is
    followed, so no request of its lanes reaches an ``https`` host; one that did would fail,
    never go unverified)."""
    if base_url.lower().startswith("https:") or urllib.request.getproxies():
        return _verified_context()
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


@functools.cache
def _verified_context() -> ssl.SSLContext:
    return httpx.create_ssl_context()


class AttemptMeter(Protocol):
    """Counts every HTTP attempt (retries included) against a limit: ``reserve`` before an
    attempt is sent (it may wait, or raise :class:`~jevalkit.errors.BudgetReached`), ``settle``
    exactly once after it with the tokens the endpoint reported (None: unknown).
    :class:`jevalkit.costs.BudgetMeter` is the one implementation."""

    async def reserve(self, body: dict[str, Any]) -> float: ...

    async def settle(
        self, held: float, prompt_tokens: float | None, completion_tokens: float | None
    ) -> None: ...


class ChatClient:
    """Send requests to one endpoint with bounded concurrency, retries and caching.

    Use it as an async context manager; ``retries`` counts every retry it made.

    Args:
        endpoint: where to send and with which key.
        model: the model name put into every body.
        concurrency: requests in flight at once (lanes).
        timeout: total seconds one attempt may take, connecting and reading included.
        retry: when to retry and how long to wait.
        cache: responses by key, or None.
        max_response_bytes: a larger body (after decompression) is a ``too_large`` error.
        on_retry: called once per retry (the progress bar counts them).
        paced: for the embedded model, which slows down with the machine's load: answers are
            streamed (one choice, no logprobs) and an attempt is given up only after
            ``stall_limit()`` seconds in which no token and no answer reached this client
            (``timeout``, or twenty tokens' time at the speed measured during the run when
            that is longer); an attempt not streamed also gets ``request_deadline`` first. A
            generation the server is still working on is never abandoned and sent again.
        meter: reserves and settles every HTTP attempt (a budget); None sends freely.

    Example:
        >>> import asyncio
        >>> from jevalkit.client import ChatClient, Endpoint
        >>> async def main():
        ...     async with ChatClient(Endpoint("http://127.0.0.1:9/v1"), model="m", timeout=1,
        ...                           retry=RetryPolicy(max_retries=0)) as client:
        ...         return await client.send(Request(CHAT, {"messages": []}))
        >>> asyncio.run(main()).error["type"]
        'connection'
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        model: str,
        concurrency: int = 8,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        cache: ResponseCache | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        on_retry: Callable[[], None] | None = None,
        meter: AttemptMeter | None = None,
        paced: bool = False,
    ) -> None:
        if concurrency < 1:
            raise UsageError(f"concurrency must be at least 1, got {concurrency}")
        if not timeout > 0:
            raise UsageError(f"timeout must be a positive number of seconds, got {timeout}")
        if max_response_bytes < 1:
            raise UsageError(f"max_response_bytes must be positive, got {max_response_bytes}")
        self.endpoint = endpoint
        self.model = model
        self.concurrency = concurrency
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.cache = cache
        self.max_response_bytes = max_response_bytes
        self.on_retry = on_retry
        self.meter = meter
        self.paced = paced
        self.retries = 0
        self.on_tokens: Callable[[int], None] | None = None  # called as streamed tokens arrive
        self.streamed_tokens = 0
        self._progress_at = time.monotonic()  # the last token or answer this client received
        self._tokens = 0  # tokens measured, and the seconds they took (the measured speed)
        self._seconds = 0.0
        self.cache_warning: str | None = None
        self._lanes: list[httpx.AsyncClient] = []
        self._idle: asyncio.Queue[httpx.AsyncClient] | None = None

    async def __aenter__(self) -> ChatClient:
        one = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        tls = _tls_context(self.endpoint.base_url)
        self._lanes = [
            httpx.AsyncClient(
                limits=one,
                timeout=httpx.Timeout(None if self.paced else self.timeout, connect=self.timeout),
                headers=self.endpoint.headers(),
                auth=self.endpoint.auth,
                params=self.endpoint.params,  # the base URL's query (api-version, api-key, ...)
                verify=tls,
            )
            for _ in range(self.concurrency)
        ]
        self._idle = asyncio.Queue()
        for lane in self._lanes:
            self._idle.put_nowait(lane)
        self._progress_at = time.monotonic()
        return self

    async def __aexit__(self, *exc: object) -> None:
        for lane in self._lanes:
            await lane.aclose()
        self._lanes, self._idle = [], None

    def request_deadline(self, body: dict[str, Any]) -> float:
        """Seconds one attempt at ``body`` may take: ``timeout``; paced, at least the time its
        ``max_tokens`` take at the measured tokens per second (with slack for prompt processing).

        Example:
            >>> client = ChatClient(Endpoint("http://127.0.0.1:9/v1"), model="m", timeout=10,
            ...                     paced=True)
            >>> client.request_deadline({"max_tokens": 600})  # nothing measured yet
            10.0
            >>> client._tokens, client._seconds = 100, 10.0  # 10 tokens/s
            >>> client.request_deadline({"max_tokens": 600}), client.request_deadline({})
            (130.0, 10.0)
        """
        limit = float(self.timeout)
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
        speed = self.tokens_per_second
        if self.paced and speed and isinstance(max_tokens, int):
            limit = max(limit, PROMPT_SLACK_S + PACE_SLACK * max_tokens / speed)
        return limit

    @property
    def tokens_per_second(self) -> float | None:
        """The generation speed measured during this client's run (one stream's tokens per
        second; None before anything is measured)."""
        return self._tokens / self._seconds if self._tokens and self._seconds > 0 else None

    def stall_limit(self) -> float:
        """Seconds with no token and no answer after which a paced attempt is given up:
        ``timeout``, or :data:`STALL_TOKENS` tokens' time at the measured speed when longer.

        Example:
            >>> client = ChatClient(Endpoint("http://127.0.0.1:9/v1"), model="m", timeout=10,
            ...                     paced=True)
            >>> client.stall_limit()
            10.0
            >>> client._tokens, client._seconds = 10, 50.0  # 5 s a token: a saturated machine
            >>> client.stall_limit()
            100.0
        """
        speed = self.tokens_per_second
        return max(float(self.timeout), STALL_TOKENS / speed if speed else 0.0)

    async def send(self, request: Request) -> Completion:
        """POST ``request`` (with this client's model); a cached answer is used when present."""
        body = {"model": self.model, **request.body}
        cache = self.cache
        key = self.key_for(request.path, body, request.repeat) if cache is not None else None
        if cache is not None and key is not None:
            hit = self._cache_get(cache, key)
            if hit is not None:
                result = parse_response(hit, 200, chat=request.chat)
                if result.ok:
                    result.cached, result.latency_s, result.attempts = True, 0.0, 0
                    return result
        result = await self._send_with_retries(request.path, body, chat=request.chat)
        if (
            cache is not None
            and key is not None
            and result.ok
            and result.raw is not None
            and self.cache is cache
        ):
            self._cache_put(cache, key, result.raw)
        return result

    async def chat(self, body: dict[str, Any], *, repeat: int = 0) -> Completion:
        """POST ``body`` to ``/chat/completions``."""
        return await self.send(Request(CHAT, body, repeat))

    async def complete(self, body: dict[str, Any], *, repeat: int = 0) -> Completion:
        """POST ``body`` to ``/completions`` (a raw prompt, for completion-style judges)."""
        return await self.send(Request(COMPLETIONS, body, repeat))

    def key_for(self, path: str, body: dict[str, Any], repeat: int) -> str:
        """The cache key: base URL, path, the full body (model, messages, every parameter, seed)
        and the repeat index."""
        return cache_key(base_url=self.endpoint.identity, path=path, body=body, repeat=repeat)

    def _cache_get(self, cache: ResponseCache, key: str) -> dict[str, Any] | None:
        try:
            return cache.get(key)
        except Exception as exc:  # the cache is an optimisation: never let it stop a run
            self._disable_cache(cache, exc)
            return None

    def _cache_put(self, cache: ResponseCache, key: str, payload: dict[str, Any]) -> None:
        try:
            cache.put(key, payload)
        except Exception as exc:
            self._disable_cache(cache, exc)

    def _disable_cache(self, cache: ResponseCache, exc: Exception) -> None:
        if self.cache is not cache:
            return  # another request already reported it
        self.cache = None
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        self.cache_warning = (
            f"response cache at {cache.root} failed ({reason}); continuing without it"
        )
        warnings.warn(self.cache_warning, stacklevel=3)

    async def _send_with_retries(
        self, path: str, body: dict[str, Any], *, chat: bool
    ) -> Completion:
        attempt = 0
        assert self._idle is not None, "use `async with ChatClient(...)`"
        while True:
            result, retry_after = await self._attempt(path, body, chat=chat)
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

    async def _attempt(
        self, path: str, body: dict[str, Any], *, chat: bool
    ) -> tuple[Completion, str | None]:
        """One HTTP attempt, reserved and settled with the meter when there is one."""
        meter = self.meter
        held = await meter.reserve(body) if meter is not None else 0.0
        try:
            assert self._idle is not None
            lane = await self._idle.get()
            try:
                started = time.perf_counter()
                streamed = self.paced and streamable(body)
                result, retry_after = await self._send_once(
                    lane, path, body, chat=chat, streamed=streamed
                )
                result.latency_s = time.perf_counter() - started
                if result.ok and result.completion_tokens and not streamed:  # the measured speed
                    self._tokens += int(result.completion_tokens)
                    self._seconds += result.latency_s
            finally:
                self._idle.put_nowait(lane)
        except BaseException:
            if meter is not None:  # cancelled mid-flight: it may have been billed in full
                await asyncio.shield(meter.settle(held, None, None))
            raise
        if meter is not None:
            await meter.settle(held, result.prompt_tokens, result.completion_tokens)
        return result, retry_after

    async def _send_once(
        self,
        lane: httpx.AsyncClient,
        path: str,
        body: dict[str, Any],
        *,
        chat: bool,
        streamed: bool = False,
    ) -> tuple[Completion, str | None]:
        url = self.endpoint.base_url + path
        redact = self.endpoint.redact
        try:
            status, headers, data = await self._await_answer(
                lane, url, body, chat=chat, streamed=streamed
            )
        except TimeoutError as exc:
            return error_completion("timeout", str(exc)), None
        except httpx.TimeoutException:
            return error_completion(
                "timeout", f"no answer from {url} within {self.timeout:g} s"
            ), None
        except httpx.HTTPError as exc:  # transport errors, and decoding errors of a bad body
            reason = redact(str(exc) or type(exc).__name__)
            return error_completion("connection", f"{type(exc).__name__}: {excerpt(reason)}"), None
        if data is None:
            return error_completion(
                "too_large",
                f"response body larger than {self.max_response_bytes:,} bytes; raise "
                "max_response_bytes if this endpoint's answers are really that long",
                status,
            ), None
        text = redact(data.decode("utf-8", errors="replace"))
        if status >= 400:
            return error_completion(
                "http_status", f"HTTP {status}: {excerpt(text)}", status
            ), headers.get("retry-after")
        try:
            payload = json.loads(text)
        except RecursionError:
            return error_completion("invalid_response", "body nested too deeply", status), None
        except ValueError:
            return error_completion(
                "invalid_response", f"body is not JSON: {excerpt(text)}", status
            ), None
        if nested_deeper_than(payload, MAX_JSON_DEPTH):
            return error_completion(
                "invalid_response", f"body nested deeper than {MAX_JSON_DEPTH} levels", status
            ), None
        return parse_response(self.endpoint.redact_value(payload), status, chat=chat), None

    async def _await_answer(
        self, lane: httpx.AsyncClient, url: str, body: dict[str, Any], *, chat: bool, streamed: bool
    ) -> tuple[int, Any, bytes | None]:
        """The answer, waited for ``timeout`` seconds; paced, for as long as tokens or answers
        keep reaching this client (see ``paced``). TimeoutError (its message says why) when the
        wait ends with no answer."""
        if not self.paced:  # one fixed deadline: awaited in this task (no task, no wait set)
            try:
                async with asyncio.timeout(self.timeout):
                    answer = await self._read(lane, url, body, chat=chat, streamed=streamed)
            except TimeoutError:
                raise TimeoutError(self._timeout_message(url, streamed, 0.0)) from None
            self._progress_at = time.monotonic()
            return answer
        task = asyncio.ensure_future(self._read(lane, url, body, chat=chat, streamed=streamed))
        started = time.monotonic()
        own = 0.0 if streamed else self.request_deadline(body)
        try:
            while True:
                if self.paced:
                    stall = self.stall_limit()
                    wake = max(started + own, max(self._progress_at, started) + stall)
                else:
                    wake = started + self.timeout
                wait = wake - time.monotonic()
                if wait <= 0:
                    raise TimeoutError(self._timeout_message(url, streamed, own))
                done, _ = await asyncio.wait({task}, timeout=wait)
                if done:
                    answer = task.result()
                    break
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, httpx.HTTPError):
                    await task
        self._progress_at = time.monotonic()
        return answer

    def _timeout_message(self, url: str, streamed: bool, own: float) -> str:
        if not self.paced:
            return f"no complete answer from {url} within {self.timeout:g} s"
        stall = f"{self.stall_limit():g} s"
        if streamed:
            return f"no token from {url} for {stall} (the server stopped generating)"
        return f"no complete answer from {url} within {own:g} s, and no progress for {stall}"

    async def _read(
        self, lane: httpx.AsyncClient, url: str, body: dict[str, Any], *, chat: bool, streamed: bool
    ) -> tuple[int, httpx.Headers, bytes | None]:
        """Status, headers and the decoded body (a stream read back into one body); body None
        when it exceeds the size cap."""
        sent = {**body, **STREAM_FIELDS} if streamed else body
        async with lane.stream("POST", url, json=sent) as response:
            status, headers = response.status_code, response.headers
            events = "text/event-stream" in headers.get("content-type", "")
            if streamed and events and status < 400:
                return status, headers, await self._read_events(response, chat=chat)
            chunks, size = [], 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > self.max_response_bytes:
                    return status, headers, None
                chunks.append(chunk)
            return status, headers, b"".join(chunks)

    async def _read_events(self, response: httpx.Response, *, chat: bool) -> bytes | None:
        """A streamed answer as one JSON body, counting its tokens as they arrive (the measured
        speed, the progress and ``on_tokens``); None past the size cap."""
        reader = StreamReader(chat=chat)
        pending: list[bytes] = []
        size, last = 0, None
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self.max_response_bytes:
                return None
            if b"\n" not in chunk:
                pending.append(chunk)
                continue
            *lines, rest = b"".join([*pending, chunk]).split(b"\n")
            pending = [rest]
            tokens = sum(reader.feed(line) for line in lines)
            if tokens:
                now = time.monotonic()
                if last is not None:  # the first token's wait is the prompt's, not the speed
                    self._tokens += tokens
                    self._seconds += now - last
                last = self._progress_at = now
                self.streamed_tokens += tokens
                if self.on_tokens is not None:
                    self.on_tokens(tokens)
            if reader.done or reader.bad is not None:
                break
        reader.feed(b"".join(pending))
        if reader.bad is not None:
            return reader.bad  # fails as the same body not streamed would
        return json.dumps(reader.body()).encode()
