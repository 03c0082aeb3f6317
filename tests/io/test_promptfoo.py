"""promptfoo results, from running promptfoo itself (its offline ``echo`` provider, ``--repeat 3``)
when ``make`` installed it, and always from the committed output of the same version
(``fixtures/promptfoo-0.121.20-echo-repeat3.json``, made by running fixtures/promptfooconfig.yaml)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from jevalkit import io
from jevalkit.errors import ImportFormatError
from jevalkit.metrics import consistency, pass_rate

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]
PROMPTFOO = Path(
    os.environ.get("JEVALKIT_PROMPTFOO", REPO / ".venv/promptfoo/node_modules/.bin/promptfoo")
)


def check(df):
    # 2 tests x 2 prompts x 3 repeats; repeats are told apart by their order within a test's vars
    assert len(df) == 12 and sorted(df["repeat"].unique()) == [0, 1, 2]
    assert set(df["case_id"]) == {'{"word":"hello"}', '{"word":"bye"}'}
    assert set(df["system"]) == {"echo · short", "echo · Please say {{word}} now"}
    assert df["error"].isna().all()  # a failed assertion is a scored row, not an error
    hello = df[df["case_id"] == '{"word":"hello"}']
    assert hello["passed"].all() and (hello["score"] == 1.0).all()
    assert all(s["namedScores"] == {"caseless": 1} for s in hello["source"])
    assert [a["type"] for a in hello["source"].iloc[0]["assertions"]] == ["contains", "icontains"]
    bye = df[df["case_id"] == '{"word":"bye"}']
    assert not bye["passed"].any() and (bye["score"] == 0.0).all()
    rates = pass_rate(df, by="system")
    assert rates["n_cases"].tolist() == [2, 2] and rates["n"].tolist() == [6, 6]
    assert (consistency(df, by="system", level=None)["k"] == 3).all()


def test_the_committed_promptfoo_output():
    path = FIXTURES / "promptfoo-0.121.20-echo-repeat3.json"
    assert io.detect_format(path) == "promptfoo"
    check(io.read(path))


@pytest.mark.skipif(
    not PROMPTFOO.exists(),
    reason="promptfoo is not installed (make installs it when npm is present)",
)
def test_running_promptfoo_itself(tmp_path):
    shutil.copy(FIXTURES / "promptfooconfig.yaml", tmp_path)
    env = {
        **os.environ,
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_CONFIG_DIR": str(tmp_path / ".promptfoo"),
    }
    out = subprocess.run(
        [
            str(PROMPTFOO),
            "eval",
            "-c",
            "promptfooconfig.yaml",
            "--repeat",
            "3",
            "--output",
            "results.json",
            "--no-cache",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (tmp_path / "results.json").exists(), out.stdout[-2000:] + out.stderr[-2000:]
    check(io.read(tmp_path / "results.json"))


def test_a_promptfoo_file_without_runs_is_refused(tmp_path):
    path = tmp_path / "results.json"
    path.write_text('{"evalId": "x", "results": {"version": 3, "results": [{"vars": {}}]}}')
    with pytest.raises(
        ImportFormatError, match=r"results.json: results.results\[0\]: no field 'provider'"
    ):
        io.read(path, format="promptfoo")
