"""Run a parameterised notebook with papermill and export it to HTML, side by side."""

from __future__ import annotations

import ast
import json
import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._paths import data_dir, notebooks_dir
from .._version import __version__
from ..errors import ReportError
from ..files import check_name, open_regular, read_text, write_file
from ..results import json_ready
from ._export import export_html
from ._notebook import notes, show_notes

ALWAYS_INJECTED = ("headline_path",)


@contextmanager
def quiet_kernel() -> Iterator[None]:
    """Silence what papermill and jupyter_client log while a report runs: the parameters were
    checked already (:func:`check_parameters`), and a kernel on 127.0.0.1 over TCP without
    encryption is how every local Jupyter kernel runs, not news to the reader (the kernel's own
    warning is silenced by its ``--IPKernelApp.log_level=CRITICAL``)."""
    names = ("papermill", "traitlets", "jupyter_client", "nbclient")
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


@dataclass(frozen=True)
class Report:
    """Where a report went: the executed notebook, its HTML export and the headline numbers."""

    notebook: Path
    html: Path
    headline: Path

    def numbers(self) -> Any:
        """The headline numbers the notebook saved."""
        return json.loads(read_text(self.headline, ReportError, max_bytes=MAX_NOTEBOOK_BYTES))


def bundled_notebooks() -> list[str]:
    """The names of the bundled notebooks.

    Example:
        >>> "probe_report" in bundled_notebooks()
        True
    """
    return sorted(p.stem for p in notebooks_dir().glob("*.ipynb"))


def find_notebook(name: str | Path) -> Path:
    """A notebook path, or a name of a bundled notebook (with or without ``.ipynb``).

    Example:
        >>> find_notebook("probe_report").name
        'probe_report.ipynb'
    """
    path = Path(name)
    if path.is_file():
        return path
    candidate = notebooks_dir() / (path.name if path.suffix == ".ipynb" else f"{path.name}.ipynb")
    if candidate.is_file():
        return candidate
    raise ReportError(
        f"no notebook {str(name)!r}; bundled notebooks: {', '.join(bundled_notebooks())}"
    )


def declared_parameters(notebook: Path) -> dict[str, Any]:
    """The parameters a notebook declares in its cell tagged ``parameters`` (papermill's reading).

    Example:
        >>> sorted(declared_parameters(find_notebook("probe_report")))
        ['headline_path', 'probe', 'results', 'results_format']
    """
    import papermill

    read_notebook(notebook)
    try:
        return dict(papermill.inspect_notebook(str(notebook)))
    except Exception as exc:  # papermill raises several types for an unreadable notebook
        raise ReportError(f"{notebook}: cannot read its parameters ({_first_line(exc)})") from None


MAX_NOTEBOOK_BYTES = 64 * 1024**2


def _first_line(exc: BaseException) -> str:
    """An exception's message on one line, at most 160 characters (nbformat's span several)."""
    text = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    text = text or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def read_notebook(path: str | Path) -> Any:
    """The notebook at ``path`` (nbformat 4), read by the one reader rule (a regular file of
    at most 64 MB) and validated; anything else is one line naming the file.

    Example:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "x.ipynb"
        >>> _ = p.write_text("[1, 2]")
        >>> read_notebook(p)
        Traceback (most recent call last):
        ...
        jevalkit.errors.ReportError: .../x.ipynb: not a notebook (...)
    """
    import nbformat

    text = read_text(path, ReportError, max_bytes=MAX_NOTEBOOK_BYTES, what="notebook")
    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # nbformat raises several types, with several lines each
        raise ReportError(f"{path}: not a notebook ({_first_line(exc)})") from None
    return nb


def declared_default(spec: dict[str, Any]) -> Any:
    """The default a notebook declares for a parameter (papermill's ``default`` text read as a
    Python literal), or None when it is not a literal.

    Example:
        >>> declared_default({"default": '"probe_report.headline.json"'})
        'probe_report.headline.json'
        >>> declared_default({"default": "[10, 20]"}), declared_default({"default": "f(x)"})
        ([10, 20], None)
    """
    try:
        return ast.literal_eval(str(spec.get("default")))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _kind(value: Any) -> str | None:
    """The kind of a parameter value a default declares: text, a number, true/false or a list
    (None: any, for a default of None)."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, str):
        return "text"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a dict"
    return None


def check_parameters(notebook: Path, parameters: dict[str, Any]) -> None:
    """Refuse parameter names that are not Python identifiers or not declared by the notebook
    (papermill pastes names into code: ``x=__import__('os').system(...)#`` would run), and
    values of another kind than the declared default (text, a number, true/false, a list):
    a number where text belongs failed inside the notebook with Python's own words.

    Example:
        >>> check_parameters(find_notebook("probe_report"), {"x=1#": 2})
        Traceback (most recent call last):
        ...
        jevalkit.errors.ReportError: probe_report.ipynb: parameter 'x=1#' is not a Python name; this notebook's parameters: headline_path, probe, results, results_format
        >>> check_parameters(find_notebook("leaderboard"), {"n_resamples": "many"})
        Traceback (most recent call last):
        ...
        jevalkit.errors.ReportError: leaderboard.ipynb: -p n_resamples 'many': expected a number, as its default 2000 is (e.g. -p n_resamples 2000)
    """
    declared = declared_parameters(notebook)
    names = ", ".join(sorted(declared))
    for name in parameters:
        if not isinstance(name, str) or not name.isidentifier():
            raise ReportError(
                f"{notebook.name}: parameter {name!r} is not a Python name; this notebook's "
                f"parameters: {names}"
            )
        if name not in declared:
            raise ReportError(
                f"{notebook.name}: no parameter {name!r}; this notebook's parameters: {names}"
            )
        default = declared_default(declared[name])
        wanted, given = _kind(default), _kind(parameters[name])
        if wanted is None or parameters[name] is None or given == wanted:
            continue
        if wanted == "a number" and isinstance(parameters[name], int | float):
            continue
        raise ReportError(
            f"{notebook.name}: -p {name} {parameters[name]!r}: expected {wanted}, as its "
            f"default {declared[name]['default']} is (e.g. -p {name} {declared[name]['default']})"
        )


def save_headline(numbers: Any, path: str | Path) -> None:
    """Called from a notebook's last cell: write the headline numbers as JSON (a file only: the
    report does not print them), with the notes the run collected (``notes``, see
    :func:`collect_notes`) added to a dict and shown as the report's "Notes" list.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "h.json"
        >>> save_headline({"pass_rate": 0.5}, p); json.loads(p.read_text())
        {'pass_rate': 0.5}
    """
    if isinstance(numbers, dict) and notes():
        numbers = {**numbers, "notes": notes()}
    show_notes()
    text = json.dumps(json_ready(numbers), indent=2, allow_nan=False)
    write_file(path, text, ReportError, what="headline")


def check_results(results: str | Path) -> None:
    """Refuse, before a kernel starts, results a notebook could not read: an empty name, a
    missing path, a FIFO or a device (the notebook would wait on it, or read it without end); a
    folder is fine (a folder of inspect_ai logs).

    Example:
        >>> check_results("/dev/zero")
        Traceback (most recent call last):
        ...
        jevalkit.errors.ReportError: /dev/zero: not a regular file (a character device); give a results file
    """
    if not str(results).strip():
        raise ReportError("--results is empty; give the results file the notebook reads")
    if Path(check_name(results, ReportError, what="results file")).is_dir():
        return
    with open_regular(results, ReportError, what="results file"):
        pass


def output_folder(out: str | Path) -> Path:
    """The folder a report is written into, created when missing; refused when it is a file.

    Example:
        >>> output_folder("/dev/null")
        Traceback (most recent call last):
        ...
        jevalkit.errors.ReportError: /dev/null is a file, not a folder; give --out a folder for the report
    """
    if not str(out).strip():
        raise ReportError("--out is empty; give --out a folder for the report")
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise ReportError(f"{folder} is a file, not a folder; give --out a folder for the report")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportError(f"{folder}: cannot create the report folder ({exc.strerror})") from None
    return folder


def input_paths(notebook: Path, parameters: dict[str, Any]) -> dict[str, Any]:
    """``parameters`` with each input file named relative to here made absolute: the notebook
    runs in its output folder. An input is a parameter the notebook declares with the default
    None (``results``, a race's outcome) whose value names an existing file; outputs (a page's
    name) have defaults and are written beside the report.

    Example:
        >>> import tempfile
        >>> f = Path(tempfile.mkdtemp()) / "race.json"
        >>> _ = f.write_text("{}")
        >>> got = input_paths(find_notebook("leaderboard"), {"race": str(f), "html_path": "p.html"})
        >>> got["race"] == str(f.resolve()), got["html_path"]
        (True, 'p.html')
    """
    declared = declared_parameters(notebook)
    out = dict(parameters)
    for name, value in parameters.items():
        given = declared.get(name, {}).get("default")
        if given == "None" and isinstance(value, str) and value and Path(value).is_file():
            out[name] = str(Path(value).resolve())
    return out


def run_report(
    notebook: str | Path,
    *,
    results: str | Path | list[str | Path] | None = None,
    parameters: dict[str, Any] | None = None,
    out: str | Path = "reports",
    metadata: dict[str, Any] | None = None,
    progress: bool = False,
    show_code: bool = False,
) -> Report:
    """Execute ``notebook`` with papermill (its ``parameters`` cell gets ``results``, a path or
    a list of paths read as one, ``headline_path`` and ``parameters``), write ``<out>/<name>.ipynb``, ``<name>.html`` and
    ``<name>.headline.json``. The HTML shows the parameters once and hides code cells unless
    ``show_code``; it loads nothing from the network.

    Raises:
        ReportError: an unknown notebook or parameter, an unusable output folder, or a failing
            cell (one line naming the cell and its exception; the partial executed notebook
            stays at ``<out>/<name>.partial.ipynb``, ``ReportError.cell`` is the failing cell's
            index in it; an earlier run's ``<name>.ipynb`` and ``<name>.html`` are left as they
            were, a matching pair: the notebook is moved into place only when every cell ran).
    """
    import nbformat
    import papermill

    source = find_notebook(notebook)
    params = dict(parameters or {})
    if isinstance(results, list | tuple):
        for one in results:
            check_results(one)
        paths = [str(Path(p).resolve()) for p in results]
        params["results"] = paths[0] if len(paths) == 1 else paths
    elif results is not None:
        check_results(results)
        params["results"] = str(Path(results).resolve())
    check_parameters(source, params)
    params = input_paths(source, params)
    out_dir = output_folder(out)
    executed = out_dir / f"{source.stem}.ipynb"
    html = out_dir / f"{source.stem}.html"
    headline = out_dir / f"{source.stem}.headline.json"
    partial = out_dir / f"{source.stem}.partial.ipynb"  # moved onto `executed` once it all ran
    shown = {
        name: repr(params[name]) if name in params else spec["default"]
        for name, spec in declared_parameters(source).items()
        if name not in ALWAYS_INJECTED
    }
    params["headline_path"] = str(headline.resolve())
    try:
        with quiet_kernel():
            papermill.execute_notebook(
                # absolute: papermill reads a path starting "-" as stdout, "s3://" as S3, ...
                str(source.resolve()),
                str(partial.resolve()),
                parameters=params,
                kernel_name="python3",
                language="python",  # a notebook that names no language is run as Python
                progress_bar=progress,
                cwd=str(out_dir.resolve()),
                extra_arguments=["--IPKernelApp.log_level=CRITICAL"],
            )
    except papermill.PapermillExecutionError as exc:
        first = exc.evalue.splitlines()[0] if exc.evalue else ""
        raise ReportError(
            f"{source.name}: cell {exc.exec_count} raised {exc.ename}: {first} "
            f"(partial notebook kept at {partial}; {executed.name} and {html.name} are not "
            "replaced)",
            cell=_failing_cell(read_notebook(partial), exc.cell_index),
            notebook=partial,
        ) from None
    nb = read_notebook(partial)
    nb.metadata["jevalkit"] = {
        "parameters": params,
        "jevalkit_version": __version__,
        **(metadata or {}),
    }
    write_file(executed, nbformat.writes(nb), ReportError, what="executed notebook")
    partial.unlink(missing_ok=True)
    with quiet_kernel():
        export_html(nb, html, files_read(shown, headline), show_code=show_code)
    return Report(executed, html, headline)


def files_read(shown: dict[str, str], headline: Path) -> dict[str, str]:
    """The parameters table with each file parameter left at None shown as the file the
    notebook read instead (the notebook saves it in its headline under the parameter's name):
    ``results None`` would hide which data the numbers describe. A file bundled with jevalkit
    is named by its place in ``data/``.

    Example:
        >>> import tempfile, pathlib
        >>> h = pathlib.Path(tempfile.mkdtemp()) / "h.json"
        >>> _ = h.write_text(json.dumps({"results": str(data_dir() / "examples" / "variants.jsonl")}))
        >>> files_read({"results": "None", "probe": "'p@1'"}, h)["results"]
        "'data/examples/variants.jsonl' (the default: bundled with jevalkit)"
    """
    try:
        numbers = json.loads(read_text(headline, ReportError, max_bytes=MAX_NOTEBOOK_BYTES))
    except (ReportError, ValueError):
        return shown
    out = dict(shown)
    for name, value in shown.items():
        read = numbers.get(name) if isinstance(numbers, dict) and value == "None" else None
        if not isinstance(read, str):
            continue
        path = Path(read)
        try:
            out[name] = (
                f"{'data/' + path.relative_to(data_dir()).as_posix()!r} (the default: bundled with jevalkit)"
            )
        except ValueError:
            out[name] = f"{read!r} (the default)"
    return out


def _failing_cell(nb: Any, fallback: int) -> int:
    """The index of the cell that raised in the kept notebook (papermill puts an error banner
    cell at its top, so papermill's own index is off by one there)."""
    for i, cell in enumerate(nb.cells):
        if any(out.get("output_type") == "error" for out in cell.get("outputs", [])):
            return i
    return fallback
