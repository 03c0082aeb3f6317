"""LevelDistribution: bars over a judgment's levels, marking the integer verdict and the expected level."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets
import traitlets

from ..judges import expected_level
from ..reports import distribution_html


class LevelDistribution(widgets.VBox):
    """Bars over the levels; updates when ``probs`` changes.

    Attributes (traitlets): ``probs``, ``levels``; read-only derived ``expected_level`` (the
    judge's own: sum of p_i * i, the levels numbered 0, 1, ... as listed, whatever their labels:
    :func:`jevalkit.judges.expected_level`) and ``verdict`` (the argmax level's label).

    Example:
        >>> w = LevelDistribution([0.02, 0.05, 0.13, 0.30, 0.50])
        >>> w.verdict, round(w.expected_level, 2)
        ('4', 3.21)
        >>> w.probs = [0.5, 0.3, 0.1, 0.05, 0.05]
        >>> w.verdict
        '0'
        >>> round(LevelDistribution([0.1, 0.2, 0.7], levels=["1", "2", "3"]).expected_level, 2)
        1.6
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
        self.set_trait("expected_level", expected_level(self.probs))
        verdict = (
            max(range(len(self.probs)), key=lambda i: (self.probs[i], -i)) if self.probs else None
        )
        self.set_trait("verdict", self.levels[verdict] if verdict is not None else "")
        self._bars.value = distribution_html(self.levels, self.probs)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        bundle["text/html"] = self._bars.value  # shown where no widget frontend runs
        return bundle
