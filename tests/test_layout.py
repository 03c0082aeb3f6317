"""The shape of the code (issues 15.4 and 25): public homes for shared helpers, complete ``__all__``
lists, notebooks, tests and benchmarks on the public API only, every exception in ``errors.py``, an
import graph without circles or function-local imports, and judges upstream of their analyses."""

from __future__ import annotations

import ast
import graphlib
import importlib
import inspect
import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import jevalkit

PACKAGE = Path(jevalkit.__file__).parent
REPO = PACKAGE.parent
ROOT_SHARED = {"_paths", "_sync", "_version"}  # the root package's own internals


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "_bundled" not in p.parts)


def subpackage(path: Path) -> str | None:
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else None


def imported_modules(path: Path, nodes: list[ast.AST] | None = None) -> list[tuple[str, list[str]]]:
    """(absolute module, imported names) for every import in ``path`` (or in ``nodes`` of it)."""
    tree = ast.parse(path.read_text())
    if path.is_relative_to(PACKAGE):
        here = ["jevalkit", *path.relative_to(PACKAGE).with_suffix("").parts]
        if here[-1] == "__init__":
            here = here[:-1]
        package = here if path.name == "__init__.py" else here[:-1]
    else:
        package = []  # tests, benchmarks: absolute imports only
    found = []
    for node in ast.walk(tree) if nodes is None else nodes:
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            found.append((module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found.extend((a.name, []) for a in node.names)
    return found


def outside_modules() -> list[Path]:
    """The Python files of tests/ and benchmarks/: they use jevalkit as a user would."""
    return sorted(p for d in ("tests", "benchmarks") for p in (REPO / d).rglob("*.py"))


def test_no_module_imports_another_packages_private_module():
    offences = []
    for path in [*modules(), *outside_modules()]:
        mine = subpackage(path) if path.is_relative_to(PACKAGE) else None
        for module, names in imported_modules(path):
            parts = module.split(".")
            if parts[0] != "jevalkit" or len(parts) < 2:
                continue
            other = parts[1]
            if other.startswith("_"):
                if other not in ROOT_SHARED:
                    offences.append(f"{path.relative_to(REPO)}: {module}")
                continue
            if other == mine:
                continue
            private = [p for p in parts[2:] if p.startswith("_")]
            private_names = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private or private_names:
                offences.append(f"{path.relative_to(REPO)}: {module} {private_names or ''}")
    assert offences == []


def _function_bodies(tree: ast.AST) -> list[ast.AST]:
    """Every node inside a function (or method) body."""
    inner = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for statement in node.body:
                inner.extend(ast.walk(statement))
    return inner


def test_no_function_local_import_of_a_jevalkit_module():
    # An import inside a function hides an arrow of the import graph (and so a circle). A lazy
    # import of a heavy optional third-party package is fine; of jevalkit's own modules it is not.
    offences = []
    for path in modules():
        inner = _function_bodies(ast.parse(path.read_text()))
        for module, _ in imported_modules(path, inner):
            if module.split(".")[0] == "jevalkit":
                offences.append(f"{path.relative_to(REPO)}: {module}")
    assert offences == []


# The only imports by name in the package: the root's lazy facade and the CLI's dispatcher,
# each resolving names from its own table (jevalkit._LAZY, jevalkit.cli.COMMANDS).
IMPORT_BY_NAME = {("__init__.py", "__getattr__"), ("cli/__init__.py", "_command_module")}


def test_imports_by_name_are_only_the_facade_and_the_cli_dispatcher():
    found = set()
    for path in modules():
        tree = ast.parse(path.read_text())
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if not isinstance(node, ast.Call):
                    continue
                name = ast.unparse(node.func)
                if name in ("importlib.import_module", "__import__", "import_module"):
                    found.add((path.relative_to(PACKAGE).as_posix(), function.name))
    assert found == IMPORT_BY_NAME


def _node(module: str) -> str | None:
    """The package (or root module) of ``jevalkit.x.y``: ``x``."""
    parts = module.split(".")
    return parts[1] if parts[0] == "jevalkit" and len(parts) > 1 else None


def package_graph() -> dict[str, set[str]]:
    """Which of jevalkit's packages (and root modules) each imports at module level; the root
    ``__init__`` (a lazy facade over the others) is left out."""
    graph: dict[str, set[str]] = {}
    for path in modules():
        if path == PACKAGE / "__init__.py":
            continue
        mine = subpackage(path) or path.stem
        edges = graph.setdefault(mine, set())
        for module, names in imported_modules(path):
            other = _node(module)
            if other is None and module == "jevalkit":  # from jevalkit import x / from .. import x
                targets = [
                    n for n in names if (PACKAGE / n).is_dir() or (PACKAGE / f"{n}.py").is_file()
                ]
            else:
                targets = [other] if other else []
            edges |= {t for t in targets if t != mine}
    return graph


def test_the_import_graph_of_the_packages_has_no_circle():
    try:
        order = list(graphlib.TopologicalSorter(package_graph()).static_order())
    except graphlib.CycleError as exc:
        pytest.fail(f"import circle between packages: {' -> '.join(exc.args[1])}")
    assert {"judges", "metrics", "labels"} <= set(order)


# judges define what a judge is (prompts, levels, parsing); the runner asks them; the analyses
# of judged results (metrics: quality, bias, rankings; labels: human labels, corrected means,
# cascades) come after them, never before. The runner (the execution wing) stands beside the
# statistics packages (the analysis wing), not on them: a design it runs reaches it as an object.
DOWNSTREAM_OF = {
    "stats": {"runner", "judges", "metrics", "labels", "reports", "widgets", "cli"},
    "runner": {"items", "stats", "metrics", "labels", "io", "reports", "widgets", "cli"},
    "judges": {"runner", "client", "local", "metrics", "labels", "reports", "widgets", "cli"},
    "metrics": {"labels", "reports", "widgets", "cli"},
    "labels": {"reports", "widgets", "cli"},
}


@pytest.mark.parametrize("package", sorted(DOWNSTREAM_OF))
def test_a_package_never_imports_what_comes_after_it(package):
    imported = package_graph()[package]
    assert imported & DOWNSTREAM_OF[package] == set(), f"{package} imports downstream"


# The two wings (issue 50): the analysis wing reads results and never loads what sends requests.
ANALYSIS_WING = ("results", "contract", "stats", "metrics", "items", "labels", "judges", "io",
                 "reports", "widgets")  # fmt: skip
EXECUTION_WING = ("runner", "client", "local")


@pytest.mark.parametrize("package", ANALYSIS_WING)
def test_no_arrow_runs_from_the_analysis_wing_to_the_execution_wing(package):
    assert package_graph()[package] & set(EXECUTION_WING) == set()


@pytest.mark.parametrize(
    "package", ["metrics", "stats", "items", "labels", "io", "reports", "widgets", "judges"]
)
def test_importing_an_analysis_package_loads_no_http_stack(package):
    # a researcher who only analyses a results file pays for no HTTP client on import
    code = (
        f"import sys, jevalkit.{package}; "
        "print(sorted(m for m in ('jevalkit.runner', 'jevalkit.client', 'jevalkit.local', "
        "'httpx') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def floors(graph: dict[str, set[str]]) -> int:
    """How many floors the package graph has: the longest chain of imports, plus one."""
    level: dict[str, int] = {}
    for name in graphlib.TopologicalSorter(graph).static_order():
        level[name] = 1 + max((level[d] for d in graph.get(name, ()) if d in level), default=0)
    return max(level.values())


def test_the_package_graph_has_fewer_floors_than_before_the_designs():
    assert floors(package_graph()) <= 9  # 11 before issue 50


def _loops_calling(path: Path, name: str) -> list[int]:
    """Lines of ``path`` where a loop's body calls ``name`` (awaited or not)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.For | ast.AsyncFor | ast.While):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Call) and ast.unparse(inner.func) == name:
                    found.append(inner.lineno)
    return found


def test_one_loop_sends_what_a_design_names():
    # everything that decides what to send next is a Design; only the runner's run_design
    # loops over waves of execute(); no package outside the execution wing talks HTTP
    loops = {
        path.relative_to(PACKAGE).as_posix()
        for path in modules()
        if _loops_calling(path, "execute")
    }
    assert loops == {"runner/_design_run.py"}
    senders = {
        path.relative_to(PACKAGE).as_posix()
        for path in modules()
        for module, _ in imported_modules(path)
        if module == "httpx"
    }
    assert {s.split("/")[0] for s in senders} <= set(EXECUTION_WING)


# The results layer (issue 35): the results file and frame every analysis stands on. It lies
# under everything that writes or reads results and imports nothing above it; the packages that
# read results read them through it and never import the runner, which sends requests (the CLI
# may: it runs it).
RESULTS_MAY_IMPORT = {"errors", "jsontext", "files"}
READ_RESULTS_ONLY = ("io", "metrics", "labels", "items", "reports", "widgets")


def test_the_results_layer_imports_nothing_above_it():
    assert package_graph()["results"] <= RESULTS_MAY_IMPORT


@pytest.mark.parametrize("package", READ_RESULTS_ONLY)
def test_a_package_that_reads_results_never_imports_the_runner(package):
    assert "runner" not in package_graph()[package]
    assert "results" in package_graph()["io"]  # the rule is about a package that reads them


@pytest.mark.parametrize("package", ["results", "runner"])
def test_the_modules_of_the_runner_and_the_results_layer_share_no_private_names(package):
    # a module's private helper is its own: one another module needs has a public home
    offences = []
    for path in sorted((PACKAGE / package).glob("*.py")):
        for module, names in imported_modules(path):
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if module.startswith(f"jevalkit.{package}") and private:
                offences.append(f"{path.relative_to(REPO)}: {module} {private}")
    assert offences == []


def test_every_name_a_benchmark_imports_from_jevalkit_exists():
    # Benchmarks are not collected by pytest, so a renamed or moved name breaks them silently
    # (bench_demo_load imported ``scored`` from where it no longer lived).
    missing = []
    for path in sorted((REPO / "benchmarks").glob("*.py")):
        for module, names in imported_modules(path):
            if module.split(".")[0] != "jevalkit":
                continue
            loaded = importlib.import_module(module)
            missing += [f"{path.name}: {module}.{n}" for n in names if not hasattr(loaded, n)]
    assert missing == []


def test_every_benchmark_has_a_smoke_size():
    # .ci/run runs every benchmark at its smoke size (benchmarks/run.py --smoke): one that does
    # not read the switch (benchmarks/sizes.py) would run there at its full size, for hours
    listed = [
        *sorted((REPO / "benchmarks").glob("bench_*.py")),
        REPO / "benchmarks" / "calibration.py",
    ]
    without = [p.name for p in listed if "sizes" not in {m for m, _ in imported_modules(p)}]
    assert without == []


def test_notebooks_use_only_the_public_api():
    for notebook in sorted((REPO / "notebooks").glob("*.ipynb")):
        code = "\n".join(
            "".join(c["source"])
            for c in json.loads(notebook.read_text())["cells"]
            if c["cell_type"] == "code"
        )
        assert "jevalkit._" not in code and "._" not in code.replace("__", ""), notebook.name


def _public_packages() -> list[str]:
    names = ["jevalkit"]
    for info in pkgutil.walk_packages([str(PACKAGE)], prefix="jevalkit."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


def _order(name: str) -> tuple[int, str]:
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


@pytest.mark.parametrize("name", _public_packages())
def test_every_public_module_has_a_sorted_and_complete_all(name):
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    assert exported == sorted(exported, key=_order), f"{name}.__all__ is not sorted"
    assert len(set(exported)) == len(exported)
    missing = [n for n in exported if not hasattr(module, n)]
    assert missing == [], f"{name}.__all__ names what it does not define"
    source = Path(inspect.getfile(module))
    tree = ast.parse(source.read_text())
    bound = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level and source.name == "__init__.py":
            bound |= {a.asname or a.name for a in node.names}  # a package re-exports
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Assign):
            bound |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    public = {n for n in bound if not n.startswith("_")} - {"annotations"}
    public = {n for n in public if not inspect.ismodule(getattr(module, n, None))}
    assert public - set(exported) == set(), f"{name} binds public names missing from __all__"


def test_every_exception_class_lives_in_errors():
    import jevalkit.errors as errors

    for path in modules():
        if path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
                assert not bases & {"JevalkitError", *errors.__all__}, (
                    f"{path.relative_to(REPO)} defines {node.name}: move it to errors.py"
                )


def test_the_cli_prints_and_the_library_does_not():
    for path in modules():
        if subpackage(path) == "cli" or path.name in ("demo.py", "__main__.py"):  # entry points
            continue
        calls = [
            n
            for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "print"
        ]
        assert calls == [], f"{path.relative_to(REPO)} prints"


def test_doctests_use_only_what_users_can_import():
    # a docstring example is user documentation: it imports public modules only
    offences = []
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for line in node.value.splitlines():
                    code = line.strip().removeprefix(">>>").removeprefix("...").strip()
                    if line.strip().startswith((">>>", "...")) and (
                        re.search(r"jevalkit(\.\w+)*\._", code)
                        or (" import _" in code and "jevalkit" in code)
                    ):
                        offences.append(f"{path.relative_to(REPO)}: {code}")
    assert offences == []


def test_the_readme_describes_every_package():
    # the project's description of its layout (the guide's "Layout" page, once the README's
    # section) names every package and public module that exists, and none that does not
    readme = (REPO / "docs" / "guide" / "layout.md").read_text()
    block = readme.split("# Layout", 1)[1].split("```", 2)[1]
    named = set(re.findall(r"^  (\w+)(?:/|\.py)", block, re.MULTILINE))
    present = {
        p.name if p.is_dir() else p.stem
        for p in PACKAGE.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py"
    }
    present = {n for n in present if not n.startswith("_")}
    assert named == present


def test_every_notebook_cell_has_an_id():
    # a cell without an id makes nbformat warn on every report (a second line in the CLI)
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        assert all("id" in cell for cell in cells), path.name


# ---- the statistics anatomy (issue 34) ------------------------------------------------------

STATISTICS_PACKAGES = ("jevalkit.metrics", "jevalkit.stats", "jevalkit.items", "jevalkit.labels")
MAX_METRICS_FACE = 40


def public_modules(package: str) -> list[str]:
    """``package`` and every public module under it (no part of its name private)."""
    found = [package]
    for info in pkgutil.walk_packages(importlib.import_module(package).__path__, f"{package}."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            found.append(info.name)
    return found


@pytest.mark.parametrize(
    "module_name", [m for package in STATISTICS_PACKAGES for m in public_modules(package)]
)
def test_every_public_statistic_carries_its_contract_or_says_why_not(module_name):
    # the contract lives on the function (fn.contract, jevalkit.contract.estimator); a public
    # function that estimates nothing says so (@not_a_statistic(why)); results classes are
    # their statistic's answer. tests/contract/test_contract.py runs the declared checks.
    # Every public module's __all__ counts, not only the package's.
    from jevalkit.contract import Result
    from jevalkit.results import Design

    module = importlib.import_module(module_name)
    bare = []
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj) and issubclass(obj, Result | Design):  # answers, designs
            continue
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        if getattr(obj, "contract", None) is None and not getattr(obj, "not_a_statistic", None):
            bare.append(name)
    assert bare == [], f"{module_name}: public functions with no contract and no reason: {bare}"


def test_the_public_modules_of_the_statistics_packages_are_all_found():
    # the rule above is only as wide as the modules it walks: it finds public modules under a
    # package (the CLI's, here; the statistics packages have none since metrics.rows, facts
    # about results rows, moved to the results layer, issue 50)
    assert "jevalkit.cli.compare" in public_modules("jevalkit.cli")
    assert all(m == p for p in STATISTICS_PACKAGES for m in public_modules(p))


def test_the_metrics_face_is_small_and_exports_no_column_lists():
    import jevalkit.metrics as metrics

    assert len(metrics.__all__) <= MAX_METRICS_FACE, len(metrics.__all__)
    assert [n for n in metrics.__all__ if n.endswith("_COLUMNS")] == []


# Results travel in results objects, never in DataFrame.attrs: a statistic's (Ranking, GStudy,
# ...) and a run's (RunResult: why it stopped, the adaptive interval, an active estimate).


def test_no_result_travels_in_dataframe_attrs():
    offences = []
    for path in modules():
        where = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "attrs":
                offences.append(f"{where}:{node.lineno}")
    assert offences == [], f"DataFrame.attrs used for results: {offences}"


# ---- one rule for every file jevalkit reads and writes (issue 53) ---------------------------

# jevalkit.files holds the one reader and the one writer (a FIFO, a device, a folder, an
# over-long name, a symlink, a full disk: one line each). These modules touch files otherwise,
# each for a reason the rule does not fit:
FILE_RULE_EXCEPTIONS = {
    "files.py": "the rule itself",
    "results/_write.py": "the results file's append-with-lock writer (appends through a link, "
    "one fsync per group of rows) and the repair of its torn last line",
    "results/_lock.py": "the results file's lock file (created, then flock)",
    "labels/_labels.py": "the labels file's append of one record, fsynced (as results are)",
    "client/_cache.py": "the response cache: its own atomic entries in the cache folder (a "
    "damaged entry is a miss, never an error)",
    "local/_server.py": "the embedded server's state folder (0600 state files, leases, its "
    "log) and /proc",
    "local/_build.py": "downloading and building llama.cpp into the state folder",
    "local/_capacity.py": "/proc/loadavg",
}
_FILE_METHODS = {"open", "write_text", "write_bytes", "read_text", "read_bytes"}
_FILE_FUNCTIONS = {
    "open",
    "os.open",
    "os.replace",
    "os.rename",
    "tempfile.mkstemp",
    "tempfile.NamedTemporaryFile",
    "shutil.copy",
    "shutil.copy2",
    "shutil.copyfile",
    "shutil.move",
    "nbformat.read",
    "nbformat.write",
}
_FRAME_WRITERS = {"to_json", "to_csv", "to_parquet", "to_excel", "to_html", "to_pickle"}
_FRAME_READERS = {"read_csv", "read_json", "read_parquet", "read_excel", "read_table"}


def file_calls(tree: ast.AST) -> list[tuple[int, str]]:
    """The calls in ``tree`` that open, read or write a file by its name themselves: ``open(``,
    ``Path.write_text(`` and kin, ``os.replace(``, a DataFrame's ``to_json(path)`` or
    ``pd.read_csv(path)`` (reading bytes already read, ``io.BytesIO(...)``, or writing to a
    string is fine), ``nbformat.read(``; bundled package data (``resources.files``) is not a
    user's file."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        if "resources.files" in name:
            continue
        attr = node.func.attr if isinstance(node.func, ast.Attribute) else None
        first = node.args[0] if node.args else None
        in_memory = isinstance(first, ast.Call) and ast.unparse(first.func) in (
            "io.BytesIO",
            "io.StringIO",
        )
        to_path = bool(node.args) or any(k.arg in ("path_or_buf", "buf") for k in node.keywords)
        if (
            name in _FILE_FUNCTIONS
            or (attr in _FILE_METHODS and name not in ("tarfile.open", "zipfile.ZipFile"))
            or (attr in _FRAME_WRITERS and to_path)
            or (attr in _FRAME_READERS and not in_memory)
        ):
            found.append((node.lineno, name))
    return found


def test_every_file_is_read_and_written_by_the_one_rule():
    offences = []
    for path in modules():
        where = path.relative_to(PACKAGE).as_posix()
        if where in FILE_RULE_EXCEPTIONS:
            continue
        for lineno, name in file_calls(ast.parse(path.read_text())):
            offences.append(f"{where}:{lineno}: {name}(")
    assert offences == [], "read and write files through jevalkit.files: " + ", ".join(offences)


def test_the_file_rule_finds_what_it_looks_for():
    # the rule above is only as good as its finder
    code = (
        "open(p)\np.write_text(t)\ndf.to_json(p, orient='records')\npd.read_csv(p)\n"
        "os.replace(a, b)\nnbformat.read(p, as_version=4)\n"
        "df.to_json(orient='records')\npd.read_csv(io.BytesIO(raw))\nrow.to_json()\n"
        "resources.files(__package__).joinpath('x').read_text('utf-8')\n"
    )
    assert [line for line, _ in file_calls(ast.parse(code))] == [1, 2, 3, 4, 5, 6]
    for where in FILE_RULE_EXCEPTIONS:  # an exception names a module that exists and needs it
        tree = ast.parse((PACKAGE / where).read_text())
        assert where == "files.py" or file_calls(tree), f"{where} no longer needs its exception"
