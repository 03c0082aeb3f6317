"""``jevalkit items`` and ``jevalkit leaderboard`` on the example benchmark; user mistakes are one
line and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

from jevalkit._paths import data_dir

BENCH = str(data_dir() / "examples" / "benchmark.jsonl")


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "jevalkit.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_items_lists_the_flagged_items_and_alpha():
    out = cli("items", BENCH)
    assert out.returncode == 0, out.stderr
    head = out.stdout.splitlines()[0]
    # alpha from pairwise-complete covariances (one system missed an item): 0.899, as the library
    assert head.startswith("80 items, 24 systems; Cronbach's alpha 0.899")
    assert "6 dead" in head and "4 flaky" in head
    assert "item-70" in out.stdout and "item-00" not in out.stdout


def test_items_with_irt_in_json():
    out = cli("items", BENCH, "--irt", "1pl", "--json")
    assert out.returncode == 0, out.stderr
    records = json.loads(out.stdout[out.stdout.index("[") :])
    assert {"discrimination_irt", "infit", "status"} <= set(records[0])


def test_leaderboard_prints_rank_intervals_and_writes_an_escaped_page(tmp_path):
    page = tmp_path / "board.html"
    out = cli("leaderboard", BENCH, "--resamples", "300", "--html", str(page))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("24 systems over 80 cases; could be first: sys-02")
    text = page.read_text()
    assert "<svg" in text and "sys-05" in text and "8 missing" in text


def test_leaderboard_of_pairwise_games():
    out = cli(
        "leaderboard",
        str(data_dir() / "examples" / "pairwise.jsonl"),
        "--from",
        "pairwise",
        "--pairwise",
        "--resamples",
        "200",
    )
    assert out.returncode == 0, out.stderr
    assert "could be first: alpha" in out.stdout


def test_mistakes_are_one_line_with_exit_2(tmp_path):
    for args, message in [
        (["items", BENCH, "--case", "question_id"], "no 'question_id' column"),
        (["items", BENCH, "--scale", "ten"], "expected LOW,HIGH"),
        (["leaderboard", BENCH, "--resamples", "5"], "--resamples must be from 100 to 100,000"),
        (["leaderboard", BENCH, "--html", str(tmp_path)], "is a folder"),
    ]:
        out = cli(*args)
        assert out.returncode == 2, args
        assert message in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
