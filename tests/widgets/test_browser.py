"""End to end in a real browser: JupyterLab on 127.0.0.1, a notebook showing LevelDistribution, run
in headless Chromium (Debian's package, driven by Playwright), and the widget's bars in the page."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time

import httpx
import nbformat
import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_code_cell(
            "from jevalkit.widgets import LevelDistribution\nLevelDistribution([0.02, 0.05, 0.13, 0.30, 0.50])"
        )
    ]
    nbformat.write(nb, tmp_path / "widget.ipynb")
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--allow-root",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--LabApp.expose_app_in_browser=True",
        f"--ServerApp.root_dir={tmp_path}",
    ]
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / ".jupyter")}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/lab", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.5)
    yield base
    proc.terminate()
    proc.wait(timeout=30)


@pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed (.ci/run installs it)"
)
def test_level_distribution_renders_its_bars_in_jupyterlab(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        page = browser.new_page()
        page.goto(lab + "/lab/tree/widget.ipynb")
        page.wait_for_function(
            "window.jupyterapp && document.querySelector('.jp-Notebook')", timeout=120_000
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and page.locator(".jevalkit-bar").count() == 0:
            # fire and forget: awaiting the command's promise blocks until a kernel is chosen
            page.evaluate(
                "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); return true; }"
            )
            time.sleep(3)
        bars = page.locator(".jevalkit-bar")
        assert bars.count() == 5
        assert "integer verdict" in page.locator(".jevalkit-level-distribution").inner_text()
        browser.close()
