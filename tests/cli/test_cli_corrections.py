"""Messages a new user met (issue 38.7): each names the thing and the fix."""

from __future__ import annotations

import io
import sys

import pytest

from jevalkit._paths import data_dir
from jevalkit.cli import main

DEMO = data_dir() / "runs" / "schema-ten-records__local-demo.jsonl"


def run_cli(capsys, *argv, stdin: str | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own exit
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_page_of_a_version_the_results_did_not_run_names_the_versions_they_did(capsys, tmp_path):
    page = tmp_path / "page.html"
    code, out, err = run_cli(
        capsys, "probes", "page", "schema-ten-records", "--results", str(DEMO), "--out", str(page)
    )
    assert code == 0 and out.strip() == str(page)
    html = page.read_text()
    assert "Not yet run." in html  # the latest version, @4, is not in the demo run...
    assert "<code>schema-ten-records@2</code> (15 rows)" in html  # ...which ran @2
    assert err.strip() == (
        "note: the results hold no rows of schema-ten-records@4, so the page says 'Not yet run'; "
        "they hold schema-ten-records@2 (15 rows): jevalkit probes page schema-ten-records@2 "
        "--results ..."
    )
    code, _, err = run_cli(
        capsys, "probes", "page", "schema-ten-records@2", "--results", str(DEMO), "--out", str(page)
    )
    assert code == 0 and err == "" and "Not yet run" not in page.read_text()


def test_no_cache_help_says_what_the_flag_does(capsys):
    code, out, _ = run_cli(capsys, "run", "--help")
    assert code == 0
    flat = " ".join(out.split())
    assert "--no-cache bypass the response cache: send every request again" in flat
    assert "(--no-cache: bypass it)" not in flat  # read as "--no-cache: use the cache"


def test_probes_new_with_a_missing_case_file_says_the_path_not_put_it_beside(capsys, tmp_path):
    code, _, err = run_cli(
        capsys, "probes", "new", "mine", "--cases", "nope.csv", "--probes-dir", str(tmp_path)
    )
    assert code == 2 and len(err.splitlines()) == 1
    assert "--cases nope.csv: no such file (looked for " in err
    assert "beside the probe file" not in err and "copies it beside the new probe" in err


def test_an_unknown_case_lists_the_ids_and_the_nearest(capsys, monkeypatch):
    code, _, err = run_cli(
        capsys,
        "score",
        "unit-conversion@1",
        "--case",
        "km-to-m1",
        stdin="3000",
        monkeypatch=monkeypatch,
    )
    assert code == 2 and len(err.splitlines()) == 1
    assert "unit-conversion@1 has no case 'km-to-m1'; did you mean 'km-to-m-1'?" in err
    assert "its cases: km-to-m-1, km-to-m-2," in err and "(40 in all)" in err
    assert "unit-conversion/cases.csv" in err and "`jevalkit probes show unit-conversion@1`" in err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["run", "schema-ten-records", "--model", "local", "--temprature", "1"],
            "jevalkit run: error: unrecognized arguments: --temprature 1; did you mean "
            "--temperature? (see `jevalkit run --help`)",
        ),
        (
            ["probes", "check", "--probes-dri", "x"],
            "jevalkit probes check: error: unrecognized arguments: --probes-dri; did you mean "
            "--probes-dir? (see `jevalkit probes check --help`)",
        ),
    ],
)
def test_a_misspelled_flag_gets_a_did_you_mean_from_its_command(capsys, argv, expected):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert err.strip() == expected  # was "jevalkit: error: ... (see `jevalkit --help`)"


@pytest.mark.parametrize(
    ("argv", "meant"),
    [(["exprot", "x"], "'export'"), (["probes", "chek"], "'check'"), (["merg"], "'merge'")],
)
def test_a_misspelled_command_gets_a_did_you_mean(capsys, argv, meant):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert f"invalid choice: '{argv[0] if argv[0] != 'probes' else argv[1]}'" in err
    assert f"; did you mean {meant}? (see `" in err  # was the list of choices alone


def test_a_command_nothing_is_close_to_gets_no_guess(capsys):
    code, _, err = run_cli(capsys, "zzz")
    assert code == 2 and "did you mean" not in err and "choose from 'probes'" in err
