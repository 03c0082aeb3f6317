"""Labeler: label judged outputs one at a time in JupyterLab, each label saved at once.

Shows one item (input, output, optional reference; the judge's distribution only when asked, so
it does not anchor the labeller), a button per level, skip and back. Keys work too: the key box
takes a level's number (1 = the lowest level), ``s`` to skip, ``b`` to go back. Every label is
appended to the labels file and fsynced before the next item shows, so a kernel that dies loses
nothing; a new Labeler on the same file and labeller resumes at the first item not yet done.
Everything shown is model output or user data: it is HTML-escaped.
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pandas as pd

from ..errors import UsageError
from ..labels import append_label, label_record, read_labels
from ..reports import distribution_html

KEY_HELP = "keys: 1..{k} label, s skip, b back"


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


class Labeler(widgets.VBox):
    """Label the items of ``df`` at ``levels``, writing each label to ``out`` at once.

    Args:
        df: the items to label, one per row: ``case_id`` and ``output`` (``system``, ``input``,
            ``expected``/``reference``, ``probs`` and ``sampling_probability`` when there; a
            :func:`jevalkit.labels.label_sample` of the judged results has them all).
        levels: the level labels, lowest first.
        out: the labels file (append-only JSONL).
        labeller: who is labelling (recorded in every label).
        show_judge: also show the judge's distribution (off by default: it anchors).

    Example:
        >>> import tempfile
        >>> items = pd.DataFrame({"system": "m", "case_id": ["a", "b"], "output": ["<b>x</b>", "y"]})
        >>> out = tempfile.mkdtemp() + "/labels.jsonl"
        >>> lab = Labeler(items, levels=["bad", "good"], out=out, labeller="ann")
        >>> "&lt;b&gt;x&lt;/b&gt;" in lab.card.value
        True
        >>> lab.press("2"); lab.position, read_labels(out)["level"].tolist()
        (1, ['good'])
        >>> Labeler(items, levels=["bad", "good"], out=out, labeller="ann").position  # resumes
        1
    """

    def __init__(
        self,
        df: pd.DataFrame,
        *,
        levels: list[str],
        out: str | Path,
        labeller: str = "anonymous",
        show_judge: bool = False,
        **kwargs: Any,
    ) -> None:
        if "case_id" not in df.columns or "output" not in df.columns:
            raise UsageError("Labeler needs 'case_id' and 'output' columns (one row per item)")
        if len(levels) < 2 or len(set(map(str, levels))) != len(levels):
            raise UsageError(f"levels must be two or more distinct labels, got {levels!r}")
        self.items = df.reset_index(drop=True)
        if "sampling_probability" in self.items.columns:  # refused now, not at the n-th click
            for i, prob in enumerate(self.items["sampling_probability"]):
                if prob is not None and not (isinstance(prob, float) and math.isnan(prob)):
                    try:  # the record the click would write, checked as it will be
                        label_record("", "", None, "", prob)
                    except UsageError as exc:
                        raise UsageError(f"item {i}: {exc}") from None
        if "system" not in self.items.columns:
            self.items["system"] = "all"
        self.levels = [str(level) for level in levels]
        self.out = Path(out)
        self.labeller = str(labeller)
        self.show_judge = show_judge
        self.position = self._first_unlabelled()
        self.card = widgets.HTML()
        self.progress = widgets.HTML()
        self.buttons = [
            widgets.Button(description=f"{i + 1}: {level}", tooltip=level)
            for i, level in enumerate(self.levels)
        ]
        for i, button in enumerate(self.buttons):
            button.on_click(lambda _, i=i: self.label(self.levels[i]))
        self.skip_button = widgets.Button(description="skip")
        self.skip_button.on_click(lambda _: self.label(None))
        self.back_button = widgets.Button(description="back")
        self.back_button.on_click(lambda _: self.back())
        self.key_box = widgets.Text(
            placeholder=KEY_HELP.format(k=len(self.levels)),
            continuous_update=True,
            layout=widgets.Layout(width="22em"),
        )
        self.key_box.add_class("jevalkit-labeler-keys")
        self.key_box.observe(self._on_key, "value")
        super().__init__(
            children=[
                self.progress,
                self.card,
                widgets.HBox([*self.buttons, self.skip_button, self.back_button]),
                self.key_box,
            ],
            **kwargs,
        )
        self.add_class("jevalkit-labeler")
        self._show()

    def _done_keys(self) -> set[tuple[str, str]]:
        if not self.out.exists():
            return set()
        done = read_labels(self.out, include_skipped=True)
        mine = done[done["labeller"] == self.labeller]
        return set(zip(mine["system"], mine["case_id"], strict=True))

    def _first_unlabelled(self) -> int:
        done = self._done_keys()
        for i, row in self.items.iterrows():
            if (str(row["system"]), str(row["case_id"])) not in done:
                return int(i)
        return len(self.items)

    def _on_key(self, change: dict) -> None:
        text = change["new"]
        if not text:
            return
        self.key_box.value = ""
        self.press(text[-1])

    def press(self, key: str) -> None:
        """Act on one key: a level number, ``s`` (skip) or ``b`` (back)."""
        if key in ("s", "S"):
            self.label(None)
        elif key in ("b", "B"):
            self.back()
        elif key.isdigit() and 1 <= int(key) <= len(self.levels):
            self.label(self.levels[int(key) - 1])

    def label(self, level: str | None) -> None:
        """Label the current item (None: skip it) and move to the next."""
        if self.position >= len(self.items):
            return
        row = self.items.iloc[self.position]
        prob = row.get("sampling_probability") if "sampling_probability" in row else None
        prob = None if prob is None or pd.isna(prob) else float(prob)
        strategy = row.get("strategy") if "strategy" in row else None
        strategy = None if strategy is None or pd.isna(strategy) else str(strategy)
        append_label(
            self.out,
            label_record(row["system"], row["case_id"], level, self.labeller, prob, strategy),
        )
        self.position += 1
        self._show()

    def back(self) -> None:
        """Show the previous item again (a new label replaces the old one)."""
        self.position = max(0, self.position - 1)
        self._show()

    def _show(self) -> None:
        total = len(self.items)
        shown = min(self.position + 1, total)
        self.progress.value = (
            f"<span class='jevalkit-labeler-progress'>{shown} / {total}</span> "
            f"<small>({_e(self.labeller)} &rarr; {_e(self.out.name)})</small>"
        )
        if self.position >= total:
            self.card.value = "<p class='jevalkit-labeler-done'>All items labelled.</p>"
            return
        row = self.items.iloc[self.position]
        parts = [
            f"<p><b>case</b> {_e(row['case_id'])} &middot; <b>system</b> {_e(row['system'])}</p>"
        ]
        for name in ("input", "expected", "reference"):
            if (
                name in row
                and row[name] is not None
                and not (isinstance(row[name], float) and pd.isna(row[name]))
            ):
                parts.append(f"<p><b>{name}</b></p><pre>{_e(row[name])}</pre>")
        parts.append(
            f"<p><b>output</b></p><pre class='jevalkit-labeler-output'>{_e(row['output'])}</pre>"
        )
        if self.show_judge and "probs" in row and isinstance(row["probs"], list | tuple):
            parts.append(distribution_html(self.levels, list(row["probs"])))
        self.card.value = "".join(parts)
