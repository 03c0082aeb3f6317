"""Run a parameterised notebook with papermill and export it to HTML, side by side."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._paths import data_dir
from .._version import __version__
from ..errors import JevalkitError

NOTEBOOKS_DIR = data_dir().parent / "notebooks"


class ReportError(JevalkitError):
    """A notebook failed; the message names the cell and the exception, the partial notebook is kept."""


@dataclass(frozen=True)
class Report:
    """Where a report went: the executed notebook, its HTML export and the headline numbers."""

    notebook: Path
    html: Path
    headline: Path

    def numbers(self) -> Any:
        """The headline numbers the notebook saved."""
        return json.loads(self.headline.read_text())


def find_notebook(name: str | Path) -> Path:
    """A notebook path, or a name under ``notebooks/`` (with or without ``.ipynb``).

    Example:
        >>> find_notebook("probe_report").name
        'probe_report.ipynb'
    """
    path = Path(name)
    if path.exists():
        return path
    candidate = NOTEBOOKS_DIR / (path.name if path.suffix == ".ipynb" else f"{path.name}.ipynb")
    if candidate.exists():
        return candidate
    known = ", ".join(sorted(p.stem for p in NOTEBOOKS_DIR.glob("*.ipynb")))
    raise ReportError(f"no notebook {str(name)!r}; bundled notebooks: {known}")


def save_headline(numbers: Any, path: str | Path) -> None:
    """Called from a notebook's last cell: write the headline numbers as JSON.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "h.json"
        >>> save_headline({"pass_rate": 0.5}, p); json.loads(p.read_text())
        {'pass_rate': 0.5}
    """
    text = json.dumps(_plain(numbers), indent=2, allow_nan=False)
    Path(path).write_text(text, encoding="utf-8")


def _plain(value: Any) -> Any:
    """JSON-ready: numpy scalars to Python, NaN and infinities to null (strict JSON has neither)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def run_report(
    notebook: str | Path,
    *,
    results: str | Path | None = None,
    parameters: dict[str, Any] | None = None,
    out: str | Path = "reports",
    metadata: dict[str, Any] | None = None,
    progress: bool = False,
) -> Report:
    """Execute ``notebook`` with papermill (its ``parameters`` cell gets ``results``,
    ``headline_path`` and ``parameters``), write ``<out>/<name>.ipynb``, ``<name>.html`` and
    ``<name>.headline.json``.

    Raises:
        ReportError: one line naming the failing cell and its exception; the partial executed
            notebook stays at ``<out>/<name>.ipynb``.
    """
    import nbformat
    import papermill
    from nbconvert import HTMLExporter

    source = find_notebook(notebook)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    executed = out_dir / f"{source.stem}.ipynb"
    html = out_dir / f"{source.stem}.html"
    headline = out_dir / f"{source.stem}.headline.json"
    params = dict(parameters or {})
    if results is not None:
        params["results"] = str(Path(results).resolve())
    params["headline_path"] = str(headline.resolve())
    try:
        papermill.execute_notebook(
            str(source), str(executed), parameters=params, kernel_name="python3",
            progress_bar=progress, cwd=str(out_dir),
        )  # fmt: skip
    except papermill.PapermillExecutionError as exc:
        raise ReportError(
            f"{source.name}: cell {exc.exec_count} raised {exc.ename}: {exc.evalue.splitlines()[0] if exc.evalue else ''} "
            f"(partial notebook kept at {executed})"
        ) from None
    nb = nbformat.read(executed, as_version=4)
    nb.metadata["jevalkit"] = {
        "parameters": params,
        "jevalkit_version": __version__,
        **(metadata or {}),
    }
    nbformat.write(nb, executed)
    exporter = HTMLExporter()
    exporter.exclude_input_prompt = True
    body, _ = exporter.from_notebook_node(nb)
    html.write_text(body, encoding="utf-8")
    return Report(executed, html, headline)
