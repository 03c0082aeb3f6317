"""Judge prompt files: ``data/judges/<evaluator>/v<N>.yaml``, validated and hashed like probes.

A file holds the levels (label, the tokens that name it, a description, and for classification
judges the choice-to-score table), the chat prompt, a completion-style prompt that ends right
before the level token, and worked examples that are shown to the model as few-shot examples.
Placeholders are ``{{input}}``, ``{{output}}``, ``{{expected}}``, ``{{context}}``,
``{{criteria}}``, ``{{levels}}`` and ``{{examples}}``.
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
import yaml

from .._paths import data_dir
from ..errors import ProbeError
from ..probes import content_hash
from ..probes._loader import field_path

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@cache
def _format_validator() -> jsonschema_rs.Validator:
    text = resources.files(__package__).joinpath("judge_format.schema.json").read_text("utf-8")
    return jsonschema_rs.Draft202012Validator(json.loads(text), offline=True)


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
            parts = [f"{f.capitalize()}: {_as_text(ex['case'].get(f, ''))}" for f in case_fields]
            token = next(lv["tokens"][0] for lv in self.levels if lv["label"] == ex["level"])
            blocks.append("\n".join(parts) + f"\nRating: {token}")
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
        """Raise when the case lacks a field this judge needs."""
        missing = [f for f in self.inputs if case.get(f) in (None, "")]
        if missing:
            raise ProbeError(
                f"{self.name} needs case field(s) {missing}; case {case.get('id', '?')!r} lacks them"
            )


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def judges_dir() -> Path:
    """The folder of judge prompt files."""
    return data_dir() / "judges"


def load_judge_prompt(ref: str, *, root: Path | None = None) -> JudgePrompt:
    """Load ``"faithfulness"`` (latest) or ``"faithfulness@1"``.

    Example:
        >>> load_judge_prompt("faithfulness").labels
        ['0', '1', '2', '3', '4']
    """
    root = judges_dir() if root is None else root
    name, _, version = ref.partition("@")
    folder = root / name
    files = {int(p.stem[1:]): p for p in folder.glob("v*.yaml") if p.stem[1:].isdigit()}
    if not files:
        known = ", ".join(sorted(p.name for p in root.iterdir() if p.is_dir()))
        raise ProbeError(f"unknown judge {name!r}; known: {known}")
    v = int(version) if version else max(files)
    if v not in files:
        raise ProbeError(f"judge {name!r} has no version {v}")
    path = files[v]
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ProbeError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None
    error = next(iter(_format_validator().iter_errors(raw)), None)
    if error is not None:
        raise ProbeError(f"{path}: {field_path(error.instance_path)}: {error.message}")
    labels = {lv["label"] for lv in raw["levels"]}
    for i, ex in enumerate(raw["examples"]):
        if ex["level"] not in labels:
            raise ProbeError(f"{path}: examples[{i}].level: {ex['level']!r} is not a level label")
    return JudgePrompt(
        id=raw["id"], version=raw["version"], kind=raw["kind"], levels=tuple(raw["levels"]),
        inputs=tuple(raw["inputs"]), chat=raw["chat"], completion=raw["completion"],
        examples=tuple(raw["examples"]), content_hash=content_hash(raw),
        description=raw["description"],
    )  # fmt: skip
