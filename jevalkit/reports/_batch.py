"""Batch reports: a grid of papermill runs on Dask (a LocalCluster, or any cluster by address).

A batch file (YAML)::

    notebook: probe_report            # a name under notebooks/ or a path
    grid:                             # parameter -> values; lists expand to their product
      results: [runs/a.jsonl, runs/b.jsonl]
      probe: [schema-ten-records@2]
    rows:                             # optional explicit parameter sets, added to the grid
      - {results: runs/c.jsonl, probe: schema-ten-records@2}
    paths: [results]                  # optional: parameters whose values are paths
    out: reports/{probe}/{results_stem}   # {name}: a value; {name_stem}: a path value's file stem

Values of path parameters (declared in ``paths``, or naming a file that exists beside the batch
file) are resolved against the batch file's folder; every other value is passed as written (a
model id such as ``openai/gpt-4o-mini`` is not a path). Parameter names must be parameters the
notebook declares.

Every output notebook records in its metadata the parameters, the jevalkit version and the sha256
of the notebook source and of each input file; a re-run skips outputs whose recorded inputs are
unchanged (so a batch resumes after a crash) unless ``force``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pandas as pd

from .._version import __version__
from ..cluster import check_cluster_options, dask_client
from ..datafiles import load_yaml
from ..errors import BatchError, ReportError
from ..files import open_regular, read_text, write_file
from ._execute import MAX_NOTEBOOK_BYTES, check_parameters, find_notebook, run_report

STATUS_COLUMNS = ["out", "status", "error", "parameters"]
SUMMARY_NAME = "batch_summary.csv"


@dataclass(frozen=True)
class BatchSpec:
    """A parsed batch file."""

    notebook: Path
    grid: dict[str, list[Any]]
    rows: list[dict[str, Any]]
    out: str
    base: Path
    paths: tuple[str, ...] = ()


def _sha256(path: Path) -> str:
    with open_regular(path, BatchError, what="input file") as fh:
        return hashlib.file_digest(cast(io.BufferedReader, fh), "sha256").hexdigest()


def _json_of(path: Path) -> Any:
    """A notebook's or a headline's JSON, by the one reader rule (a regular file, bounded)."""
    return json.loads(read_text(path, ReportError, max_bytes=MAX_NOTEBOOK_BYTES))


def load_batch(path: str | Path) -> BatchSpec:
    """Read and check a batch file; errors name the file and the key.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "b.yaml"
        >>> _ = p.write_text("notebook: probe_report\\ngrid: {probe: [a, b]}\\nout: r/{probe}\\n")
        >>> load_batch(p).grid
        {'probe': ['a', 'b']}
    """
    path = Path(path)
    raw = load_yaml(path, BatchError)
    if not isinstance(raw, dict):
        raise BatchError(f"{path}: a batch file is a mapping with notebook, grid, rows, out")
    unknown = sorted(set(raw) - {"notebook", "grid", "rows", "out", "paths"})
    if unknown:
        raise BatchError(
            f"{path}: unknown key(s) {unknown}; allowed: notebook, grid, rows, paths, out"
        )
    for key in ("notebook", "out"):
        if not isinstance(raw.get(key), str):
            raise BatchError(f"{path}: `{key}` must be a string")
    grid = raw.get("grid") or {}
    if not isinstance(grid, dict) or not all(isinstance(v, list) and v for v in grid.values()):
        raise BatchError(f"{path}: `grid` maps each parameter to a non-empty list of values")
    rows = raw.get("rows") or []
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise BatchError(f"{path}: `rows` is a list of parameter mappings")
    if not grid and not rows:
        raise BatchError(f"{path}: give `grid` or `rows`: there is nothing to run")
    paths = raw.get("paths") or []
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise BatchError(f"{path}: `paths` is a list of parameter names")
    nb = Path(raw["notebook"])
    notebook = find_notebook(path.parent / nb if (path.parent / nb).exists() else nb)
    try:
        for params in [dict.fromkeys(grid), *rows]:
            check_parameters(notebook, params)
    except ReportError as exc:
        raise BatchError(f"{path}: {exc}") from None
    spec = BatchSpec(notebook, grid, rows, raw["out"], path.parent, tuple(paths))
    for params in expand(spec)[:1]:
        out_dir_for(spec.out, params, spec.base)  # a bad pattern fails now, not per task
    return spec


def expand(spec: BatchSpec) -> list[dict[str, Any]]:
    """Parameter sets: the grid's product, then the explicit rows.

    Example:
        >>> spec = BatchSpec(Path("x.ipynb"), {"a": [1, 2], "b": ["x", "y"]}, [{"a": 9, "b": "z"}], "o", Path("."))
        >>> len(expand(spec)), expand(spec)[-1]
        (5, {'a': 9, 'b': 'z'})
    """
    names = list(spec.grid)
    combos = [
        dict(zip(names, values, strict=True)) for values in itertools.product(*spec.grid.values())
    ]
    return (combos if names else []) + [dict(r) for r in spec.rows]


def resolve_value(name: str, value: Any, spec: BatchSpec) -> Any:
    """A parameter value as the notebook gets it: a path parameter's value (declared in
    ``paths``, or naming a file that exists beside the batch file) resolved against the batch
    file's folder; any other value as written.

    Example:
        >>> spec = BatchSpec(Path("x.ipynb"), {}, [], "o", Path("/b"), ("results",))
        >>> resolve_value("results", "runs/a.jsonl", spec), resolve_value("model", "openai/gpt-4o", spec)
        ('/b/runs/a.jsonl', 'openai/gpt-4o')
    """
    if not isinstance(value, str):
        return value
    candidate = (spec.base / value).resolve()
    if name in spec.paths or candidate.is_file():
        return str(candidate)
    return value


def out_dir_for(pattern: str, params: dict[str, Any], base: Path) -> Path:
    """Fill ``{name}`` and ``{name_stem}`` in the output pattern.

    Example:
        >>> str(out_dir_for("r/{model}/{results_stem}", {"model": "m", "results": "/x/run1.jsonl"}, Path("/b")))
        '/b/r/m/run1'
    """
    values = {k: str(v) for k, v in params.items()}
    values.update({f"{k}_stem": Path(str(v)).stem for k, v in params.items()})
    try:
        filled = pattern.format(**values)
    except KeyError as exc:
        raise BatchError(
            f"out pattern {pattern!r} names {exc.args[0]!r}, which is not a parameter"
        ) from None
    except (ValueError, IndexError, AttributeError) as exc:
        raise BatchError(
            f"out pattern {pattern!r} is not a pattern of {{name}} fields ({exc})"
        ) from None
    filled = re.sub(r"[^\w./@=+-]", "_", filled)
    return base / filled


def fingerprint(notebook: Path, params: dict[str, Any]) -> dict[str, Any]:
    """What an output depends on: notebook source, parameters, input files' sha256, version."""
    files = {
        k: _sha256(Path(v)) for k, v in params.items() if isinstance(v, str) and Path(v).is_file()
    }
    return {
        "notebook_sha256": _sha256(notebook),
        "parameters": params,
        "input_sha256": files,
        "jevalkit_version": __version__,
    }


def up_to_date(out: Path, notebook: Path, inputs: dict[str, Any]) -> bool:
    """Whether ``out`` already holds this notebook's output for exactly these inputs."""
    executed = out / f"{notebook.stem}.ipynb"
    if not executed.exists() or not (out / f"{notebook.stem}.html").exists():
        return False
    try:
        recorded = _json_of(executed)["metadata"]["jevalkit"]["inputs"]
    except (ValueError, KeyError, TypeError, ReportError):
        return False
    return recorded == inputs


def _task(
    notebook: str, params: dict[str, Any], out: str, inputs: dict[str, Any]
) -> dict[str, Any]:
    try:
        run_report(notebook, parameters=params, out=out, metadata={"inputs": inputs})
        return {"out": out, "status": "done", "error": None, "parameters": params}
    except ReportError as exc:
        return {"out": out, "status": "failed", "error": str(exc), "parameters": params}


def run_batch(
    path: str | Path,
    *,
    workers: int | None = 2,
    scheduler: str | None = None,
    cluster: Any = None,
    force: bool = False,
    progress: bool = True,
) -> pd.DataFrame:
    """Run every parameter set of a batch file on Dask; return one row per task with its
    ``status`` (``done``, ``skipped``, ``failed``), ``error`` and ``out``.

    A failing notebook does not stop the batch: its partial output is kept and it is reported.
    The cluster options are those of :func:`jevalkit.cluster.dask_client`: ``scheduler``
    (an address), ``cluster`` (a Client or cluster object), else a LocalCluster of ``workers``.
    """
    from dask.distributed import as_completed
    from tqdm.auto import tqdm

    if scheduler is not None or cluster is not None:
        workers = None
    check_cluster_options(scheduler=scheduler, cluster=cluster, workers=workers)
    spec = load_batch(path)
    tasks, rows = [], []
    for params in expand(spec):
        params = {k: resolve_value(k, v, spec) for k, v in params.items()}
        out = out_dir_for(spec.out, params, spec.base)
        inputs = fingerprint(spec.notebook, params)
        if not force and up_to_date(out, spec.notebook, inputs):
            rows.append({"out": str(out), "status": "skipped", "error": None, "parameters": params})
        else:
            tasks.append((str(spec.notebook), params, str(out), inputs))
    counts = {"done": 0, "failed": 0, "skipped": len(rows)}
    with contextlib.ExitStack() as stack:
        if tasks:  # connect first: an unreachable scheduler is one line, with no bar drawn
            client = stack.enter_context(
                dask_client(scheduler=scheduler, cluster=cluster, workers=workers)
            )
        bar = stack.enter_context(
            tqdm(
                total=len(tasks) + len(rows),
                initial=len(rows),
                desc="reports",
                disable=not progress,
            )
        )
        if tasks:
            futures = [client.submit(_task, *t, pure=False) for t in tasks]
            for future in as_completed(futures):
                result = future.result()
                rows.append(result)
                counts[result["status"]] += 1
                bar.set_postfix(counts, refresh=False)
                bar.update(1)
    return pd.DataFrame(rows, columns=STATUS_COLUMNS)


def collect(folder: str | Path) -> pd.DataFrame:
    """One row per report under ``folder``: its parameters and its scalar headline numbers
    (``headline.<name>``), for a summary table or plot across a batch.

    Example:
        >>> collect("/nonexistent").empty
        True
    """
    rows = []
    for executed in sorted(Path(folder).rglob("*.ipynb")):
        try:
            meta = _json_of(executed)["metadata"].get("jevalkit")
        except (ValueError, KeyError, TypeError, AttributeError, ReportError):
            continue
        if not meta:
            continue
        row: dict[str, Any] = {
            "report": str(executed.with_suffix(".html")),
            "notebook": executed.stem,
        }
        row.update({k: v for k, v in meta.get("parameters", {}).items() if k != "headline_path"})
        headline = executed.with_name(f"{executed.stem}.headline.json")
        if headline.exists():
            try:
                numbers = _json_of(headline)
            except (ValueError, ReportError):
                numbers = None
            if isinstance(numbers, dict):
                row.update(
                    {
                        f"headline.{k}": v
                        for k, v in numbers.items()
                        if isinstance(v, int | float | str | bool) or v is None
                    }
                )
        rows.append(row)
    return pd.DataFrame(rows)


def static_root(pattern: str, base: Path) -> Path:
    """The part of an output pattern before its first placeholder: where the summary CSV goes.

    Example:
        >>> str(static_root("reports/{model}/x", Path("/b")))
        '/b/reports'
    """
    head = pattern.split("{", 1)[0]
    return base / (head.rsplit("/", 1)[0] if "/" in head else ".")


def write_batch_summary(path: str | Path) -> tuple[pd.DataFrame, Path]:
    """Collect the reports of a batch (:func:`collect`) under the static part of its output
    pattern and write them to ``batch_summary.csv`` there; return the table and the CSV path."""
    spec = load_batch(path)
    root = static_root(spec.out, spec.base)
    summary = collect(root)
    csv = root / SUMMARY_NAME
    write_file(csv, summary.to_csv(index=False), BatchError, what="batch summary")
    return summary, csv
