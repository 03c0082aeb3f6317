"""The shape of the code (issue 15.4): public homes for shared helpers, complete ``__all__`` lists,
notebooks on the public API only, every exception in ``errors.py``."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
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


def imported_modules(path: Path) -> list[tuple[str, list[str]]]:
    """(absolute module, imported names) for every import in ``path``."""
    tree = ast.parse(path.read_text())
    here = ["jevalkit", *path.relative_to(PACKAGE).with_suffix("").parts]
    if here[-1] == "__init__":
        here = here[:-1]
    package = here if path.name == "__init__.py" else here[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            found.append((module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found.extend((a.name, []) for a in node.names)
    return found


def test_no_module_imports_another_packages_private_module():
    offences = []
    for path in modules():
        mine = subpackage(path)
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
