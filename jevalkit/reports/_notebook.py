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
from ..datafiles import parse_ref
from ..errors import ReportError
from ..io import read_source, read_sources
from ..results import table_html

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|>~])")


def escape_markdown(value: object) -> str:
    """``value`` as text that Markdown and HTML render literally (no tags, links or emphasis).

    Example:
        >>> escape_markdown("<img src=x onerror=alert(1)> *bold*")
        '&lt;img src=x onerror=alert\\\\(1\\\\)&gt; \\\\*bold\\\\*'
        >>> print(escape_markdown("starts with 'If there' & ends"))
        starts with 'If there' &amp; ends
    """
    # quotes are left as they are (safe in text, never an attribute here): their entity
    # (``&#x27;``), escaped for Markdown (``&\#x27;``), showed as that text in probe_summary.md
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(str(value), quote=False))


def open_results(
    results: str | Path | list[str | Path] | tuple[str | Path, ...] | None,
    *,
    default: str,
    format: str | None = None,
) -> tuple[pd.DataFrame, str]:
    """The results a notebook analyses, and their path: ``results`` when given (read by
    :func:`jevalkit.io.read_source`: ``format`` None tells a jevalkit results file or another
    tool's log by its content; several files are read as one frame, refused when two hold the
    same row key: :func:`jevalkit.io.read_sources`), else the bundled file ``default``: a real run of ``data/runs/`` by its name,
    or ``examples/NAME`` for a simulated example of ``data/examples/``. Several files' paths
    are returned joined by a comma and a space.

    Example:
        >>> df, path = open_results(None, default="schema-ten-records__local-demo.jsonl")
        >>> len(df) > 0, path.endswith("schema-ten-records__local-demo.jsonl")
        (True, True)
        >>> open_results(None, default="examples/variants.jsonl")[0]["variant"].nunique()
        3
    """
    if isinstance(results, list | tuple):
        paths = [str(p) for p in results]
        return read_sources(paths, format), ", ".join(paths)
    bundled = data_dir() / default if "/" in default else runs_dir() / default
    path = str(results) if results is not None else str(bundled)
    return read_source(path, format), path


def probe_names(results: pd.DataFrame) -> pd.Series:
    """Each row's probe as ``id@version`` (empty text for rows that name no probe).

    Example:
        >>> probe_names(pd.DataFrame({"probe": ["p", "p"], "version": [2, 4]})).tolist()
        ['p@2', 'p@4']
    """
    if "probe" not in results or "version" not in results:
        return pd.Series("", index=results.index, dtype=object)
    version = results["version"].map(lambda v: "" if pd.isna(v) else f"@{int(v)}")
    return (results["probe"].fillna("").astype(str) + version).astype(object)


def probe_names_held(results: pd.DataFrame) -> dict[str, int]:
    """The probe versions (``id@N``) the results hold, with their numbers of rows, in order.

    Example:
        >>> probe_names_held(pd.DataFrame({"probe": ["p", "p", "q"], "version": [2, 2, 1]}))
        {'p@2': 2, 'q@1': 1}
    """
    names = probe_names(results)
    names = names[names.str.contains("@", regex=False)]
    return {str(k): int(v) for k, v in names.value_counts(sort=False).items()}


def report_probe(
    results: pd.DataFrame, probe: object = None, *, required: bool = False
) -> tuple[str, pd.DataFrame]:
    """The probe version a report is about and its rows: ``probe`` (``id@N``, or ``id`` when the
    results hold one version of it), else the one version the results hold. With no rows of a
    named probe, its name and no rows (a report says "not yet run"), or, ``required``, refused.

    Raises:
        ReportError: ``probe`` is not text naming a probe; the results hold several versions and
            none was chosen (or ``id`` names several); ``required`` and none of its rows.

    Example:
        >>> df = pd.DataFrame({"probe": ["p", "p", "q"], "version": [2, 4, 1]})
        >>> report_probe(df[df["probe"] == "q"])[0]
        'q@1'
        >>> report_probe(df, "p@4")[0], len(report_probe(df, "p@4")[1])
        ('p@4', 1)
        >>> report_probe(df)
        Traceback (most recent call last):
        ...
        jevalkit.errors.ReportError: the results hold 3 probe versions (p@2: 1 row(s), p@4: 1 row(s), q@1: 1 row(s)); choose one: -p probe p@2
        >>> report_probe(df, 3)
        Traceback (most recent call last):
        ...
        jevalkit.errors.ReportError: -p probe 3: name a probe as text, id or id@N (e.g. -p probe p@2)
    """
    held = probe_names_held(results)
    example = next(iter(held), "schema-ten-records@4")
    if probe is not None and not isinstance(probe, str):
        raise ReportError(
            f"-p probe {probe!r}: name a probe as text, id or id@N (e.g. -p probe {example})"
        )
    listing = ", ".join(f"{name}: {n} row(s)" for name, n in held.items())
    if probe is None or not probe.strip():
        if len(held) == 1:
            probe = example
        elif not held:
            raise ReportError("the results hold no probe rows; give results of a probe run")
        else:
            raise ReportError(
                f"the results hold {len(held)} probe versions ({listing}); choose one: "
                f"-p probe {example}"
            )
    probe_id, version = parse_ref(probe, "probe", ReportError)
    if version is None:
        mine = [name for name in held if name.split("@")[0] == probe_id]
        if len(mine) > 1:
            raise ReportError(
                f"-p probe {probe}: the results hold {len(mine)} versions of it "
                f"({', '.join(mine)}); choose one: -p probe {mine[-1]}"
            )
        name = mine[0] if mine else probe_id
    else:
        name = f"{probe_id}@{version}"
    if name in held:
        keep = (results["probe"] == probe_id) & (results["version"] == int(name.split("@")[1]))
        return name, results[keep]
    if required:
        others = f"they hold {listing}: -p probe {example}" if held else "they hold none"
        raise ReportError(f"the results hold no rows of {name}; {others}")
    return name, results.iloc[0:0]


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


def _note(message: Warning | str, *where: object, **more: object) -> None:
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
