"""Systems of known skill on unit-conversion@1's 40 cases, answered by the loopback server, for
the race tests (tests/runner/test_run_race.py and the Dask test)."""

from __future__ import annotations

import hashlib

import jevalkit

PROBE = "unit-conversion@1"  # 40 cases
SKILL = {"good": 1.0, "mid": 0.6, "twin": 0.6, "bad": 0.0}


def answerer(probe_name: str = PROBE, skill: dict[str, float] | None = None):
    """The server's reply: each model right on a case with its skill (a fixed draw per model
    and case; ``twin`` answers exactly as ``mid``); and each case's user message by index."""
    skill = SKILL if skill is None else skill
    probe = jevalkit.load_probe(probe_name)
    gold = {
        asked(probe.request_input(c, None)): (j, c.fields["expected"])
        for j, c in enumerate(probe.cases)
    }

    def reply(body):
        model = "mid" if body["model"] == "twin" else body["model"]
        j, answer = gold[asked(body)]
        u = int(hashlib.sha256(f"{model}{j}".encode()).hexdigest()[:8], 16) / 2**32
        return answer if u < skill[model] else "no idea"

    return reply, {j: content for content, (j, _) in gold.items()}


def asked(body: dict) -> str:
    """What a request asks: its last message (chat) or its prompt (completion)."""
    return body["messages"][-1]["content"] if "messages" in body else body["prompt"]
