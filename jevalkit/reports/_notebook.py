"""What every bundled notebook's setup cell needs: the results to analyse and safe text.

Results, cases and model output are untrusted text: a model named ``<img src=x onerror=...>``
must not run script in whoever opens a report. Notebooks show tables through pandas (which
escapes) and put any value into Markdown or HTML only through :func:`escape_markdown` /
:func:`html.escape`.
"""

from __future__ import annotations

import html
import re
import warnings
from pathlib import Path

import pandas as pd

from .._paths import data_dir, runs_dir
from ..io import read_source
from ..results import table_html

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
    tool's log by its content), else the bundled file ``default``: a real run of ``data/runs/``
    by its name, or ``examples/NAME`` for a simulated example of ``data/examples/``.

    Example:
        >>> df, path = open_results(None, default="schema-ten-records__local-demo.jsonl")
        >>> len(df) > 0, path.endswith("schema-ten-records__local-demo.jsonl")
        (True, True)
        >>> open_results(None, default="examples/variants.jsonl")[0]["variant"].nunique()
        3
    """
    bundled = data_dir() / default if "/" in default else runs_dir() / default
    path = str(results) if results is not None else str(bundled)
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


def tidy_tables() -> None:
    """Show every DataFrame of this kernel with :func:`jevalkit.results.table_html` (a report
    is read, not debugged: 4 significant digits, no index of 0, 1, 2, methods as footnotes).
    Outside IPython it does nothing.

    Example:
        >>> tidy_tables()  # no IPython kernel here: nothing to change
    """
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, table_html)


_NOTES: dict[str, None] = {}  # this kernel's warnings, in order, each once


def _note(message, category, filename, lineno, file=None, line=None) -> None:
    """``warnings.showwarning`` in a report's kernel: the message kept as a note, without the
    file, the line of code or the category a stderr warning prints."""
    text = " ".join(str(message).split())
    _NOTES.setdefault(text, None)


def collect_notes() -> None:
    """Called from a report's setup cell: every warning from here on becomes a short note
    (shown by :func:`show_notes` at the end, and saved in the headline as ``notes``) instead of
    a stderr box naming a temporary file and a line of code the reader cannot see.

    Example:
        >>> import warnings
        >>> saved = warnings.showwarning
        >>> collect_notes(); warnings.warn("fewer than 2 cases"); notes()
        ['fewer than 2 cases']
        >>> collect_notes(); warnings.showwarning = saved  # cleared, and the hook undone
    """
    _NOTES.clear()
    warnings.showwarning = _note  # the filters stay as they are: what would show is noted


def notes() -> list[str]:
    """The notes collected so far (see :func:`collect_notes`), each once, its whitespace
    collapsed.

    Example:
        >>> import warnings
        >>> saved = warnings.showwarning
        >>> collect_notes(); warnings.warn("a  note\\n  on two lines"); warnings.warn("a note on two lines"); notes()
        ['a note on two lines']
        >>> collect_notes(); warnings.showwarning = saved
    """
    return list(_NOTES)


def show_notes() -> None:
    """Display the collected notes as a short "Notes" list (nothing when there are none).

    Example:
        >>> show_notes()  # no IPython display here and no notes: nothing shown
    """
    if not _NOTES:
        return
    from IPython.display import HTML, display

    items = "".join(f"<li>{html.escape(text)}</li>" for text in _NOTES)
    display(HTML(f"<h2>Notes</h2><ul class='jevalkit-notes'>{items}</ul>"))


def report_setup() -> None:
    """A report notebook's setup: tables as the report shows them (:func:`tidy_tables`) and
    warnings as notes (:func:`collect_notes`).

    Example:
        >>> import warnings
        >>> saved = warnings.showwarning
        >>> report_setup(); warnings.showwarning is saved  # outside a kernel: the hook only
        False
        >>> warnings.showwarning = saved
    """
    tidy_tables()
    collect_notes()


def example_path(name: str) -> Path:
    """A bundled example data file (``data/examples/``), for notebooks' defaults.

    Example:
        >>> example_path("grades.jsonl").is_file()
        True
    """
    return data_dir() / "examples" / name
