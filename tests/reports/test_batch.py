"""Batch reports on a real Dask LocalCluster (2 worker processes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from jevalkit.reports import BatchError, collect, load_batch, run_batch


def tiny_notebook(path: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    params = nbformat.v4.new_code_cell('results = None\nlabel = "x"\nheadline_path = "h.json"')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [
        params,
        nbformat.v4.new_code_cell(
            "from jevalkit.reports import save_headline\n"
            "if label == 'bad':\n    raise ValueError('label is bad')\n"
            "lines = len(open(results).read().splitlines())\n"
            "save_headline({'lines': lines, 'label': label}, headline_path)"
        ),
    ]
    nbformat.write(nb, path)
    return path


@pytest.fixture
def batch(tmp_path):
    tiny_notebook(tmp_path / "tiny.ipynb")
    (tmp_path / "a.jsonl").write_text("1\n2\n")
    (tmp_path / "b.jsonl").write_text("1\n2\n3\n")
    spec = tmp_path / "batch.yaml"
    spec.write_text(
        "notebook: tiny.ipynb\ngrid:\n  results: [a.jsonl, b.jsonl]\n  label: [p, q]\n"
        "out: reports/{label}/{results_stem}\n"
    )
    return spec


def test_grid_runs_skips_and_reruns_only_what_changed(batch):
    first = run_batch(batch, workers=2, progress=False)
    assert sorted(first["status"]) == ["done"] * 4
    table = collect(batch.parent / "reports").sort_values(["label", "results"])
    assert len(table) == 4 and set(table["label"]) == {"p", "q"}
    assert dict(
        zip(table["results"].map(lambda p: Path(p).name), table["headline.lines"], strict=True)
    ) == {"a.jsonl": 2, "b.jsonl": 3}
    meta = json.loads((batch.parent / "reports/p/a/tiny.ipynb").read_text())["metadata"]["jevalkit"]
    assert meta["parameters"]["label"] == "p" and meta["inputs"]["input_sha256"]["results"]
    assert meta["jevalkit_version"]

    second = run_batch(batch, workers=2, progress=False)
    assert sorted(second["status"]) == ["skipped"] * 4

    (batch.parent / "a.jsonl").write_text("1\n2\n3\n4\n")
    third = run_batch(batch, workers=2, progress=False)
    rerun = third[third["status"] == "done"]["out"].map(lambda p: Path(p).name).tolist()
    assert sorted(rerun) == ["a", "a"] and (third["status"] == "skipped").sum() == 2
    assert run_batch(batch, workers=2, progress=False, force=True)["status"].eq("done").all()


def test_a_failing_cell_leaves_the_rest_done_and_exits_nonzero(batch):
    batch.write_text(
        batch.read_text()
        .replace("label: [p, q]", "label: [p, bad]")
        .replace("results: [a.jsonl, b.jsonl]", "results: [a.jsonl]")
        + "rows:\n  - {results: b.jsonl, label: p}\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "jevalkit.cli", "report", "--batch", str(batch), "--workers", "2"],
        capture_output=True,
        timeout=600,
    )
    text = out.stdout.decode()
    assert out.returncode == 1
    assert (
        "FAILED" in text
        and "raised ValueError: label is bad" in text
        and "2 done, 0 skipped, 1 failed" in text
    )
    assert (batch.parent / "reports/bad/a/tiny.partial.ipynb").exists()  # the partial one is kept
    assert not (batch.parent / "reports/bad/a/tiny.ipynb").exists()
    summary = pd.read_csv(batch.parent / "reports/batch_summary.csv")
    assert len(summary) >= 2


def test_bad_batch_files_are_one_line_errors(tmp_path):
    bad = tmp_path / "b.yaml"
    bad.write_text("notebook: probe_report\ngrid: {probe: []}\nout: x\n")
    with pytest.raises(BatchError, match="non-empty list"):
        load_batch(bad)
    bad.write_text("notebook: probe_report\ngrid: {probe: [a]}\nout: x\nextra: 1\n")
    with pytest.raises(BatchError, match="unknown key"):
        load_batch(bad)


def test_only_path_parameters_resolve_against_the_batch_folder(tmp_path):
    from jevalkit.reports import BatchSpec, resolve_value

    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.jsonl").write_text("")
    spec = BatchSpec(Path("x.ipynb"), {}, [], "o", tmp_path, ("results",))
    assert resolve_value("probe", "openai/gpt-4o-mini", spec) == "openai/gpt-4o-mini"
    assert resolve_value("results", "runs/b.jsonl", spec) == str(tmp_path / "runs" / "b.jsonl")
    assert resolve_value("other", "runs/a.jsonl", spec) == str(tmp_path / "runs" / "a.jsonl")
    assert resolve_value("other", "runs/none.jsonl", spec) == "runs/none.jsonl"
