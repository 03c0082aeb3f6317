"""The in-memory probe: a frozen, validated, hashed definition that can score outputs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from ..scorers import Condition, RubricCheck, Score, Scorer, make_scorer


@dataclass(frozen=True)
class Message:
    """One chat message exactly as it is sent."""

    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class Example:
    """A worked example: an output and whether the real scorer must pass or fail it."""

    label: str
    output: str
    expect: Literal["pass", "fail"]


@dataclass(frozen=True)
class ExampleResult:
    """A worked example after scoring: ``ok`` is true when the score agrees with ``expect``."""

    example: Example
    score: Score

    @property
    def ok(self) -> bool:
        """True when a ``pass`` example scored 1 or a ``fail`` example scored below 1."""
        perfect = self.score.value >= 1.0 and self.score.passed
        return perfect if self.example.expect == "pass" else not perfect


@dataclass(frozen=True)
class Probe:
    """A versioned, immutable probe. Build one with :func:`jevalkit.load_probe`.

    Example:
        >>> import jevalkit
        >>> probe = jevalkit.load_probe("schema-ten-records@2")
        >>> probe.name, probe.parameters["max_tokens"]
        ('schema-ten-records@2', 1700)
        >>> probe.score("[]").passed
        False
    """

    id: str
    version: int
    title: str
    description: str
    messages: tuple[Message, ...]
    parameters: Mapping[str, Any]
    rubric: tuple[RubricCheck, ...]
    scoring: Mapping[str, Any]
    examples: tuple[Example, ...]
    history: tuple[tuple[int, str], ...]
    content_hash: str
    path: Path | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        """``id@version``, the probe's name everywhere (CLI, results rows, reports)."""
        return f"{self.id}@{self.version}"

    def score(self, output: str | bytes) -> Score:
        """Score one output with the probe's deterministic scorer and rubric.

        Example:
            >>> import jevalkit
            >>> jevalkit.load_probe("schema-ten-records").score("```json\\n[]\\n```").checks[0].passed
            False
        """
        return self._scorer(output)

    @cached_property
    def _scorer(self) -> Scorer:
        """The scorer ``scoring.type`` names, built once (a compiled schema is reused)."""
        return make_scorer(self.scoring, self.rubric)

    def check_examples(self) -> tuple[ExampleResult, ...]:
        """Run every worked example through the real scorer.

        Example:
            >>> import jevalkit
            >>> all(r.ok for r in jevalkit.load_probe("schema-ten-records@2").check_examples())
            True
        """
        return tuple(ExampleResult(ex, self.score(ex.output)) for ex in self.examples)

    def chat_messages(self) -> list[dict[str, str]]:
        """The messages as the OpenAI chat API takes them."""
        return [{"role": m.role, "content": m.content} for m in self.messages]


def probe_from_dict(raw: dict[str, Any], content_hash: str, path: Path | None) -> Probe:
    """Build a :class:`Probe` from a probe file's validated content."""
    rubric = tuple(
        RubricCheck(
            id=line["id"],
            text=line["text"],
            fails_on=tuple(Condition.from_dict(c) for c in line.get("fails_on", ())),
        )
        for line in raw["rubric"]
    )
    return Probe(
        id=raw["id"],
        version=raw["version"],
        title=raw["title"],
        description=raw["description"],
        messages=tuple(Message(m["role"], m["content"]) for m in raw["messages"]),
        parameters=MappingProxyType(dict(raw["parameters"])),
        rubric=rubric,
        scoring=MappingProxyType(dict(raw["scoring"])),
        examples=tuple(Example(e["label"], e["output"], e["expect"]) for e in raw["examples"]),
        history=tuple((h["version"], h["note"]) for h in raw["history"]),
        content_hash=content_hash,
        path=path,
    )
