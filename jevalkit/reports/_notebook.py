"""What every bundled notebook's setup cell needs: the results to analyse and safe text.

Results, cases and model output are untrusted text: a model named ``<img src=x onerror=...>``
must not run script in whoever opens a report. Notebooks show tables through pandas (which
escapes) and put any value into Markdown or HTML only through :func:`escape_markdown` /
:func:`html.escape`.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pandas as pd

from .._paths import data_dir, runs_dir
from ..io import read_source

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|>~])")


def escape_markdown(value: object) -> str:
    """``value`` as text that Markdown and HTML render literally (no tags, links or emphasis).

    Example:
        >>> escape_markdown("<img src=x onerror=alert(1)> *bold*")
        '&lt;img src=x onerror=alert\\\\(1\\\\)&gt; \\\\*bold\\\\*'
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(str(value), quote=True))


def open_results(
    results: str | Path | None, *, default: str, format: str | None = None
) -> tuple[pd.DataFrame, str]:
    """The results a notebook analyses, and their path: ``results`` when given (read by
    :func:`jevalkit.io.read_source`: ``format`` None tells a jevalkit results file or another
    tool's log by its content), else the bundled real run named ``default``.

    Example:
        >>> df, path = open_results(None, default="schema-ten-records__local-demo.jsonl")
        >>> len(df) > 0, path.endswith("schema-ten-records__local-demo.jsonl")
        (True, True)
    """
    path = str(results) if results is not None else str(runs_dir() / default)
    return read_source(path, format), path


def shown_text(text: object, limit: int = 1200) -> str:
    r"""Model output shortened for a report: whole lines up to ``limit`` characters, then a note
    of how much was left out (never a line cut in the middle). Escape it before showing.

    Example:
        >>> print(shown_text("line one\nline two\nline three", limit=20))
        line one
        line two
        [... 10 more characters]
        >>> shown_text("short")
        'short'
    """
    value = "" if text is None else str(text)
    if len(value) <= limit:
        return value
    cut = value.rfind("\n", 0, limit + 1)
    cut = cut if cut > 0 else limit
    rest = len(value[cut:].lstrip("\n"))
    return f"{value[:cut].rstrip()}\n[... {rest} more characters]"


def table_html(table: pd.DataFrame) -> str:
    """A table as a report shows it: numbers to 4 significant digits, every value escaped, and
    no index unless it carries labels (a crosstab's rows, not 0, 1, 2, ...).

    Example:
        >>> print(table_html(pd.DataFrame({"value": [0.133333], "method": ["<b>"]})))  # doctest: +NORMALIZE_WHITESPACE
        <table border="1" class="dataframe">
          <thead>
            <tr style="text-align: right;">
              <th>value</th>
              <th>method</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <td>0.1333</td>
              <td>&lt;b&gt;</td>
            </tr>
          </tbody>
        </table>
    """
    plain = isinstance(table.index, pd.RangeIndex) and table.index.name is None
    return table.to_html(index=not plain, float_format=lambda v: f"{v:.4g}", na_rep="", escape=True)


def tidy_tables() -> None:
    """Called from a notebook's setup cell: show every DataFrame of this kernel with
    :func:`table_html` (a report is read, not debugged). Outside IPython it does nothing.

    Example:
        >>> tidy_tables()  # no IPython kernel here: nothing to change
    """
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, table_html)


def example_path(name: str) -> Path:
    """A bundled example data file (``data/examples/``), for notebooks' defaults.

    Example:
        >>> example_path("grades.jsonl").is_file()
        True
    """
    return data_dir() / "examples" / name
