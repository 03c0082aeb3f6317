"""An executed notebook as a report page: code hidden unless asked for, the parameters shown once,
and nothing fetched from the network when the page is opened."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from ..errors import ReportError
from ..files import write_file

TEMPLATE = Path(__file__).with_name("offline.html.j2")
PARAMETER_TAGS = ("parameters", "injected-parameters")


def parameters_html(parameters: dict[str, str]) -> str:
    """The parameters a report ran with (name -> value as Python source), as an escaped HTML
    table, shown once near the top.

    Example:
        >>> parameters_html({"results": repr("<x>.jsonl")})
        "<table class='jevalkit-parameters'><tr><th>parameter</th><th>value</th></tr><tr><td>results</td><td><code>&#x27;&lt;x&gt;.jsonl&#x27;</code></td></tr></table>"
    """
    rows = "".join(
        f"<tr><td>{html.escape(name)}</td><td><code>{html.escape(value)}</code></td></tr>"
        for name, value in parameters.items()
    )
    return (
        "<table class='jevalkit-parameters'><tr><th>parameter</th><th>value</th></tr>"
        f"{rows}</table>"
    )


def _sendable(outputs: list) -> list:
    """A cell's outputs as a report shows them: no stderr (warnings reach the reader as the
    "Notes" list, :func:`jevalkit.reports.collect_notes`; the rest is the kernel talking), and
    no figure twice (a figure returned by a cell's last line is displayed by the inline backend
    and again as the cell's result)."""
    kept, images = [], set()
    for out in outputs:
        if out.get("output_type") == "stream" and out.get("name") == "stderr":
            continue
        data = out.get("data", {})
        image = data.get("image/png")
        if image is not None:
            if image in images:
                continue
            images.add(image)
        if out.get("output_type") == "execute_result" and str(
            data.get("text/plain", "")
        ).startswith("<Figure size"):
            continue  # the figure itself was shown by the inline backend
        kept.append(out)
    return kept


def report_title(nb: Any) -> str:
    """The notebook's title: its first Markdown heading (the browser tab's title).

    Example:
        >>> import nbformat
        >>> report_title(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Mean *score*")]))
        'Mean score'
    """
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip().replace("*", "").replace("`", "")
    return "jevalkit report"


def report_cells(nb: Any, parameters: dict[str, str]) -> Any:
    """``nb`` ready for export: the parameter cells dropped, their values in one table after the
    title (papermill's injected cell would otherwise repeat the parameters cell), and each
    cell's outputs as a report shows them (no stderr, no figure twice).

    Example:
        >>> import nbformat
        >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# T"),
        ...     nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
        ...     nbformat.v4.new_code_cell("x")])
        >>> [c.cell_type for c in report_cells(nb, {"x": "1"}).cells]
        ['markdown', 'markdown', 'code']
    """
    import nbformat

    out = nbformat.from_dict(nb)
    kept = [
        cell
        for cell in out.cells
        if not set(cell.get("metadata", {}).get("tags", [])) & set(PARAMETER_TAGS)
    ]
    for cell in kept:
        if cell.cell_type == "code":
            cell.outputs = _sendable(cell.get("outputs", []))
    table = nbformat.v4.new_markdown_cell(parameters_html(parameters))
    at = 1 if kept and kept[0].cell_type == "markdown" else 0
    kept.insert(at, table)
    out.cells = kept
    return out


def export_html(nb: Any, path: Path, parameters: dict[str, str], *, show_code: bool) -> None:
    """Write ``nb`` as a report page at ``path`` that fetches nothing when opened, titled by the
    notebook's title, code cells hidden unless ``show_code`` (see :func:`report_cells`)."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_file=str(TEMPLATE))
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    exporter.exclude_input = not show_code
    resources = {"metadata": {"name": report_title(nb)}}
    body, _ = exporter.from_notebook_node(report_cells(nb, parameters), resources=resources)
    write_file(path, body, ReportError, what="report page")
