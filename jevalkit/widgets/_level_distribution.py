"""LevelDistribution: bars over a judgment's levels, marking the integer verdict and the expected
level, and, given calibration labels, the item's conformal level set."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets
import numpy as np
import traitlets

from ..errors import UsageError
from ..judges import expected_level
from ..reports import distribution_html
from ..stats import level_sets


class LevelDistribution(widgets.VBox):
    """Bars over the levels; updates when ``probs`` changes.

    Attributes (traitlets): ``probs``, ``levels``; read-only derived ``expected_level`` (the
    judge's own: sum of p_i * i, the levels numbered 0, 1, ... as listed, whatever their labels:
    :func:`jevalkit.judges.expected_level`) and ``verdict`` (the argmax level's label);
    ``level_set`` (level indexes) and ``coverage``: the item's conformal level set
    (:func:`jevalkit.stats.level_sets`), made from ``calibration_probs`` and
    ``calibration_levels`` (items people labelled: the judge's probabilities and the person's
    level, a label or an index) when they are given, and again whenever ``probs`` changes; or
    given directly as ``level_set``.

    Example:
        >>> w = LevelDistribution([0.02, 0.05, 0.13, 0.30, 0.50])
        >>> w.verdict, round(w.expected_level, 2)
        ('4', 3.21)
        >>> w.probs = [0.5, 0.3, 0.1, 0.05, 0.05]
        >>> w.verdict
        '0'
        >>> round(LevelDistribution([0.1, 0.2, 0.7], levels=["1", "2", "3"]).expected_level, 2)
        1.6
        >>> cal = [[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]] * 10
        >>> w = LevelDistribution([0.55, 0.45], levels=["safe", "unsafe"], calibration_probs=cal,
        ...                       calibration_levels=["safe", "unsafe", "unsafe"] * 10, coverage=0.9)
        >>> w.level_set, "90% level set" in w._bars.value
        ([0, 1], True)
        >>> w.probs = [0.95, 0.05]; w.level_set
        [0]
    """

    probs = traitlets.List(traitlets.Float())
    levels = traitlets.List(traitlets.Unicode())
    expected_level = traitlets.Float(0.0, read_only=True)
    verdict = traitlets.Unicode("", read_only=True)
    level_set = traitlets.List(traitlets.Int())
    coverage = traitlets.Float(None, allow_none=True)

    def __init__(
        self,
        probs: Sequence[float],
        levels: Sequence[str] | None = None,
        *,
        level_set: Sequence[int] | None = None,
        coverage: float | None = None,
        calibration_probs: Any = None,
        calibration_levels: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._bars = widgets.HTML()
        self._calibration = None
        super().__init__(children=[self._bars], **kwargs)
        with self.hold_trait_notifications():
            self.levels = (
                list(levels) if levels is not None else [str(i) for i in range(len(probs))]
            )
            if (calibration_probs is None) != (calibration_levels is None):
                raise UsageError(
                    "give calibration_probs and calibration_levels together (the judge's "
                    "probabilities on items people labelled, and their levels)"
                )
            if calibration_probs is not None and calibration_levels is not None:
                self._calibration = (calibration_probs, self._indexes(calibration_levels))
                coverage = 0.9 if coverage is None else coverage
            self.coverage = coverage
            self.level_set = [int(i) for i in level_set or ()]
            self.probs = [float(p) for p in probs]

    def _indexes(self, given: Sequence[Any]) -> list[int]:
        """Calibration levels as indexes: a level's label (a text), or its index 0..k-1 (a whole
        number; so levels labelled "1".."5" are told apart from indexes)."""
        where = {label: i for i, label in enumerate(self.levels)}
        out = []
        for value in given:
            if isinstance(value, str) and value in where:
                out.append(where[value])
            elif (
                isinstance(value, int | np.integer)
                and not isinstance(value, bool)
                and 0 <= value < len(self.levels)
            ):
                out.append(int(value))
            else:
                raise UsageError(
                    f"calibration level {value!r} is not one of the levels {self.levels}"
                )
        return out

    @traitlets.validate("probs")
    def _check(self, proposal: dict) -> list[float]:
        probs = proposal["value"]
        total = math.fsum(probs)
        if any(p < 0 for p in probs) or (probs and abs(total - 1) > 1e-6):
            raise traitlets.TraitError(
                f"probs must be non-negative and sum to 1, got sum {total:.4f}"
            )
        return probs

    @traitlets.observe("probs", "levels", "level_set", "coverage")
    def _update(self, change: dict) -> None:
        if len(self.levels) != len(self.probs):
            self.levels = [str(i) for i in range(len(self.probs))]
            return
        self.set_trait("expected_level", expected_level(self.probs))
        verdict = (
            max(range(len(self.probs)), key=lambda i: (self.probs[i], -i)) if self.probs else None
        )
        self.set_trait("verdict", self.levels[verdict] if verdict is not None else "")
        if self._calibration is not None and self.probs:
            cal_probs, cal_levels = self._calibration
            made = level_sets(
                [self.probs],
                cal_probs,
                cal_levels,
                # traitlets' stubs read Float(allow_none=True) as int | None
                coverage=self.coverage,  # type: ignore[arg-type]
            )
            self.level_set = made.sets[0]
        self._bars.value = distribution_html(
            self.levels, self.probs, level_set=self.level_set or None, coverage=self.coverage
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        bundle["text/html"] = self._bars.value  # shown where no widget frontend runs
        return bundle
