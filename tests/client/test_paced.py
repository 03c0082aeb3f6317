"""Issue 26.11: the embedded model's slots queue a run's own requests; a paced client waits for
them instead of abandoning and re-queueing each one behind the same slots."""

from __future__ import annotations

import asyncio
import threading
import time

from jevalkit.client import ChatClient, Endpoint, Request, RetryPolicy


def one_slot(server, seconds):
    """The loopback server answers one request at a time, each taking ``seconds``."""
    slot = threading.Lock()

    def reply(body):
        with slot:
            time.sleep(seconds)
        return "ok"

    server.reply = reply


async def send_all(server, *, paced, n):
    client = ChatClient(
        Endpoint(server.base_url),
        model="m",
        concurrency=n,
        timeout=1.0,
        retry=RetryPolicy(max_retries=0),
        paced=paced,
    )
    async with client:
        request = Request("/chat/completions", {"messages": [{"role": "user", "content": "q"}]})
        return await asyncio.gather(*(client.send(request) for _ in range(n)))


def test_a_paced_client_waits_while_its_own_requests_are_served(openai_server):
    one_slot(openai_server, 0.4)
    results = asyncio.run(send_all(openai_server, paced=True, n=6))  # the last needs >= 2.4 s
    assert [r.error for r in results] == [None] * 6
    assert [r.attempts for r in results] == [1] * 6 and len(openai_server.requests) == 6


def test_an_unpaced_client_times_out_behind_the_queue(openai_server):
    one_slot(openai_server, 0.4)
    results = asyncio.run(send_all(openai_server, paced=False, n=6))
    assert sum(r.error is not None and r.error["type"] == "timeout" for r in results) >= 3


def test_a_paced_client_still_times_out_when_nothing_progresses(openai_server):
    openai_server.hang_s = 3.0
    openai_server.faults["m"] = ["hang"]
    results = asyncio.run(send_all(openai_server, paced=True, n=1))
    assert results[0].error["type"] == "timeout"


# Issue 37.1: on a busy machine the embedded model slows from ~60 to ~1 token/s, so an answer can
# take far longer than any fixed deadline. A paced client streams, and waits for as long as tokens
# keep arriving; it gives up only on a server that stopped sending them.


async def stream_one(server, *, timeout, path="/chat/completions", max_response_bytes=None):
    client = ChatClient(
        Endpoint(server.base_url),
        model="m",
        concurrency=1,
        timeout=timeout,
        retry=RetryPolicy(max_retries=0),
        paced=True,
        **({"max_response_bytes": max_response_bytes} if max_response_bytes else {}),
    )
    seen = []
    client.on_tokens = seen.append
    body = {"messages": [{"role": "user", "content": "q"}]}
    if path == "/completions":
        body = {"prompt": "q"}
    async with client:
        result = await client.send(Request(path, body))
    return result, client, seen


def test_a_paced_client_waits_for_an_answer_slower_than_its_timeout(openai_server):
    openai_server.reply = lambda body: "x" * 80  # 20 tokens, 0.2 s apart: 4 s in all
    openai_server.token_s = 0.2
    result, client, seen = asyncio.run(stream_one(openai_server, timeout=2.0))
    assert result.error is None and result.text == "x" * 80 and result.attempts == 1
    assert len(openai_server.requests) == 1  # never given up and sent again
    assert openai_server.requests[0]["body"]["stream"] is True
    assert sum(seen) == client.streamed_tokens == 20  # the progress saw every token
    assert 0 < client.tokens_per_second < 20  # the speed is measured while the answer arrives


def test_a_streamed_answer_reads_as_the_same_answer_not_streamed(openai_server):
    for path in ("/chat/completions", "/completions"):
        streamed, _, _ = asyncio.run(stream_one(openai_server, timeout=5.0, path=path))

        async def plain(path=path):
            async with ChatClient(Endpoint(openai_server.base_url), model="m") as client:
                body = {"prompt": "q"} if path == "/completions" else {"messages": []}
                return await client.send(Request(path, body))

        direct = asyncio.run(plain())
        fields = ("text", "finish_reason", "model_resolved", "system_fingerprint")
        assert [getattr(streamed, f) for f in fields] == [getattr(direct, f) for f in fields]
        assert (streamed.prompt_tokens, streamed.completion_tokens) == (
            direct.prompt_tokens,
            direct.completion_tokens,
        )


def test_a_stream_that_stops_is_given_up_after_the_stall_limit(openai_server):
    openai_server.hang_s = 4.0
    openai_server.faults["m"] = ["stall"]
    result, _, seen = asyncio.run(stream_one(openai_server, timeout=1.0))
    assert result.error["type"] == "timeout" and "no token from" in result.error["message"]
    assert sum(seen) == 2  # the two tokens before it stopped


def test_a_logprobs_request_is_not_streamed(openai_server):
    async def main():
        async with ChatClient(Endpoint(openai_server.base_url), model="m", paced=True) as c:
            return await c.send(Request("/chat/completions", {"messages": [], "logprobs": True}))

    assert asyncio.run(main()).error is None
    assert "stream" not in openai_server.requests[0]["body"]


def test_hostile_streams_end_as_error_completions(openai_server):
    expected = {
        "bad_event": ("invalid_response", "not JSON"),
        "deep_event": ("invalid_response", "nested too deeply"),
        "stream_error": ("api_error", "slot crashed"),
    }
    for fault, (kind, words) in expected.items():
        openai_server.faults["m"] = [fault]
        result, _, _ = asyncio.run(stream_one(openai_server, timeout=5.0))
        assert result.error["type"] == kind and words in result.error["message"], fault
    openai_server.reply = lambda body: "y" * 50_000
    result, _, _ = asyncio.run(stream_one(openai_server, timeout=5.0, max_response_bytes=10_000))
    assert result.error["type"] == "too_large"
