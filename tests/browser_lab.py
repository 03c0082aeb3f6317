"""A real JupyterLab on 127.0.0.1 and headless Chromium (Debian's package, driven by Playwright)
for the widget tests that run in a browser."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import nbformat
import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
needs_chromium = pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed (.ci/run installs it)"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def jupyterlab(folder, name: str, cells: list[str] | None = None) -> Iterator[str]:
    """JupyterLab serving ``folder`` with notebook ``name`` made of ``cells`` (None: the
    notebook is in ``folder`` already); yields its URL."""
    if cells is not None:
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
        nbformat.write(nb, folder / name)
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
        f"--ServerApp.root_dir={folder}",
    ]
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(folder / ".jupyter")}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/lab", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.5)
    try:
        yield f"{base}/lab/tree/{name}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@contextmanager
def headless_chromium():
    """Debian's Chromium, headless, driven by Playwright (closed on exit)."""
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
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def chromium_page(url: str):
    """A headless Chromium page with ``url`` open and its notebook loaded."""
    with headless_chromium() as browser:
        page = browser.new_page()
        page.goto(url)
        page.wait_for_function(
            "window.jupyterapp && document.querySelector('.jp-Notebook')", timeout=120_000
        )
        yield page


def dismiss_dialogs(page) -> None:
    """Accept any JupyterLab dialog in the way (the kernel chooser when run-all fires early)."""
    page.evaluate(
        "() => { document.querySelectorAll('.jp-Dialog .jp-mod-accept')"
        ".forEach(b => b.click()); return true; }"
    )


def wait_for_kernel(page, timeout: float = 120) -> None:
    """Wait until the notebook's kernel is idle, accepting the kernel chooser if it shows."""
    status = (
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " const k = w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel; return k ? k.status : null; }"
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        dismiss_dialogs(page)
        if page.evaluate(status) == "idle":
            return
        time.sleep(0.5)
    raise AssertionError("the notebook's kernel never became idle")


def run_all_until(page, selector: str, timeout: float = 120) -> None:
    """Run every cell (again), on an idle kernel, until ``selector`` is on the page."""
    wait_for_kernel(page)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and page.locator(selector).count() == 0:
        # fire and forget: awaiting the command's promise blocks until a kernel is chosen
        page.evaluate(
            "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); return true; }"
        )
        time.sleep(3)
        dismiss_dialogs(page)
    assert page.locator(selector).count() > 0, f"{selector} never appeared"
