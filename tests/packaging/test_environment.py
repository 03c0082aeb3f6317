"""environment.yml installs what pyproject.toml's default extras install (names, not versions)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def names(requirements) -> set[str]:
    out = set()
    for req in requirements:
        name = re.split(r"[<>=!\[ ;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")
        if name and not name.startswith(("-e", "jevalkit")):
            out.add(name)
    return out


def test_environment_yml_lists_every_dependency_of_the_make_install():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    wanted = names(project["dependencies"])
    for extra in ("test", "notebooks", "local", "docs", "inspect"):
        wanted |= names(extras[extra])
    wanted.discard("dask")  # conda-forge splits dask[distributed] into dask + distributed
    env = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    listed = names(d for d in env if isinstance(d, str))
    listed |= names(next(d["pip"] for d in env if isinstance(d, dict)))
    assert wanted <= listed, f"missing from environment.yml: {sorted(wanted - listed)}"
