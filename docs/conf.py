"""Sphinx configuration of jevalkit's documentation: MyST Markdown pages, tutorials executed by
myst-nb from the bundled notebooks, the PyData theme, an API reference from the docstrings. The
site builds offline and its pages load nothing from the network (no CDN: no MathJax, no
require.js, no widget manager; a widget shows its static HTML)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# this process (autodoc imports jevalkit.plots) draws nothing: no window, whatever the shell says
os.environ.setdefault("MPLBACKEND", "Agg")

# the tutorials' kernel: this Python, told not to log (a kernel on 127.0.0.1 over TCP warns
# that it is unencrypted on every start: how every local kernel runs, not news to the reader;
# the reports silence it the same way), drawing with the inline backend as in JupyterLab. A kernel
# inherits this process's environment, and ipykernel picks the inline backend only when
# MPLBACKEND is unset: with the Agg above every figure was drawn and none was shown, so the site
# had no figure at all. The kernel's own env wins over the inherited one.
_KERNELS = Path(tempfile.mkdtemp(prefix="jevalkit-docs-kernels-"))
(_KERNELS / "kernels" / "python3").mkdir(parents=True)
(_KERNELS / "kernels" / "python3" / "kernel.json").write_text(
    json.dumps(
        {
            "argv": [
                sys.executable,
                "-m",
                "ipykernel_launcher",
                "-f",
                "{connection_file}",
                "--IPKernelApp.log_level=CRITICAL",
            ],
            "display_name": "Python 3",
            "language": "python",
            "env": {
                "MPLBACKEND": "module://matplotlib_inline.backend_inline",
                # the tutorials run this checkout's jevalkit, as autodoc reads it (above), not
                # whichever one is installed
                "PYTHONPATH": os.pathsep.join(
                    [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
                ),
            },
        }
    )
)
os.environ["JUPYTER_PATH"] = os.pathsep.join(
    [str(_KERNELS), *filter(None, [os.environ.get("JUPYTER_PATH")])]
)

project = "jevalkit"
author = "the jevalkit authors"
copyright = "2026, the jevalkit authors"

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.autosummary"]
html_theme = "pydata_sphinx_theme"
html_title = "jevalkit"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
html_static_path: list[str] = []

# offline: no widget JS from a CDN
# MathJax is added only to a page with equations, and no page has one (the test checks)
nb_ipywidgets_js: dict = {}
# a widget's static HTML, not its (unrenderable, script-only) view
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None)]

nb_execution_mode = "force"  # every tutorial runs at every build: the docs show what the code does
nb_execution_timeout = 600
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
# a notebook writes its headline JSON into a scratch folder, not the repo
nb_execution_in_temp = True

autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_google_docstring = True
napoleon_numpy_docstring = True
napoleon_use_ivar = True  # a results object's Attributes as fields, not a second description

exclude_patterns = [
    "_build",
    "**.ipynb_checkpoints",
    "smoke.md",
    "api_smoke.md",
    "smoke_figures.md",
]
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]

# `make docs` builds everything; `-t smoke` (the test) the front page, one tutorial, a page of
# every plot and the reference of one package
if tags.has("smoke"):  # type: ignore[name-defined]  # noqa: F821
    exclude_patterns = [
        "_build",
        "index.md",
        "guide/**",
        "api/**",
        "tutorials/index.md",
        "tutorials/notebooks/**",
    ]
    root_doc = "smoke"
