"""A streamed answer (``stream: true``, server-sent events) read back into the body the same
request would have had without streaming, token by token.

The embedded model is asked this way: each token arrives as its own event, so a client sees the
server working on a long generation (and its speed) while it is under way, instead of seeing
nothing until the last token. Only the fields jevalkit reads are kept (the text, the finish
reason, the usage, the model and fingerprint); a stream that is not valid JSON is handed back as
it came, so it fails exactly as a bad non-streamed body does.
"""

from __future__ import annotations

import json
from typing import Any

STREAM_FIELDS = {"stream": True, "stream_options": {"include_usage": True}}
DONE = b"[DONE]"


def streamable(body: dict[str, Any]) -> bool:
    """Whether a request can be streamed and read back: one choice and no logprobs (a judge's
    logprobs request is one token long, and servers lay streamed logprobs out differently).

    Example:
        >>> streamable({"messages": [], "max_tokens": 400}), streamable({"logprobs": True})
        (True, False)
    """
    return (
        not body.get("stream")
        and not body.get("logprobs")
        and "n_probs" not in body
        and body.get("n", 1) in (1, None)
    )


class StreamReader:
    """Collect the events of one streamed answer; :meth:`body` is the answer as one JSON body.

    Example:
        >>> reader = StreamReader(chat=True)
        >>> for event in (b'data: {"model": "m", "choices": [{"delta": {"content": "Hi"}}]}',
        ...               b'data: {"choices": [{"delta": {}, "finish_reason": "stop"}]}',
        ...               b'data: {"choices": [], "usage": {"completion_tokens": 1}}',
        ...               b"data: [DONE]"):
        ...     tokens = reader.feed(event)
        >>> reader.done, reader.body()["choices"][0]["message"]["content"]
        (True, 'Hi')
    """

    def __init__(self, *, chat: bool) -> None:
        self.chat = chat
        self.done = False
        self.bad: bytes | None = None  # the first event that is not a JSON object
        self._parts: list[str] = []
        self._finish: Any = None
        self._head: dict[str, Any] = {}
        self._usage: Any = None
        self._error: Any = None
        self._seen_choice = False

    def feed(self, line: bytes) -> int:
        """Read one line of the stream; return how many tokens it carried (0 or 1)."""
        line = line.strip()
        if not line.startswith(b"data:") or self.done or self.bad is not None:
            return 0  # blank lines, comments (": ping"), event names
        data = line[5:].strip()
        if data == DONE:
            self.done = True
            return 0
        try:
            event = json.loads(data)
        except (ValueError, RecursionError):
            event = None
        if not isinstance(event, dict):
            self.bad = data
            return 0
        if event.get("error"):
            self._error = event["error"]
            return 0
        for name in ("id", "created", "model", "system_fingerprint"):
            if name in event:
                self._head[name] = event[name]
        if "usage" in event and event["usage"] is not None:
            self._usage = event["usage"]
        choices = event.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return 0
        choice = choices[0]
        self._seen_choice = True
        if choice.get("finish_reason") is not None:
            self._finish = choice["finish_reason"]
        delta = choice.get("delta") if self.chat else choice
        text = delta.get("content" if self.chat else "text") if isinstance(delta, dict) else None
        if isinstance(text, str) and text:
            self._parts.append(text)
            return 1
        return 0

    def body(self) -> dict[str, Any]:
        """The answer as a non-streamed body (``{"error": ...}`` when the stream sent one)."""
        if self._error is not None:
            return {"error": self._error}
        if not self._seen_choice:
            return {**self._head}
        text = "".join(self._parts)
        choice: dict[str, Any] = {"index": 0, "finish_reason": self._finish}
        if self.chat:
            choice["message"] = {"role": "assistant", "content": text}
        else:
            choice["text"] = text
        out: dict[str, Any] = {**self._head, "choices": [choice]}
        out["object"] = "chat.completion" if self.chat else "text_completion"
        if self._usage is not None:
            out["usage"] = self._usage
        return out
