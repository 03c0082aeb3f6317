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
