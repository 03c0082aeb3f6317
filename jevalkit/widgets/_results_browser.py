"""ResultsBrowser and CompareView: filter results, read outputs, compare two runs."""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets
import pandas as pd
import traitlets

from ..metrics import pass_rate
from ..stats import paired_difference


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
        opts = lambda col: ["all", *sorted(map(str, self.df[col].dropna().unique()))]  # noqa: E731
        self.probe = widgets.Dropdown(options=opts("probe"), description="probe")
        self.model = widgets.Dropdown(options=opts("model"), description="model")
        self.repeat = widgets.Dropdown(options=opts("repeat"), description="repeat")
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
        super().__init__(children=[widgets.HBox([self.probe, self.model]), widgets.HBox([self.repeat, self.passed]),
                                   self.slider, self.detail], **kwargs)  # fmt: skip
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
        failing = [c["text"] for c in (row.get("checks") or []) if c.get("passed") is False]
        items = "".join(
            f"<li>{html.escape(t)}</li>" for t in failing + list(row.get("score_errors") or [])
        )
        self.detail.value = (f"<b>{html.escape(str(row.get('probe')))} · {html.escape(str(row.get('model')))} · "
                             f"repeat {row.get('repeat')} · passed {row.get('passed')}</b><ul>{items}</ul>"
                             f"<pre style='max-height:16em;overflow:auto'>{html.escape(str(row.get('output')))}</pre>")  # fmt: skip


class CompareView(widgets.HTML):
    """Side-by-side pass rates (with 95% CIs) of two result sets and their paired difference
    (paired by case and repeat).

    Example:
        >>> a = pd.DataFrame({"probe": "p", "repeat": [0, 1, 2], "passed": [True, True, False], "score": [1.0, 1.0, 0.0]})
        >>> b = a.assign(passed=[False, True, False], score=[0.0, 1.0, 0.0])
        >>> v = CompareView(a, b)
        >>> round(v.difference, 3)
        0.333
    """

    difference = traitlets.Float()

    def __init__(
        self,
        df_a: pd.DataFrame,
        df_b: pd.DataFrame,
        *,
        names: tuple[str, str] = ("A", "B"),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        rates = [pass_rate(d).iloc[0] for d in (df_a, df_b)]
        keys = [
            c for c in ("probe", "case_id", "repeat") if c in df_a.columns and c in df_b.columns
        ]
        merged = df_a.merge(df_b, on=keys, suffixes=("_a", "_b"))
        rows = "".join(f"<tr><td>{n}</td><td>{r['n']}</td><td>{r['value']:.2f}</td>"
                       f"<td>{r['ci_low']:.2f}–{r['ci_high']:.2f}</td></tr>" for n, r in zip(names, rates, strict=True))  # fmt: skip
        diff_html = ""
        if len(merged) >= 2:
            d = paired_difference(
                merged["score_a"].astype(float), merged["score_b"].astype(float)
            ).iloc[0]
            self.difference = float(d["value"])
            diff_html = (f"<p>paired difference {names[0]} − {names[1]}: {d['value']:+.3f} "
                         f"(95% CI {d['ci_low']:+.3f} to {d['ci_high']:+.3f}, n = {d['n']})</p>")  # fmt: skip
        self.value = ("<table><tr><th></th><th>n</th><th>pass rate</th><th>95% CI</th></tr>"
                      f"{rows}</table>{diff_html}")  # fmt: skip
