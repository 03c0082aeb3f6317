"""The in-memory probe: a frozen, validated, hashed definition that can score outputs."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from ..errors import ProbeError
from ..scorers import Condition, RubricCheck, Score, Scorer, make_scorer
from ._cases import Case
from ._template import fill

BASE_VARIANT = "base"
# scorers that compare with an expected answer (the probe's, or each case's)
NEEDS_EXPECTED = ("exact_match", "levenshtein", "json_similarity")


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
    case: str | None = None


@dataclass(frozen=True)
class Variant:
    """A paraphrase of a probe's messages or prompt (the same task and scoring, other wording)."""

    id: str
    messages: tuple[Message, ...]
    note: str = ""
    prompt: str | None = None


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
    format: int = 1
    cases: tuple[Case, ...] = ()
    cases_file: str | None = None
    cases_sha256: str | None = None
    variants: tuple[Variant, ...] = ()
    prompt: str | None = None

    @property
    def name(self) -> str:
        """``id@version``, the probe's name everywhere (CLI, results rows, reports)."""
        return f"{self.id}@{self.version}"

    def score(self, output: str | bytes, case: Case | str | None = None) -> Score:
        """Score one output with the probe's deterministic scorer and rubric; for a probe with
        cases, with the scoring inputs of ``case`` (a :class:`Case` or its id): its
        ``expected``, ``schema`` or ``constraints`` where it has them, else the probe's own.

        Example:
            >>> import jevalkit
            >>> jevalkit.load_probe("schema-ten-records").score("```json\\n[]\\n```").checks[0].passed
            False
        """
        if case is None and None in self._scorers:  # the common case, first: no lookups
            return self._scorers[None](output)
        case = self.case(case) if isinstance(case, str) else case
        return self._scorer_for(case)(output)

    @cached_property
    def _scorers(self) -> dict[str | None, Scorer]:
        return {}

    def _scorer_for(self, case: Case | None) -> Scorer:
        """The scorer ``scoring.type`` names, built from the probe's ``scoring`` with ``case``'s
        own ``expected``, ``schema`` or ``constraints`` where it has them; built once per case
        that has its own (a compiled schema is reused), once for all others."""
        fields = case.fields if case is not None else {}
        own = [name for name in ("expected", "schema", "constraints") if name in fields]
        key = case.id if case is not None and own else None
        scorer = self._scorers.get(key)
        if scorer is None:
            spec = {**self.scoring, **{name: fields[name] for name in own}}
            if "constraints" in own:
                spec["constraints"] = {
                    **self.scoring.get("constraints", {}),
                    **fields["constraints"],
                }
            if spec["type"] in NEEDS_EXPECTED and spec.get("expected") is None:
                raise ProbeError(
                    f"{self.name}: the expected answer is per case: name the case (--case ID)"
                )
            scorer = self._scorers[key] = make_scorer(spec, self.rubric)
        return scorer

    def case(self, case_id: str) -> Case:
        """The case with id ``case_id``.

        Example:
            >>> import jevalkit
            >>> jevalkit.load_probe("unit-conversion").case("km-to-m-1").fields["amount"]
            '3'
        """
        for case in self.cases:
            if case.id == str(case_id):
                return case
        if not self.cases:
            raise ProbeError(f"{self.name} has no cases: score it without a case (drop --case)")
        ids = [c.id for c in self.cases]
        close = difflib.get_close_matches(str(case_id), ids, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        shown = ", ".join(ids[:10]) + (f", ... ({len(ids)} in all)" if len(ids) > 10 else "")
        where = self.path if self.path is not None else "the probe"
        if self.path is not None and self.cases_file:
            where = self.path.parent / self.cases_file
        raise ProbeError(
            f"{self.name} has no case {case_id!r}; {hint}its cases: {shown} (every id is in "
            f"{where}; `jevalkit probes show {self.name}` shows the probe)"
        )

    @property
    def variant_ids(self) -> tuple[str, ...]:
        """``base`` (the probe's own messages) and the id of every declared variant."""
        return (BASE_VARIANT, *(v.id for v in self.variants))

    def variant_messages(self, variant: str | None = None) -> tuple[Message, ...]:
        """The messages of ``variant`` (None or ``base``: the probe's own)."""
        if variant is None or variant == BASE_VARIANT:
            return self.messages
        for v in self.variants:
            if v.id == variant:
                return v.messages
        raise ProbeError(
            f"{self.name} has no variant {variant!r}; it has {', '.join(self.variant_ids)}"
        )

    @property
    def prompt_style(self) -> Literal["chat", "completion"]:
        """``chat`` (``messages``, sent to ``/chat/completions``) or ``completion`` (a
        ``prompt`` the model continues, sent to ``/completions``: for base models, which follow
        few-shot text but not chat instructions).

        Example:
            >>> import jevalkit
            >>> jevalkit.load_probe("unit-conversion@1").prompt_style, jevalkit.load_probe("unit-conversion@2").prompt_style
            ('chat', 'completion')
        """
        return "completion" if self.prompt is not None else "chat"

    def variant_prompt(self, variant: str | None = None) -> str | None:
        """The completion prompt of ``variant`` (None or ``base``: the probe's own); None for a
        chat probe."""
        if variant is None or variant == BASE_VARIANT:
            return self.prompt
        self.variant_messages(variant)  # refuses an unknown variant
        return next(v.prompt for v in self.variants if v.id == variant)

    def templates(self, variant: str | None = None) -> list[tuple[str, str]]:
        """``(field, text)`` of every template of ``variant``'s wording: ``messages[i].content``
        of a chat probe, ``prompt`` of a completion probe.

        Example:
            >>> import jevalkit
            >>> [f for f, _ in jevalkit.load_probe("unit-conversion@1").templates()]
            ['messages[0].content', 'messages[1].content']
        """
        prefix = "" if variant is None or variant == BASE_VARIANT else f"variants[{variant}]."
        if self.prompt_style == "completion":
            return [(f"{prefix}prompt", self.variant_prompt(variant) or "")]
        return [
            (f"{prefix}messages[{i}].content", m.content)
            for i, m in enumerate(self.variant_messages(variant))
        ]

    def request_input(self, case: Case | None = None, variant: str | None = None) -> dict[str, Any]:
        """What a request carries besides the parameters: ``{"messages": [...]}`` for a chat
        probe, ``{"prompt": "..."}`` for a completion probe, filled from ``case``.

        Example:
            >>> import jevalkit
            >>> probe = jevalkit.load_probe("unit-conversion@2")
            >>> probe.request_input(probe.cases[0])["prompt"].endswith("3 kilometres?\\nA:")
            True
        """
        if self.prompt_style == "chat":
            return {"messages": self.chat_messages(case, variant)}
        text = self.variant_prompt(variant) or ""
        if case is not None:
            text = fill(text, case.template_fields(), f"{self.name}: case {case.id!r}")
        return {"prompt": text}

    def check_examples(self) -> tuple[ExampleResult, ...]:
        """Run every worked example through the real scorer.

        Example:
            >>> import jevalkit
            >>> all(r.ok for r in jevalkit.load_probe("schema-ten-records@2").check_examples())
            True
        """
        return tuple(ExampleResult(ex, self.score(ex.output, ex.case)) for ex in self.examples)

    def chat_messages(
        self, case: Case | None = None, variant: str | None = None
    ) -> list[dict[str, str]]:
        """The messages as the OpenAI chat API takes them: ``variant``'s wording (default the
        probe's own), its placeholders filled from ``case``.

        Raises:
            ProbeError: the probe is completion-style (use :meth:`request_input`).

        Example:
            >>> import jevalkit
            >>> probe = jevalkit.load_probe("unit-conversion@1")
            >>> "3 kilometres" in probe.chat_messages(probe.cases[0])[-1]["content"]
            True
        """
        if self.prompt_style == "completion":
            raise ProbeError(
                f"{self.name} is completion-style: it has a `prompt`, not chat messages"
            )
        messages = self.variant_messages(variant)
        if case is None:
            return [{"role": m.role, "content": m.content} for m in messages]
        fields = case.template_fields()
        where = f"{self.name}: case {case.id!r}"
        return [{"role": m.role, "content": fill(m.content, fields, where)} for m in messages]


def _messages(items: list[dict[str, Any]]) -> tuple[Message, ...]:
    return tuple(Message(m["role"], m["content"]) for m in items)


def probe_from_dict(
    raw: dict[str, Any],
    content_hash: str,
    path: Path | None,
    cases: tuple[Case, ...] = (),
    cases_sha256: str | None = None,
) -> Probe:
    """Build a :class:`Probe` from a probe file's validated content (and its cases, read by
    the loader)."""
    rubric = tuple(
        RubricCheck(
            id=line["id"],
            text=line["text"],
            fails_on=tuple(Condition.from_dict(c) for c in line.get("fails_on", ())),
        )
        for line in raw["rubric"]
    )
    examples = tuple(
        Example(
            e["label"],
            e["output"],
            e["expect"],
            None if e.get("case") is None else str(e["case"]),
        )
        for e in raw["examples"]
    )
    return Probe(
        id=raw["id"],
        version=raw["version"],
        title=raw["title"],
        description=raw["description"],
        messages=_messages(raw.get("messages", ())),
        prompt=raw.get("prompt"),
        parameters=MappingProxyType(dict(raw["parameters"])),
        rubric=rubric,
        scoring=MappingProxyType(dict(raw["scoring"])),
        examples=examples,
        history=tuple((h["version"], h["note"]) for h in raw["history"]),
        content_hash=content_hash,
        path=path,
        format=raw.get("format", 1),
        cases=cases,
        cases_file=raw["cases"] if isinstance(raw.get("cases"), str) else None,
        cases_sha256=cases_sha256,
        variants=tuple(
            Variant(v["id"], _messages(v.get("messages", ())), v.get("note", ""), v.get("prompt"))
            for v in raw.get("variants", ())
        ),
    )
