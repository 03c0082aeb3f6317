"""Check a built documentation site (`make docs` runs it after Sphinx, and so does `.ci/run`).

- Every executed page (a notebook, or a MyST Markdown notebook) shows the figures its code draws:
  a cell that draws at its top level (not inside an ``if``, a loop, a function or a
  comprehension) shows at least one image in its output, and a page whose code draws anywhere
  shows at least one. "Draws" means a call of a ``jevalkit.plots`` function, of
  ``plt.subplots``/``plt.figure``/..., or of any ``.plot(...)``, ``.plot.<kind>(...)``,
  ``.hist(...)`` or ``.boxplot(...)`` (pandas). A kernel on the Agg backend
  draws every figure and shows none: this is what catches it.
- Every image a page shows is a non-empty file of the build (or a ``data:`` URI).
- No page loads anything from the network (no ``src``/``href`` to ``http(s)://`` or ``//``,
  quoted either way or not, in a script, link, img, iframe, source, video, audio or embed tag).
- No page opts out of the tables of contents with ``orphan`` metadata (Sphinx, run with ``-W``,
  fails on a page that is in none; the metadata would silence it).

The pages' sources are read from the build's own copies (``_sources/``), so the check needs only
the site. Run: ``python docs/check_build.py docs/_build/html`` (exit 1 with one line per
problem; exit 0 with a one-line summary).
"""

from __future__ import annotations

import ast
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
from bs4 import BeautifulSoup
from myst_nb.core.read import is_myst_markdown_notebook, read_myst_markdown_notebook

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jevalkit import plots  # the repository's own, whatever is installed

PLOT_FUNCTIONS = frozenset(n for n in plots.__all__ if callable(getattr(plots, n)))
PYPLOT_DRAWS = frozenset(
    {"subplots", "subplot", "figure", "plot", "hist", "bar", "barh", "scatter", "imshow"}
)
# a scope whose body may run zero times: a figure drawn there is counted for the page only
MAYBE = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.Try,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.IfExp,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.Match,
)
REMOTE = re.compile(
    r"<(script|link|img|iframe|source|video|audio|embed)\b[^>]*\b(src|href)\s*=\s*[\"']?(https?:)?//",
    re.I,
)
ORPHAN = re.compile(r"^(:orphan:|orphan\s*:)", re.M)
SPECIAL = {"genindex.html", "search.html", "py-modindex.html"}


@dataclass(frozen=True)
class Cell:
    """A code cell of a page's source: its code, whether it draws always or maybe, and whether
    its output is removed on purpose (tag ``remove-output``/``remove-cell``)."""

    code: str
    always: bool
    maybe: bool
    hidden: bool


def _is_draw(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id in PLOT_FUNCTIONS
    if isinstance(func, ast.Attribute):
        owner = func.value.id if isinstance(func.value, ast.Name) else None
        # pandas draws with .plot(...), .plot.bar(...) / .plot.hist(...), .hist(...), .boxplot()
        on_plot = isinstance(func.value, ast.Attribute) and func.value.attr == "plot"
        return (
            (owner == "plots" and func.attr in PLOT_FUNCTIONS)
            or (owner == "plt" and func.attr in PYPLOT_DRAWS)
            or func.attr in ("plot", "hist", "boxplot")
            or on_plot
        )
    return False


def _draws(node: ast.AST, top: bool) -> tuple[bool, bool]:
    """(draws at the top level, draws somewhere) in ``node``."""
    always = maybe = False
    if _is_draw(node):
        always, maybe = top, True
    inner_top = top and not isinstance(node, MAYBE)
    for child in ast.iter_child_nodes(node):
        a, m = _draws(child, inner_top)
        always, maybe = always or a, maybe or m
    return always, maybe


def code_cells(source: Path) -> list[Cell]:
    """The code cells of a page's source copy (``x.ipynb.txt`` or ``x.md.txt``); [] for a page
    that is not a notebook."""
    text = source.read_text(encoding="utf-8")
    if source.name.endswith(".ipynb.txt"):
        nb = nbformat.reads(text, as_version=4)
    elif source.name.endswith(".md.txt") and is_myst_markdown_notebook(text):
        nb = read_myst_markdown_notebook(text)
    else:
        return []
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        code = "".join(cell.source) if isinstance(cell.source, list) else cell.source
        # IPython magics and shell lines are not Python: each becomes a no-op line
        python = "\n".join(
            "pass" if line.lstrip().startswith(("%", "!")) else line for line in code.splitlines()
        )
        try:
            always, maybe = _draws(ast.parse(python), top=True)
        except SyntaxError:
            always, maybe = False, bool(re.search(r"\bplots\.\w+\(|\bplt\.|\.plot\(", code))
        tags = set(cell.get("metadata", {}).get("tags", []))
        hidden = bool(tags & {"remove-output", "remove-cell", "remove_output", "remove_cell"})
        cells.append(Cell(code, always, maybe, hidden))
    return cells


def _normal(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.strip().splitlines())


def _images(page: Path, site: Path, tag) -> tuple[int, list[str]]:
    """(images shown in ``tag``, problems with them)."""
    shown, problems = 0, []
    for img in tag.find_all("img"):
        src = img.get("src", "")
        if src.startswith("data:image/"):
            shown += 1
            continue
        path = (page.parent / unquote(urlsplit(src).path)).resolve()
        if not path.is_relative_to(site.resolve()) or not path.is_file():
            problems.append(f"{page.relative_to(site)}: image {src!r} is not in the build")
        elif path.stat().st_size == 0:
            problems.append(f"{page.relative_to(site)}: image {src!r} is empty")
        else:
            shown += 1
    return shown, problems


def check_page(page: Path, site: Path, cells: list[Cell]) -> tuple[int, list[str]]:
    """(figures the page shows, problems): each top-level drawing cell shows a figure, a page
    that draws shows one."""
    name = page.relative_to(site)
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    article = soup.find("article") or soup
    shown, problems = _images(page, site, article)
    by_code = {_normal(c.code): c for c in cells}
    for index, div in enumerate(article.select("div.cell")):  # the code cells, in order
        code = div.select_one("div.cell_input pre")
        cell = by_code.get(_normal(code.get_text())) if code is not None else None
        if cell is None or not cell.always or cell.hidden:
            continue
        output = div.select_one("div.cell_output")
        if output is None or not output.find("img"):
            first = cell.code.strip().splitlines()[0][:60]
            problems.append(
                f"{name}: code cell {index + 1} ({first!r}) draws a figure and shows none "
                "(a kernel on a non-inline matplotlib backend, or an output filtered out)"
            )
    if any(c.maybe and not c.hidden for c in cells) and shown == 0 and not problems:
        problems.append(f"{name}: its code draws figures and the page shows none")
    return shown, problems


def check_site(site: Path) -> tuple[str, list[str]]:
    """(a summary line, problems) for a built HTML site."""
    site = Path(site)
    sources = site / "_sources"
    if not (site / "index.html").is_file() and not any(site.glob("*.html")):
        return "", [f"{site}: no HTML pages here (build the docs first: make docs)"]
    problems: list[str] = []
    pages = notebooks = drawing = figures = 0
    for page in sorted(site.rglob("*.html")):
        rel = page.relative_to(site)
        if rel.parts[0].startswith("_") or str(rel) in SPECIAL:
            continue
        pages += 1
        text = page.read_text(encoding="utf-8")
        if REMOTE.search(text):
            problems.append(f"{rel}: loads something from the network ({REMOTE.search(text)[0]})")
        copies = [sources / rel.with_suffix(s + ".txt") for s in (".md", ".ipynb", ".rst")]
        source = next((c for c in copies if c.is_file()), None)
        if source is None:
            problems.append(f"{rel}: no copy of its source in _sources/ (html_copy_source off?)")
            continue
        if _orphan(source):
            problems.append(f"{rel}: its source is marked orphan (put it in a toctree instead)")
        cells = code_cells(source)
        if not cells:
            continue
        notebooks += 1
        drawing += any(c.maybe for c in cells)
        shown, found = check_page(page, site, cells)
        figures += shown
        problems += found
    if notebooks == 0:
        problems.append(f"{site}: no executed page found (nothing checked)")
    summary = (
        f"docs check: {pages} pages, {notebooks} executed, {drawing} of them draw; "
        f"{figures} figures shown"
    )
    return summary, problems


def _orphan(source: Path) -> bool:
    text = source.read_text(encoding="utf-8")
    if source.name.endswith(".ipynb.txt"):
        return "orphan" in json.loads(text).get("metadata", {})
    head = text.split("\n---", 2)[0] if text.startswith("---") else text[:500]
    return bool(ORPHAN.search(head))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python docs/check_build.py SITE (the built HTML, e.g. docs/_build/html)")
        return 2
    summary, problems = check_site(Path(argv[0]))
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
