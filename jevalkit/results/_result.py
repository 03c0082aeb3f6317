"""Results objects: for answers that are more than one table (every statistic's, a run's, the
facts about results rows).

A :class:`Result` is a frozen dataclass with named fields; ``.table()`` (alias
``summary_frame()``, as statsmodels' ``PredictionResults.summary_frame``) gives its tidy view,
``_repr_html_`` shows that view in Jupyter (escaped), and it still unpacks into its fields, as
statsmodels' ``HolderTuple`` does, so ``estimate, low, high, *_ = result`` keeps working.
A :class:`RowsResult` is one whose answer is rows with facts beside them (a run's results rows
and why it stopped; simulated rows and the truth they were drawn from): every statistic takes it
where it takes a results frame (:func:`rows_of`). Nothing a statistic or a run returns travels in
``DataFrame.attrs``.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from ._table_html import table_html


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

    _unpack: tuple[str, ...] | None = ()
    # None: the answer is a table of many rows (a ranking, a G-study: what was a DataFrame);
    # it neither unpacks nor has a length, since len() or a loop over it would silently count
    # or walk its fields instead of its rows

    def _fields(self) -> list[str]:
        return [f.name for f in dataclasses.fields(self)]  # type: ignore[arg-type]

    def _unpacked(self, what: str) -> tuple[str, ...]:
        if self._unpack is None:
            raise TypeError(
                f"{type(self).__name__} is a results object: its rows are .table() ({what})"
            )
        return self._unpack or tuple(self._fields())

    def __iter__(self) -> Iterator[Any]:
        return (getattr(self, name) for name in self._unpacked("iterate over result.table()"))

    def __len__(self) -> int:
        return len(self._unpacked("len(result.table())"))

    def __bool__(self) -> bool:  # a result is an answer, however many rows its table has
        return self._unpack is None or len(self) > 0

    def __contains__(self, item: object) -> bool:
        if isinstance(item, str) and self._unpack is None:  # a column asked of a table's answer
            raise TypeError(
                f"{type(self).__name__} is a results object: its columns are .table().columns "
                f"({item!r} in result.table())"
            )
        return item in tuple(self)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, str):  # a column name: the table has it, the result has fields
            field = f", or the field .{index}" if index in self._fields() else ""
            raise TypeError(
                f"{type(self).__name__} is a results object: read its table with "
                f".table()[{index!r}]{field}"
            )
        names = self._unpacked("result.table().iloc[...]")
        return tuple(getattr(self, name) for name in names)[index]

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
        """The table as a report shows it (:func:`table_html`: 4 significant digits, escaped,
        methods as footnotes), under the result's name."""
        title = html.escape(type(self).__name__)
        table = self.table()
        method = getattr(self, "method", "")
        note = (
            f"<p class='jevalkit-method'><small>method: {html.escape(str(method))}</small></p>"
            if method and isinstance(method, str) and "method" not in table.columns
            else ""
        )
        return (
            f"<div class='jevalkit-result'><strong>{title}</strong>{table_html(table)}{note}</div>"
        )


ROWS_SHOWN = 20  # the rows a results object shows in Jupyter (all are in .rows)


@dataclasses.dataclass(frozen=True, eq=False)
class RowsResult(Result):
    """The base of results objects whose answer is rows (results rows: a DataFrame with the
    documented columns) with named facts beside them, e.g. :class:`jevalkit.runner.RunResult`.

    Every public statistic takes one wherever it takes a results frame (``@estimator`` passes
    its ``rows`` on, as :func:`rows_of` does), and ``.table()`` is the rows. It has no length
    and does not unpack (a frame's length or columns read off a results object would be a wrong
    answer, not an error): the rows are ``.rows``.

    Example:
        >>> @dataclasses.dataclass(frozen=True, eq=False)
        ... class Drawn(RowsResult):
        ...     seed: int = 0
        >>> r = Drawn(pd.DataFrame({"score": [1.0, 0.0]}), seed=3)
        >>> len(r.rows), r.table()["score"].tolist(), r.scalars()
        (2, [1.0, 0.0], {'seed': 3})
        >>> len(r)
        Traceback (most recent call last):
        ...
        TypeError: Drawn is a results object: its rows are .rows (len(result.rows))
    """

    rows: pd.DataFrame = dataclasses.field(repr=False)

    def _refuse(self, what: str) -> TypeError:
        return TypeError(f"{type(self).__name__} is a results object: its rows are .rows ({what})")

    def __len__(self) -> int:
        raise self._refuse("len(result.rows)")

    def __iter__(self) -> Iterator[Any]:
        raise self._refuse("iterate over result.rows")

    def __contains__(self, item: object) -> bool:
        raise self._refuse(f"{item!r} in result.rows")

    def __getitem__(self, index: Any) -> Any:
        if not isinstance(index, str):  # a mask, a slice, a list of columns
            raise self._refuse("result.rows[...]")
        field = f", or the field .{index}" if index in self._fields() else ""
        raise self._refuse(f"result.rows[{index!r}]{field}")

    def __getattr__(self, name: str) -> Any:
        # only for names the result lacks: a frame's method or column asked of the result
        if not name.startswith("__") and hasattr(pd.DataFrame, name):
            raise AttributeError(
                f"{type(self).__name__} is a results object: its rows are .rows "
                f"(result.rows.{name})"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def table(self) -> pd.DataFrame:
        """The rows."""
        return self.rows

    def _facts(self) -> dict[str, pd.DataFrame]:
        """The fields shown as tables beside the rows (tables of the subclass's fields)."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.repr and isinstance(value, Result):
                value = value.table()
            if f.repr and isinstance(value, pd.DataFrame):
                out[f.name] = value
        return out

    def _repr_html_(self) -> str:
        """The facts, each table field, and the first rows (every value escaped)."""
        title = html.escape(f"{type(self).__name__}: {len(self.rows)} row(s)")
        facts = "".join(
            f"<li>{html.escape(name)}: {html.escape(str(value))}</li>"
            for name, value in self.scalars().items()
        )
        tables = "".join(
            f"<p>{html.escape(name)}</p>{table_html(table, max_rows=ROWS_SHOWN)}"
            for name, table in self._facts().items()
        )
        return (
            f"<div class='jevalkit-result'><strong>{title}</strong><ul>{facts}</ul>{tables}"
            f"<p>rows</p>{table_html(self.rows, max_rows=ROWS_SHOWN)}</div>"
        )


def rows_of(data: Any) -> Any:
    """The rows of a :class:`RowsResult`; anything else as it is. Every statistic's input
    passes through it (``@estimator`` applies it to each argument), so a run's result is a
    results frame to all of them.

    Example:
        >>> frame = pd.DataFrame({"score": [1.0]})
        >>> rows_of(frame) is frame, rows_of(RowsResult(frame)) is frame
        (True, True)
    """
    return data.rows if isinstance(data, RowsResult) else data
