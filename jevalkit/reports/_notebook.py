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
from ..io import read
from ..runner import read_results

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
    """The results a notebook analyses, and their path: ``results`` when given (a jevalkit results
    file, or with ``format`` another tool's log read by :func:`jevalkit.io.read`), else the
    bundled real run named ``default``.

    Example:
        >>> df, path = open_results(None, default="schema-ten-records__local-demo.jsonl")
        >>> len(df) > 0, path.endswith("schema-ten-records__local-demo.jsonl")
        (True, True)
    """
    path = str(results) if results is not None else str(runs_dir() / default)
    if format is not None:
        return read(path, format=None if format == "auto" else format), path
    return read_results(path), path


def example_path(name: str) -> Path:
    """A bundled example data file (``data/examples/``), for notebooks' defaults.

    Example:
        >>> example_path("grades.jsonl").is_file()
        True
    """
    return data_dir() / "examples" / name
