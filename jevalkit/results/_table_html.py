"""A table as a report shows it, in one place: the report notebooks' DataFrames and the results
objects' ``_repr_html_`` both go through :func:`table_html`, so a statistic in a cell looks
like the report.

Numbers to 4 significant digits, every value escaped, no row index unless it carries labels,
a dict in a cell as ``key=value, ...`` (never a raw dict dump), and the ``method`` columns (long sentences naming how a number was computed) moved out of the
rows into footnotes under the table: a method repeated on every row squeezes the numbers.
"""

from __future__ import annotations

import html

import pandas as pd


def _is_method(column: object) -> bool:
    name = str(column)
    return name == "method" or name.startswith("method_") or name.endswith("_method")


def _labelled_index(table: pd.DataFrame) -> bool:
    """Whether the index says something (a crosstab's rows, a named index), not 0, 1, 2, ...
    left over from a filter or a sort."""
    index = table.index
    if any(name is not None for name in index.names):
        return True
    return not pd.api.types.is_integer_dtype(index.dtype)


def _mapping_text(value: object) -> object:
    """A dict in a cell (a design's levels) as ``case=40, variant=3``, not a raw dict dump."""
    if not isinstance(value, dict):
        return value
    return ", ".join(
        f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in value.items()
    )


def table_html(table: pd.DataFrame, *, max_rows: int | None = None) -> str:
    """``table`` as report HTML: numbers to 4 significant digits, values escaped, no index
    unless it carries labels, and each ``method`` column as footnotes (one note when every row
    has the same method; else a mark per row and one note per distinct method). With
    ``max_rows``, the first rows only and a note of how many there are.

    Example:
        >>> t = pd.DataFrame({"value": [0.133333, 0.5], "method": ["<b>", "<b>"]}, index=[3, 7])
        >>> print(table_html(t))  # doctest: +NORMALIZE_WHITESPACE
        <div class="jevalkit-table"><table border="1" class="dataframe">
          <thead>
            <tr style="text-align: right;">
              <th>value</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <td>0.1333</td>
            </tr>
            <tr>
              <td>0.5</td>
            </tr>
          </tbody>
        </table><p class="jevalkit-method"><small>method: &lt;b&gt;</small></p></div>
        >>> "[2]" in table_html(pd.DataFrame({"x": [1, 2], "method": ["a", "b"]}))
        True
        >>> "the first 2 of 3 rows" in table_html(pd.DataFrame({"x": [1, 2, 3]}), max_rows=2)
        True
        >>> "<td>case=40, variant=3</td>" in table_html(pd.DataFrame({"design": [{"case": 40, "variant": 3}]}))
        True
    """
    notes: list[str] = []
    if max_rows is not None and len(table) > max_rows:
        notes.append(f"the first {max_rows} of {len(table)} rows")
        table = table.head(max_rows)
    shown = table.copy()
    for column in [c for c in table.columns if _is_method(c)]:
        values = table[column]
        if isinstance(values, pd.DataFrame):  # two columns of one name: left as they are
            continue
        distinct = list(dict.fromkeys(str(v) for v in values.dropna()))
        if not distinct:
            shown = shown.drop(columns=[column])
        elif len(distinct) == 1:
            shown = shown.drop(columns=[column])
            notes.append(f"{column}: {distinct[0]}")
        else:
            start = len(notes)
            marks = {text: f"[{start + i + 1}]" for i, text in enumerate(distinct)}
            shown[column] = [marks.get(str(v), "") if pd.notna(v) else "" for v in values]
            notes.extend(f"{marks[text]} {column}: {text}" for text in distinct)
    for i in range(shown.shape[1]):
        cells = shown.iloc[:, i]
        if cells.dtype == "object" and cells.map(lambda v: isinstance(v, dict)).any():
            shown.isetitem(i, cells.map(_mapping_text))
    body = shown.to_html(
        index=_labelled_index(table),
        float_format=lambda v: f"{v:.4g}",
        na_rep="",
        escape=True,
    )
    footer = "".join(
        f'<p class="jevalkit-method"><small>{html.escape(note)}</small></p>' for note in notes
    )
    return f'<div class="jevalkit-table">{body}{footer}</div>'
