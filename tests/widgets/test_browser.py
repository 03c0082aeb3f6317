"""End to end in a real browser: JupyterLab on 127.0.0.1, notebooks showing jevalkit widgets, run
in headless Chromium; what the widgets draw and write is checked."""

from __future__ import annotations

import json
import time

import httpx
from browser_lab import (
    chromium_page,
    dismiss_dialogs,
    jupyterlab,
    needs_chromium,
    run_all_until,
    wait_for_kernel,
)


@needs_chromium
def test_level_distribution_renders_its_bars_in_jupyterlab(tmp_path):
    cell = "from jevalkit.widgets import LevelDistribution\nLevelDistribution([0.02, 0.05, 0.13, 0.30, 0.50])"
    with jupyterlab(tmp_path, "widget.ipynb", [cell]) as url, chromium_page(url) as page:
        run_all_until(page, ".jevalkit-bar")
        assert page.locator(".jevalkit-bar").count() == 5
        assert "integer verdict" in page.locator(".jevalkit-level-distribution").inner_text()


LABELER_CELL = """
import pandas as pd
from jevalkit.widgets import Labeler
items = pd.DataFrame({"system": "m", "case_id": [f"c{i}" for i in range(1, 6)],
                      "output": ["<script>alert(1)</script>", "two", "three", "four", "five"],
                      "sampling_probability": 0.5})
Labeler(items, levels=["bad", "ok", "good"], out="labels.jsonl", labeller="tester")
"""


def wait_for_text(page, selector: str, text: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if page.locator(selector).count() and text in page.locator(selector).last.inner_text():
            return
        time.sleep(0.2)
    raise AssertionError(f"{selector} never showed {text!r}")


def press(page, key: str, then: str) -> None:
    dismiss_dialogs(page)
    box = page.locator(".jevalkit-labeler-keys input").last
    box.click()
    page.keyboard.type(key)
    wait_for_text(page, ".jevalkit-labeler-progress", then)


@needs_chromium
def test_labeler_labels_by_key_presses_and_resumes_after_a_kernel_restart(tmp_path):
    labels = tmp_path / "labels.jsonl"
    with jupyterlab(tmp_path, "label.ipynb", [LABELER_CELL]) as url, chromium_page(url) as page:
        run_all_until(page, ".jevalkit-labeler-keys input")
        assert "<script>" in page.locator(".jevalkit-labeler-output").last.inner_text()  # as text
        press(page, "3", "2 / 5")
        press(page, "1", "3 / 5")
        press(page, "2", "4 / 5")
        written = [json.loads(line) for line in labels.read_text().splitlines()]
        assert [r["level"] for r in written] == ["good", "bad", "ok"]
        assert [r["case_id"] for r in written] == ["c1", "c2", "c3"]
        assert all(r["labeller"] == "tester" and r["sampling_probability"] == 0.5 for r in written)
        # restart the kernel: the labels are on disk, and a new Labeler resumes at item 4
        root = url.split("/lab/")[0]
        before = httpx.get(f"{root}/api/kernels").json()[0]["last_activity"]
        page.evaluate(
            "() => { window.jupyterapp.commands.execute('notebook:restart-kernel'); return true; }"
        )
        deadline = time.monotonic() + 60  # accept the "Restart kernel?" dialog when it shows
        while httpx.get(f"{root}/api/kernels").json()[0]["last_activity"] == before:
            assert time.monotonic() < deadline, "the kernel was not restarted"
            dismiss_dialogs(page)
            time.sleep(0.5)
        wait_for_kernel(page)
        page.evaluate(
            "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); return true; }"
        )
        wait_for_text(page, ".jevalkit-labeler-progress", "4 / 5", timeout=120)
        # a fresh kernel: the cell ran as execution 1 again, not 2
        assert "[1]" in page.locator(".jp-InputArea-prompt").first.inner_text()
        press(page, "1", "5 / 5")
    written = [json.loads(line) for line in labels.read_text().splitlines()]
    assert [(r["case_id"], r["level"]) for r in written] == [
        ("c1", "good"),
        ("c2", "bad"),
        ("c3", "ok"),
        ("c4", "bad"),
    ]
