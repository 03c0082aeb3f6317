"""ResultsBrowser and CompareView: filter results, read outputs, compare two runs.

Everything shown comes from results: probe and model names, outputs, rubric texts and scorer
messages are untrusted text and are HTML-escaped. Without a widget frontend (a static notebook
export, a terminal), each widget shows the same content as static HTML.
"""

from __future__ import annotations

import html
import json
from typing import Any

import ipywidgets as widgets
import numpy as np
import pandas as pd
import traitlets

from ..errors import StatsError
from ..metrics import compare, pass_rate
from ..results import CASE_COLUMNS, RowsResult, rows_of


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _case_fields(cases: Any) -> dict[str, dict[str, Any]]:
    """Case id -> the fields to show beside an output (the input, the expected answer), from a
    probe's cases (:attr:`jevalkit.probes.Probe.cases`) or a table with ``case_id``."""
    if cases is None:
        return {}
    if isinstance(cases, pd.DataFrame):
        if "case_id" not in cases.columns:
            raise StatsError("cases= needs a 'case_id' column (one row per case)")
        return {
            str(r["case_id"]): {k: v for k, v in r.items() if k != "case_id"}
            for r in cases.to_dict("records")
        }
    return {str(c.id): dict(c.fields) for c in cases}


def _shown(value: Any) -> str:
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


class ResultsBrowser(widgets.VBox):
    """Filter results by probe, system, case, repeat and passed; show an output with its case
    (the id, and with ``cases=`` the case's input and expected answer) and its failing checks.

    Args:
        df: results rows.
        cases: the probe's cases, to show each output beside its case's fields: a probe's
            ``cases`` (``load_probe("contact-extraction@2").cases``) or a table with
            ``case_id`` and the fields (``expected``, ``text``, ...).

    Example:
        >>> df = pd.DataFrame({"probe": ["p", "p"], "model": ["m", "m"], "repeat": [0, 1],
        ...                    "case_id": ["c1", "c2"],
        ...                    "passed": [True, False], "output": ["ok", "bad"], "score_errors": [[], ["$: x"]],
        ...                    "checks": [[], [{"id": "c", "text": "C holds", "passed": False}]]})
        >>> b = ResultsBrowser(df, cases=pd.DataFrame({"case_id": ["c2"], "expected": ["good"]}))
        >>> b.passed_filter = "failed"
        >>> len(b.selection), "C holds" in b.detail.value, "c2" in b.detail.value, "good" in b.detail.value
        (1, True, True, True)
        >>> b.passed_filter = "all"; b.case.value = "c1"; b.selection["output"].tolist()
        ['ok']
    """

    passed_filter = traitlets.Unicode("all")
    index = traitlets.Int(0)

    def __init__(self, df: pd.DataFrame | RowsResult, *, cases: Any = None, **kwargs: Any) -> None:
        self.df = rows_of(df).reset_index(drop=True)  # a run's result: its rows
        self.cases = _case_fields(cases)
        self._who = "system" if "system" in self.df else "model"

        def options(col: str) -> list[str]:
            values = self.df[col].dropna().unique() if col in self.df else []
            return ["all", *sorted(map(str, values))]

        self.probe = widgets.Dropdown(options=options("probe"), description="probe")
        self.model = widgets.Dropdown(options=options(self._who), description=self._who)
        self.case = widgets.Dropdown(options=options("case_id"), description="case")
        self.repeat = widgets.Dropdown(options=options("repeat"), description="repeat")
        self.passed = widgets.ToggleButtons(
            options=["all", "passed", "failed"], description="passed"
        )
        self.slider = widgets.IntSlider(min=0, max=0, description="row")
        self.count = widgets.HTML()
        self.detail = widgets.HTML()
        self.selection = self.df
        for w in (self.probe, self.model, self.case, self.repeat):
            w.observe(lambda _: self._refresh(), "value")
        self.passed.observe(lambda c: setattr(self, "passed_filter", c["new"]), "value")
        self.slider.observe(lambda c: setattr(self, "index", c["new"]), "value")
        super().__init__(
            children=[
                widgets.HBox([self.probe, self.model]),
                widgets.HBox([self.case, self.repeat]),
                self.passed,
                widgets.HBox([self.slider, self.count]),
                self.detail,
            ],
            **kwargs,
        )
        self.add_class("jevalkit-results-browser")
        self._refresh()

    @traitlets.observe("passed_filter", "index")
    def _on_change(self, change: dict) -> None:
        if change["name"] == "passed_filter":
            self.passed.value = change["new"]
        self._refresh()

    def _refresh(self) -> None:
        sel = self.df
        filters = (
            ("probe", self.probe),
            (self._who, self.model),
            ("case_id", self.case),
            ("repeat", self.repeat),
        )
        for col, w in filters:
            if w.value != "all":
                sel = sel[sel[col].astype(str) == w.value]
        if self.passed_filter != "all":
            sel = sel[sel["passed"] == (self.passed_filter == "passed")]
        self.selection = sel.reset_index(drop=True)
        self.slider.max = max(0, len(sel) - 1)
        self.count.value = f"<span class='jevalkit-count'>{len(sel)} of {len(self.df)} rows</span>"
        i = min(self.index, self.slider.max)
        if sel.empty:
            self.detail.value = "<i>no rows match</i>"
            return
        self.detail.value = self._row_html(sel.iloc[i])

    def _row_html(self, row: pd.Series) -> str:
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
        version = row.get("version")
        probe = f"{row.get('probe')}@{version}" if pd.notna(version) else row.get("probe")
        case = row.get("case_id")
        where = [str(probe), str(row.get(self._who))]
        if pd.notna(case):
            where.append(f"case {case}")
        variant = row.get("variant")
        if isinstance(variant, str):
            where.append(f"variant {variant}")
        where += [f"repeat {row.get('repeat')}", f"passed {row.get('passed')}"]
        fields = self.cases.get(str(case), {}) if pd.notna(case) else {}
        shown = "".join(
            f"<tr><th>{_e(k)}</th><td><pre class='jevalkit-case-{_e(k)}'>{_e(_shown(v))}</pre></td></tr>"
            for k, v in fields.items()
        )
        case_html = f"<table class='jevalkit-case'>{shown}</table>" if shown else ""
        return (
            f"<b>{' · '.join(_e(w) for w in where)}</b>{case_html}<ul>{items}</ul>"
            f"<pre class='jevalkit-output' style='max-height:16em;overflow:auto'>"
            f"{_e(row.get('output'))}</pre>"
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
        df_a: pd.DataFrame | RowsResult,
        df_b: pd.DataFrame | RowsResult,
        *,
        names: tuple[str, str] = ("A", "B"),
        case: str | tuple[str, ...] | None = CASE_COLUMNS,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if names[0] == names[1]:
            raise StatsError(f"CompareView needs two different names, got {names[0]!r} twice")
        df_a, df_b = rows_of(df_a), rows_of(df_b)  # runs' results: their rows
        sides = (df_a.assign(system=names[0]), df_b.assign(system=names[1]))  # each one system
        rates = [pass_rate(d, case=case).iloc[0] for d in sides]
        rows = "".join(
            f"<tr><td>{_e(n)}</td><td>{r['n']}</td><td>{r['value']:.2f}</td>"
            f"<td>{r['ci_low']:.2f}–{r['ci_high']:.2f}</td></tr>"
            for n, r in zip(names, rates, strict=True)
        )
        both = pd.concat(sides, ignore_index=True)
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
