"""Results objects: for answers that are more than one table.

A :class:`Result` is a frozen dataclass with named fields; ``.table()`` (alias
``summary_frame()``, as statsmodels' ``PredictionResults.summary_frame``) gives its tidy view,
``_repr_html_`` shows that view in Jupyter (escaped), and it still unpacks into its fields, as
statsmodels' ``HolderTuple`` does, so ``estimate, low, high, *_ = result`` keeps working.
Nothing a statistic returns travels in ``DataFrame.attrs``.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd


class Result:
    """The base of results objects (subclasses are frozen dataclasses). ``_unpack`` names the
    fields that unpack (all by default), so a result that replaced a tuple unpacks as it did.

    Example:
        >>> @dataclasses.dataclass(frozen=True)
        ... class Interval(Result):
        ...     estimate: float
        ...     low: float
        ...     high: float
        ...     method: str = "t"
        >>> r = Interval(0.5, 0.2, 0.8)
        >>> est, low, high, _ = r
        >>> r.table().to_dict("records")
        [{'estimate': 0.5, 'low': 0.2, 'high': 0.8, 'method': 't'}]
        >>> r.scalars()["high"]
        0.8
        >>> "<table" in r._repr_html_()
        True
        >>> r.to_dict()
        {'estimate': 0.5, 'low': 0.2, 'high': 0.8, 'method': 't'}
    """

    _unpack: tuple[str, ...] = ()

    def _fields(self) -> list[str]:
        return [f.name for f in dataclasses.fields(self)]  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[Any]:
        return (getattr(self, name) for name in (self._unpack or self._fields()))

    def __len__(self) -> int:
        return len(self._unpack or self._fields())

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, str):  # a column name: the table has it, the result has fields
            field = f", or the field .{index}" if index in self._fields() else ""
            raise TypeError(
                f"{type(self).__name__} is a results object: read its table with "
                f".table()[{index!r}]{field}"
            )
        return tuple(self)[index]

    def scalars(self) -> dict[str, Any]:
        """The fields that are single numbers, flags or text, by name (what a report's headline
        takes in one call; NaN stays NaN)."""
        row = {}
        for name in self._fields():
            value = getattr(self, name)
            if isinstance(value, np.generic):  # numpy's scalars as Python's (JSON-ready)
                value = value.item()
            if isinstance(value, bool | int | float | str) or value is None:
                row[name] = value
        return row

    def table(self) -> pd.DataFrame:
        """The tidy view: one row of the scalar fields (subclasses with tables override it)."""
        return pd.DataFrame([self.scalars()])

    def summary_frame(self) -> pd.DataFrame:
        """The same as :meth:`table` (statsmodels' name)."""
        return self.table()

    def to_dict(self) -> dict[str, Any]:
        """The shown fields as plain data (a table as its records): a report's headline
        numbers in one call. Fields kept out of the repr (bootstrap draws, fit internals) are
        left out."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if f.repr:
                value = getattr(self, f.name)
                out[f.name] = value.to_dict("records") if isinstance(value, pd.DataFrame) else value
        return out

    def _repr_html_(self) -> str:
        title = html.escape(type(self).__name__)
        body = self.table().to_html(index=False, escape=True, na_rep="")
        method = getattr(self, "method", "")
        note = f"<p><small>{html.escape(str(method))}</small></p>" if method else ""
        return f"<div><strong>{title}</strong>{body}{note}</div>"


def as_table(answer: Any) -> pd.DataFrame:
    """Any statistic's answer as a table: a DataFrame as it is, a :class:`Result` by its
    ``table()``, a mapping as one row, a number as one row with ``value``.

    Example:
        >>> as_table(0.25).to_dict("records"), as_table({"a": 1}).to_dict("records")
        ([{'value': 0.25}], [{'a': 1}])
    """
    if isinstance(answer, pd.DataFrame):
        return answer
    if isinstance(answer, Result):
        return answer.table()
    if isinstance(answer, dict):
        return pd.DataFrame([answer])
    if isinstance(answer, int | float):
        return pd.DataFrame({"value": [float(answer)]})
    table = getattr(answer, "table", None)
    if callable(table):
        return table()
    raise TypeError(f"cannot show a {type(answer).__name__} as a table")
