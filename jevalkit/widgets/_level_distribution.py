"""LevelDistribution: bars over a judgment's levels, marking the integer verdict and the expected level."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets
import traitlets


def distribution_html(levels: Sequence[str], probs: Sequence[float]) -> str:
    """Static HTML bars (also the fallback when no widget frontend is present).

    Example:
        >>> "expected level 3.21" in distribution_html(list("01234"), [0.02, 0.05, 0.13, 0.30, 0.50])
        True
    """
    expected = math.fsum(i * p for i, p in enumerate(probs))
    verdict = max(range(len(probs)), key=lambda i: (probs[i], -i)) if probs else -1
    rows = []
    for i, (label, p) in enumerate(zip(levels, probs, strict=True)):
        colour = "#2c6fbb" if i == verdict else "#9bb8d9"
        rows.append(
            f"<div class='jevalkit-bar-row' style='display:flex;align-items:center;gap:.5em;margin:2px 0'>"
            f"<span style='width:4em;text-align:right'>{html.escape(str(label))}</span>"
            f"<span class='jevalkit-bar' data-level='{i}' style='display:inline-block;height:1.1em;"
            f"width:{max(p, 0) * 20:.2f}em;background:{colour}'></span><span>{p:.0%}</span></div>"
        )
    marker = (
        (
            f"<div style='margin-top:.4em'>integer verdict <b>{html.escape(str(levels[verdict]))}</b> · "
            f"expected level {expected:.2f}</div>"
        )
        if probs
        else ""
    )
    return f"<div class='jevalkit-level-distribution'>{''.join(rows)}{marker}</div>"


class LevelDistribution(widgets.VBox):
    """Bars over the levels; updates when ``probs`` changes.

    Attributes (traitlets): ``probs``, ``levels``; read-only derived ``expected_level`` and
    ``verdict`` (the argmax level's label).

    Example:
        >>> w = LevelDistribution([0.02, 0.05, 0.13, 0.30, 0.50])
        >>> w.verdict, round(w.expected_level, 2)
        ('4', 3.21)
        >>> w.probs = [0.5, 0.3, 0.1, 0.05, 0.05]
        >>> w.verdict
        '0'
    """

    probs = traitlets.List(traitlets.Float())
    levels = traitlets.List(traitlets.Unicode())
    expected_level = traitlets.Float(0.0, read_only=True)
    verdict = traitlets.Unicode("", read_only=True)

    def __init__(
        self, probs: Sequence[float], levels: Sequence[str] | None = None, **kwargs: Any
    ) -> None:
        self._bars = widgets.HTML()
        super().__init__(children=[self._bars], **kwargs)
        with self.hold_trait_notifications():
            self.levels = (
                list(levels) if levels is not None else [str(i) for i in range(len(probs))]
            )
            self.probs = [float(p) for p in probs]

    @traitlets.validate("probs")
    def _check(self, proposal: dict) -> list[float]:
        probs = proposal["value"]
        total = math.fsum(probs)
        if any(p < 0 for p in probs) or (probs and abs(total - 1) > 1e-6):
            raise traitlets.TraitError(
                f"probs must be non-negative and sum to 1, got sum {total:.4f}"
            )
        return probs

    @traitlets.observe("probs", "levels")
    def _update(self, change: dict) -> None:
        if len(self.levels) != len(self.probs):
            self.levels = [str(i) for i in range(len(self.probs))]
            return
        self.set_trait("expected_level", math.fsum(i * p for i, p in enumerate(self.probs)))
        verdict = (
            max(range(len(self.probs)), key=lambda i: (self.probs[i], -i)) if self.probs else None
        )
        self.set_trait("verdict", self.levels[verdict] if verdict is not None else "")
        self._bars.value = distribution_html(self.levels, self.probs)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        bundle["text/html"] = self._bars.value  # shown where no widget frontend runs
        return bundle
