"""Judge prompt files: ``data/judges/<evaluator>/v<N>.yaml``, validated and locked like probes.

A file holds the levels (label, the tokens that name it, a description, and for classification
judges the choice-to-score table), the chat prompt, a completion-style prompt that ends right
before the level token, and worked examples that are shown to the model as few-shot examples.
Placeholders are ``{{input}}``, ``{{output}}``, ``{{expected}}``, ``{{context}}``,
``{{criteria}}``, ``{{levels}}`` and ``{{examples}}``.

``kind`` says how the levels are read and is checked against them: ``rubric`` (ordered levels
labelled 0..L; the score is the expected level / L), ``probability`` (two levels; the score is
p(top level)), ``classification`` (named levels, each with a ``score``: the choice-to-score table),
``pairwise`` (the five ordered verdicts ``B>>A``, ``B>A``, ``A=B``, ``A>B``, ``A>>B`` on two
answers; the score is the preference for answer A: 0, 0.25, 0.5, 0.75, 1).

Published versions are immutable: their content hash is in ``data/judges/judges.lock`` and a file
that no longer matches is refused (publish the change as the next version with
``jevalkit judges lock``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema_rs

from .._paths import judges_dir
from ..datafiles import (
    load_yaml,
    parse_ref,
    publish_versions,
    read_lock,
    schema_validator,
    validate_data,
    verify_locked,
    version_files,
)
from ..errors import CaseFileError, JudgeFileError
from ..jsontext import content_hash

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
PAIRWISE_LEVELS = ("B>>A", "B>A", "A=B", "A>B", "A>>B")  # lowest first: the score is A's
_FIELD_NAMES = {"output_a": "Answer A", "output_b": "Answer B", "expected": "Reference answer"}


@cache
def _format_validator() -> jsonschema_rs.Validator:
    text = resources.files(__package__).joinpath("judge_format.schema.json").read_text("utf-8")
    return schema_validator(json.loads(text))


LOCK_NAME = "judges.lock"


@dataclass(frozen=True)
class JudgePrompt:
    """A loaded judge prompt file."""

    id: str
    version: int
    kind: str
    levels: tuple[dict[str, Any], ...]
    inputs: tuple[str, ...]
    chat: dict[str, str]
    completion: str
    examples: tuple[dict[str, Any], ...]
    content_hash: str
    description: str

    @property
    def name(self) -> str:
        """``id@version``."""
        return f"{self.id}@{self.version}"

    @property
    def labels(self) -> list[str]:
        """Level labels, lowest first."""
        return [lv["label"] for lv in self.levels]

    @property
    def level_tokens(self) -> list[list[str]]:
        """For each level, the tokens that name it."""
        return [lv["tokens"] for lv in self.levels]

    @property
    def choice_scores(self) -> list[float] | None:
        """The choice-to-score table of a classification judge (None for ordinal judges)."""
        if all("score" in lv for lv in self.levels):
            return [float(lv["score"]) for lv in self.levels]
        return None

    def _fill(self, template: str, case: dict[str, Any], extra: dict[str, str]) -> str:
        values = {**extra, **{k: _as_text(v) for k, v in case.items() if v is not None}}

        def sub(m: re.Match[str]) -> str:
            return values.get(m.group(1), "")

        return _PLACEHOLDER.sub(sub, template)

    def _levels_text(self) -> str:
        return "\n".join(f"{lv['tokens'][0]}: {lv['description']}" for lv in self.levels)

    def _examples_text(self, case_fields: tuple[str, ...]) -> str:
        blocks = []
        for ex in self.examples:
            parts = [
                f"{_FIELD_NAMES.get(f, f.capitalize())}: {_as_text(ex['case'].get(f, ''))}"
                for f in case_fields
            ]
            token = next(lv["tokens"][0] for lv in self.levels if lv["label"] == ex["level"])
            answer = "Verdict" if self.kind == "pairwise" else "Rating"
            blocks.append("\n".join(parts) + f"\n{answer}: {token}")
        return "\n\n".join(blocks)

    def chat_messages(self, case: dict[str, Any]) -> list[dict[str, str]]:
        """System and user messages asking for a single level token."""
        self.check_case(case)
        extra = {"levels": self._levels_text(), "examples": self._examples_text(self.inputs)}
        return [
            {"role": "system", "content": self._fill(self.chat["system"], case, extra)},
            {"role": "user", "content": self._fill(self.chat["user"], case, extra)},
        ]

    def completion_prompt(self, case: dict[str, Any]) -> str:
        """A completion-style prompt (few-shot examples, then this case) ending at "Rating:"."""
        self.check_case(case)
        extra = {"levels": self._levels_text(), "examples": self._examples_text(self.inputs)}
        return self._fill(self.completion, case, extra)

    def check_case(self, case: dict[str, Any]) -> None:
        """Raise :class:`CaseFileError` when the case lacks a field this judge needs."""
        missing = [f for f in self.inputs if case.get(f) in (None, "")]
        if missing:
            raise CaseFileError(
                f"{self.name} needs case field(s) {missing}; case {case.get('id', '?')!r} lacks them"
            )

    def check_gold(self, gold: Any, where: str) -> None:
        """Raise :class:`CaseFileError` unless ``gold`` is None or one of this judge's levels.

        Example:
            >>> load_judge_prompt("faithfulness").check_gold(9, "cases.jsonl:3")
            Traceback (most recent call last):
            ...
            jevalkit.errors.CaseFileError: cases.jsonl:3: gold: 9 is not a level of faithfulness@1; valid levels: '0', '1', '2', '3', '4'
        """
        if gold is None:
            return
        if (
            isinstance(gold, bool)
            or not isinstance(gold, str | int)
            or str(gold) not in self.labels
        ):
            valid = ", ".join(repr(label) for label in self.labels)
            raise CaseFileError(
                f"{where}: gold: {gold!r} is not a level of {self.name}; valid levels: {valid}"
            )


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _files(folder: Path) -> dict[int, Path]:
    return version_files(folder, JudgeFileError)


def _check_kind(raw: dict[str, Any], path: Path) -> None:
    levels, kind = raw["levels"], raw["kind"]
    labels = [lv["label"] for lv in levels]
    scored = ["score" in lv for lv in levels]
    if kind == "classification" and not all(scored):
        raise JudgeFileError(f"{path}: levels: a classification judge needs a score on every level")
    if kind != "classification" and any(scored):
        raise JudgeFileError(f"{path}: levels: only a classification judge gives levels a score")
    if kind == "probability" and len(levels) != 2:
        raise JudgeFileError(f"{path}: levels: a probability judge has exactly two levels")
    if kind == "pairwise" and labels != list(PAIRWISE_LEVELS):
        raise JudgeFileError(
            f"{path}: levels: a pairwise judge's labels are {', '.join(PAIRWISE_LEVELS)}"
        )
    if kind == "rubric" and labels != [str(i) for i in range(len(labels))]:
        raise JudgeFileError(f"{path}: levels: a rubric judge's labels are '0', '1', ... in order")
    for i, ex in enumerate(raw["examples"]):
        if ex["level"] not in labels:
            raise JudgeFileError(
                f"{path}: examples[{i}].level: {ex['level']!r} is not a level label"
            )


def read_judge_file(path: Path, lock: dict[str, str] | None = None) -> JudgePrompt:
    """Load one judge prompt file: parse, validate, check ``kind`` against the levels and the
    content against ``judges.lock``.

    Raises:
        JudgeFileError: one line naming the file and the field.
    """
    raw = load_yaml(path, JudgeFileError)
    validate_data(
        raw,
        _format_validator(),
        path,
        JudgeFileError,
        " (see the judge format in jevalkit/judges/judge_format.schema.json)",
    )
    if path.parent.name != raw["id"] or path.stem != f"v{raw['version']}":
        raise JudgeFileError(
            f"{path}: id {raw['id']!r} and version {raw['version']} must match the file's place "
            f"data/judges/{raw['id']}/v{raw['version']}.yaml"
        )
    _check_kind(raw, path)
    digest = content_hash(raw)
    lock = read_lock(path.parent.parent / LOCK_NAME, JudgeFileError) if lock is None else lock
    verify_locked(f"{raw['id']}@{raw['version']}", digest, lock, path, JudgeFileError)
    return JudgePrompt(
        id=raw["id"],
        version=raw["version"],
        kind=raw["kind"],
        levels=tuple(raw["levels"]),
        inputs=tuple(raw["inputs"]),
        chat=raw["chat"],
        completion=raw["completion"],
        examples=tuple(raw["examples"]),
        content_hash=digest,
        description=raw["description"],
    )


def load_judge_prompt(ref: str, *, root: Path | None = None) -> JudgePrompt:
    """Load ``"faithfulness"`` (latest) or ``"faithfulness@1"`` (names parsed by the one rule
    probes follow too, :func:`jevalkit.datafiles.parse_ref`).

    Example:
        >>> load_judge_prompt("faithfulness").labels
        ['0', '1', '2', '3', '4']
        >>> load_judge_prompt("faithfulness@01")
        Traceback (most recent call last):
        ...
        jevalkit.errors.JudgeFileError: judge 'faithfulness@01': expected `judge-id` or `judge-id@N` (N a version number)
    """
    root = judges_dir() if root is None else root
    name, version = parse_ref(ref, "judge", JudgeFileError)
    files = _files(root / name)
    if not files:
        known = ", ".join(sorted(p.name for p in root.iterdir() if p.is_dir()))
        raise JudgeFileError(f"unknown judge {name!r}; known: {known}")
    v = version if version is not None else max(files)
    if v not in files:
        raise JudgeFileError(f"judge {name!r} has no version {v}; published: {sorted(files)}")
    return read_judge_file(files[v])


def judge_files(root: Path | None = None) -> list[Path]:
    """Every ``<evaluator>/v<N>.yaml`` under the judges folder, sorted."""
    root = judges_dir() if root is None else root
    return sorted(
        (f for d in sorted(root.iterdir()) if d.is_dir() for f in _files(d).values()),
        key=lambda f: (f.parent.name, int(f.stem[1:])),
    )


def publish_judges(*, root: Path | None = None) -> list[str]:
    """Record the hash of every judge file version not yet in ``judges.lock``; return their names.
    Versions already published are verified, never rewritten."""
    root = judges_dir() if root is None else root
    return publish_versions(
        judge_files(root),
        read_judge_file,
        root / LOCK_NAME,
        JudgeFileError,
        what="judge",
        command="judges",
    )
