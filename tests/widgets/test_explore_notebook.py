"""The bundled widgets notebook (explore_results) in a real JupyterLab 4 in headless Chromium:
run as a user runs it, each widget renders and responds, on the bundled real run."""

from __future__ import annotations

import json
import shutil
import time

from browser_lab import chromium_page, dismiss_dialogs, jupyterlab, needs_chromium, run_all_until

from jevalkit import io
from jevalkit._paths import data_dir, notebooks_dir
from jevalkit.probes import load_probe

RUN = data_dir() / "runs" / "contact-extraction__v2__local.jsonl"


def wait_until(page, check, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"{what} never happened")


@needs_chromium
def test_every_widget_of_the_explore_notebook_renders_and_responds(tmp_path):
    shutil.copy(notebooks_dir() / "explore_results.ipynb", tmp_path / "explore.ipynb")
    # every cell drawn, not only those on screen (JupyterLab 4 skips drawing the others)
    settings = (
        tmp_path / ".jupyter" / "lab" / "user-settings" / "@jupyterlab" / "notebook-extension"
    )
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    df = io.read(RUN)
    case = load_probe("contact-extraction@2").cases[2]  # contact-03
    with jupyterlab(tmp_path, "explore.ipynb") as url, chromium_page(url) as page:
        run_all_until(page, ".jevalkit-labeler-keys input", timeout=180)
        browser = page.locator(".jevalkit-results-browser")
        count = browser.locator(".jevalkit-count")
        assert count.text_content() == f"{len(df)} of {len(df)} rows"
        # filter by case: both configurations' outputs for it, beside its expected answer
        browser.locator("select").nth(2).select_option(case.id)
        n = int((df["case_id"] == case.id).sum())
        wait_until(
            page, lambda: count.text_content() == f"{n} of {len(df)} rows", "the case filter"
        )
        detail = browser.text_content()
        assert f"case {case.id}" in detail and case.expected["email"] in detail
        assert case.fields["text"][:40] in detail
        # CompareView: the two configurations paired on all 25 cases
        assert (
            "25 case(s) both ran"
            in page.locator(".widget-html-content:has-text('both ran')").first.text_content()
        )
        # LevelDistribution: another judged case redraws the bars
        bars = page.locator(".jevalkit-level-distribution").first
        before = bars.inner_text()
        pick = page.locator(".widget-dropdown:has-text('judged') select").first
        options = pick.locator("option").all_inner_texts()
        for option in options[1:]:
            pick.select_option(label=option)
            time.sleep(0.5)
            if bars.inner_text() != before:
                break
        assert bars.inner_text() != before, "no other judged case changed the bars"
        # the Labeler labels a real output of the run, written at once
        shown = page.locator(".jevalkit-labeler-output").last.inner_text().strip()
        assert shown in {str(o).strip() for o in df["output"]}
        dismiss_dialogs(page)
        page.locator(".jevalkit-labeler-keys input").last.click()
        page.keyboard.type("3")
        labels = tmp_path / "labels.jsonl"
        wait_until(page, lambda: labels.exists() and labels.read_text().strip(), "a label")
    (label,) = [json.loads(line) for line in labels.read_text().splitlines()]
    assert label["level"] == "right" and label["labeller"] == "you"
    assert label["case_id"] in set(df["case_id"]) and 0 < label["sampling_probability"] <= 1
