"""An installed wheel works outside the checkout (issue 15.3): build it, install it into a fresh
virtual environment, and run the CLI from a temporary folder."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from probe_folders import write_placeholders

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    root = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(root / "dist"),
            str(REPO),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = (root / "dist").glob("jevalkit-*.whl")
    env_dir = root / "env"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "-q",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    # the dependencies come from this environment (read-only): only jevalkit is the wheel's
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    work = root / "elsewhere"
    work.mkdir()
    return env_dir, work


def outside_env() -> dict[str, str]:
    """The environment of a user of the installed wheel: no jevalkit settings, and no
    PYTHONPATH that would import a source checkout instead of the wheel."""
    return {
        k: v for k, v in os.environ.items() if not k.startswith("JEVALKIT_") and k != "PYTHONPATH"
    }


def jevalkit(installed, *args, timeout=300):
    env_dir, work = installed
    env = outside_env()
    env["PATH"] = f"{env_dir / 'bin'}:{env['PATH']}"
    env["JEVALKIT_CACHE_DIR"] = str(work / "cache")
    # the dependencies' data files (nbconvert's templates) live with them, in this environment
    env["JUPYTER_PATH"] = str(Path(sys.prefix) / "share" / "jupyter")
    return subprocess.run(
        [str(env_dir / "bin" / "jevalkit"), *args],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_wheel_carries_data_and_notebooks(installed):
    env_dir, work = installed
    code = "import jevalkit, jevalkit._paths as p; print(jevalkit.__file__, p.data_dir(), p.notebooks_dir())"
    out = subprocess.run(
        [str(env_dir / "bin" / "python"), "-c", code],
        cwd=work,
        env=outside_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    package, data, notebooks = out.split()
    assert package.startswith(str(env_dir)) and "_bundled_data" in data
    assert (
        notebooks.endswith("_bundled_notebooks") and Path(notebooks, "probe_report.ipynb").is_file()
    )


def test_probes_check_report_and_metrics_run_from_a_temporary_folder(installed):
    env_dir, work = installed
    check = jevalkit(installed, "probes", "check")
    assert check.returncode == 0, check.stderr
    report = jevalkit(installed, "report", "probe_report", "--out", "out")
    assert report.returncode == 0, report.stderr
    assert (work / "out" / "probe_report.html").is_file()
    headline = work / Path(report.stdout.split("headline: ")[1].strip())
    assert headline.is_file() and "constrained" in headline.read_text()
    runs = env_dir / "lib"
    (bundled,) = runs.rglob("_bundled_data/runs/schema-ten-records__local-demo.jsonl")
    metrics = jevalkit(installed, "metrics", str(bundled), "--by", "system")
    assert metrics.returncode == 0, metrics.stderr
    assert "pass_rate" in metrics.stdout and "constrained, T=1" in metrics.stdout


def test_a_user_probe_folder_outside_the_package_works_from_the_wheel(installed, openai_server):
    env_dir, work = installed
    cases = work / "qa.jsonl"
    cases.write_text("".join(f'{{"id": "q{i}", "n": {i}, "expected": "{i}"}}\n' for i in range(25)))
    mine = work / "my-probes"
    for args in (
        ("probes", "new", "echo-number", "--cases", str(cases), "--probes-dir", str(mine)),
        ("probes", "lock", "--probes-dir", str(mine)),
        ("probes", "check", "--probes-dir", str(mine)),
    ):
        if args[1] == "lock":
            write_placeholders(mine / "echo-number" / "v1.yaml")
        done = jevalkit(installed, *args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    assert not any(env_dir.rglob("echo-number"))  # nothing written into the installed package
    openai_server.reply = lambda body: body["messages"][-1]["content"].removeprefix("n: ")
    env_dir, work = installed
    env = {k: v for k, v in os.environ.items() if not k.startswith("JEVALKIT_")}
    env.update(PATH=f"{env_dir / 'bin'}:{env['PATH']}", JEVALKIT_CACHE_DIR=str(work / "cache"))
    env["JEVALKIT_PROBES"] = str(mine)
    out = work / "runs" / "echo.jsonl"
    done = subprocess.run(
        [
            str(env_dir / "bin" / "jevalkit"),
            "run",
            "echo-number",
            "--model",
            "test/m",
            "--base-url",
            openai_server.base_url,
            "--out",
            str(out),
            "--repeats",
            "2",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 50 and all(r["passed"] for r in rows)
    assert len({(r["case_id"], r["repeat"]) for r in rows}) == 50
