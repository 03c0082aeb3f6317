"""ResultsBrowser and CompareView: filter results, read outputs, compare two runs.

Everything shown comes from results: probe and model names, outputs, rubric texts and scorer
messages are untrusted text and are HTML-escaped. Without a widget frontend (a static notebook
export, a terminal), each widget shows the same content as static HTML.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets
import numpy as np
import pandas as pd
import traitlets

from ..contract import CASE_COLUMNS
from ..errors import StatsError
from ..metrics import compare, pass_rate


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


class ResultsBrowser(widgets.VBox):
    """Filter results by probe, model, repeat and passed; show an output with its failing checks.

    Example:
        >>> df = pd.DataFrame({"probe": ["p", "p"], "model": ["m", "m"], "repeat": [0, 1],
        ...                    "passed": [True, False], "output": ["ok", "bad"], "score_errors": [[], ["$: x"]],
        ...                    "checks": [[], [{"id": "c", "text": "C holds", "passed": False}]]})
        >>> b = ResultsBrowser(df)
        >>> b.passed_filter = "failed"
        >>> len(b.selection), "C holds" in b.detail.value
        (1, True)
    """

    passed_filter = traitlets.Unicode("all")
    index = traitlets.Int(0)

    def __init__(self, df: pd.DataFrame, **kwargs: Any) -> None:
        self.df = df.reset_index(drop=True)

        def options(col: str) -> list[str]:
            values = self.df[col].dropna().unique() if col in self.df else []
            return ["all", *sorted(map(str, values))]

        self.probe = widgets.Dropdown(options=options("probe"), description="probe")
        self.model = widgets.Dropdown(options=options("model"), description="model")
        self.repeat = widgets.Dropdown(options=options("repeat"), description="repeat")
        self.passed = widgets.ToggleButtons(
            options=["all", "passed", "failed"], description="passed"
        )
        self.slider = widgets.IntSlider(min=0, max=0, description="row")
        self.detail = widgets.HTML()
        self.selection = self.df
        for w in (self.probe, self.model, self.repeat):
            w.observe(lambda _: self._refresh(), "value")
        self.passed.observe(lambda c: setattr(self, "passed_filter", c["new"]), "value")
        self.slider.observe(lambda c: setattr(self, "index", c["new"]), "value")
        super().__init__(
            children=[
                widgets.HBox([self.probe, self.model]),
                widgets.HBox([self.repeat, self.passed]),
                self.slider,
                self.detail,
            ],
            **kwargs,
        )
        self._refresh()

    @traitlets.observe("passed_filter", "index")
    def _on_change(self, change: dict) -> None:
        if change["name"] == "passed_filter":
            self.passed.value = change["new"]
        self._refresh()

    def _refresh(self) -> None:
        sel = self.df
        for col, w in (("probe", self.probe), ("model", self.model), ("repeat", self.repeat)):
            if w.value != "all":
                sel = sel[sel[col].astype(str) == w.value]
        if self.passed_filter != "all":
            sel = sel[sel["passed"] == (self.passed_filter == "passed")]
        self.selection = sel.reset_index(drop=True)
        self.slider.max = max(0, len(sel) - 1)
        i = min(self.index, self.slider.max)
        if sel.empty:
            self.detail.value = "<i>no rows match</i>"
            return
        row = sel.iloc[i]
        checks = row.get("checks")
        failing = [
            c.get("text", "")
            for c in (checks if isinstance(checks, list) else [])
            if isinstance(c, dict) and c.get("passed") is False
        ]
        errors = row.get("score_errors")
        items = "".join(
            f"<li>{_e(t)}</li>" for t in failing + list(errors if isinstance(errors, list) else [])
        )
        self.detail.value = (
            f"<b>{_e(row.get('probe'))} · {_e(row.get('model'))} · repeat {_e(row.get('repeat'))}"
            f" · passed {_e(row.get('passed'))}</b><ul>{items}</ul>"
            f"<pre style='max-height:16em;overflow:auto'>{_e(row.get('output'))}</pre>"
        )

    def static_html(self) -> str:
        """What the widget shows, as static HTML: the row count and the current row."""
        return f"<div><p>{len(self.selection)} of {len(self.df)} rows</p>{self.detail.value}</div>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        bundle["text/html"] = self.static_html()  # shown where no widget frontend runs
        return bundle


class CompareView(widgets.HTML):
    """Side-by-side pass rates (with 95% CIs) of two result sets and the difference of their
    scores, exactly as :func:`jevalkit.metrics.compare` computes it: paired by case (``case=``;
    repeats averaged within a case, never paired by repeat), with the interval and test that
    function chooses for this many cases, named under the numbers.

    Example:
        >>> a = pd.DataFrame({"case_id": list("abcd") * 2, "repeat": [0] * 4 + [1] * 4,
        ...                   "passed": [True] * 8, "score": [1.0, 0.9, 0.8, 1.0] * 2})
        >>> b = a.assign(score=[0.5, 0.9, 0.4, 0.8] * 2)
        >>> v = CompareView(a, b, case="case_id")
        >>> round(v.difference, 3), v.n_cases
        (0.275, 4)
    """

    difference = traitlets.Float(np.nan, allow_none=True)
    n_cases = traitlets.Int(0)

    def __init__(
        self,
        df_a: pd.DataFrame,
        df_b: pd.DataFrame,
        *,
        names: tuple[str, str] = ("A", "B"),
        case: str | tuple[str, ...] | None = CASE_COLUMNS,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if names[0] == names[1]:
            raise StatsError(f"CompareView needs two different names, got {names[0]!r} twice")
        rates = [pass_rate(d, case=case).iloc[0] for d in (df_a, df_b)]
        rows = "".join(
            f"<tr><td>{_e(n)}</td><td>{r['n']}</td><td>{r['value']:.2f}</td>"
            f"<td>{r['ci_low']:.2f}–{r['ci_high']:.2f}</td></tr>"
            for n, r in zip(names, rates, strict=True)
        )
        both = pd.concat(
            [df_a.assign(system=names[0]), df_b.assign(system=names[1])], ignore_index=True
        )
        metric = "mean_score" if "score" in both and both["score"].notna().any() else "pass_rate"
        row = compare(both, names[1], by=None, case=case, metrics=[metric]).iloc[0]
        self.difference = float(row["delta"])
        self.n_cases = int(row["n_paired"])
        p_value = "" if pd.isna(row["p_value"]) else f"; {_e(row['test'])} p = {row['p_value']:.3g}"
        diff_html = (
            f"<p>{metric.replace('_', ' ')} difference {_e(names[0])} − {_e(names[1])}: "
            f"{row['delta']:+.3f} (95% CI {row['ci_low']:+.3f} to {row['ci_high']:+.3f}, "
            f"{self.n_cases} case(s) both ran{p_value})<br><small>{_e(row['method'])}</small></p>"
        )
        self.value = (
            "<table><tr><th></th><th>n</th><th>pass rate</th><th>95% CI</th></tr>"
            f"{rows}</table>{diff_html}"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        bundle["text/html"] = self.value  # shown where no widget frontend runs
        return bundle
