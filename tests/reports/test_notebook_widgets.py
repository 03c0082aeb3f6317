"""Every bundled notebook's widgets show labels a person can read (issue 54.2): the
LevelDistribution dropdown of explore_results read ``repeat <bound method Series.repeat ...>``
(a row Series' ``.repeat`` is its method, not the column). Each notebook that makes widgets is
run as a report; the widget state the kernel saved (every model's description, options and
text) must hold no Python object's repr."""

from __future__ import annotations

import json
import re

import nbformat
import pytest

from jevalkit._paths import notebooks_dir
from jevalkit.reports import bundled_notebooks, run_report

# what a Python object's repr looks like when it lands in a label
REPR = re.compile(r"<bound method |<function |<built-in |<method |object at 0x[0-9a-f]+|\bSeries\.")
LABEL_FIELDS = ("description", "_options_labels", "value", "placeholder", "tooltip", "_titles")


def makes_widgets(name: str) -> bool:
    """Whether a bundled notebook's code imports a widget library."""
    nb = json.loads((notebooks_dir() / f"{name}.ipynb").read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    return bool(re.search(r"^\s*(from|import) (ipywidgets|jevalkit\.widgets)\b", code, re.M))


def object_reprs(state: dict) -> list[str]:
    """Every label-like text of every widget model in a notebook's saved widget state that
    reads as a Python object's repr, as ``model: field: text``."""
    found = []
    models = state.get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    for model in models.values():
        fields = model.get("state", {})
        for field in LABEL_FIELDS:
            values = fields.get(field)
            for value in values if isinstance(values, list | dict) else [values]:
                text = value if isinstance(value, str) else ""
                if REPR.search(text):
                    found.append(f"{model.get('model_name')}: {field}: {text[:120]}")
    return found


def test_the_check_finds_the_repr_the_dropdown_showed():
    state = {
        "application/vnd.jupyter.widget-state+json": {
            "state": {
                "1": {
                    "model_name": "DropdownModel",
                    "state": {
                        "description": "judged",
                        "_options_labels": [
                            "f1 · repeat <bound method Series.repeat of case_id f1>",
                            "f1 · repeat 0",
                        ],
                    },
                }
            }
        }
    }
    assert object_reprs(state) == [
        "DropdownModel: _options_labels: f1 · repeat <bound method Series.repeat of case_id f1>"
    ]


WIDGET_NOTEBOOKS = [name for name in bundled_notebooks() if makes_widgets(name)]


def test_the_notebooks_that_make_widgets_are_found():
    assert "explore_results" in WIDGET_NOTEBOOKS


@pytest.mark.parametrize("name", WIDGET_NOTEBOOKS)
def test_every_widget_label_of_a_bundled_notebook_is_readable(name, tmp_path):
    report = run_report(name, out=tmp_path)  # a Labeler writes into tmp_path
    state = nbformat.read(report.notebook, as_version=4).metadata.get("widgets", {})
    models = state.get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    assert models, f"{name}: no widget state saved"
    assert object_reprs(state) == []
    # the judged-case dropdown names each judged row by its case and repeat number
    labels = [
        m["state"]["_options_labels"]
        for m in models.values()
        if m.get("model_name") == "DropdownModel" and m["state"].get("description") == "judged"
    ]
    if name == "explore_results":
        assert labels and all(re.fullmatch(r"\S+ · repeat \d+", text) for text in labels[0])
