"""Probes test themselves: worked examples through the real scorer, plus the lock."""

from __future__ import annotations

import shlex
from pathlib import Path

import pandas as pd

from .._paths import probes_dir
from ..datafiles import load_yaml, publish_versions
from ..errors import CaseFileError, ProbeError
from ._loader import load_probe, probe_files, read_probe_file
from ._lock import LOCK_NAME, read_lock
from ._new import placeholders

CHECK_COLUMNS = ["probe", "label", "expect", "score", "ok", "problem", "note"]


def check_probes(
    refs: list[str] | None = None, *, root: Path | None = None, beside_bundled: bool = False
) -> pd.DataFrame:
    """Check probes (all of them by default); one row per worked example or problem.

    A probe fails its check when a ``pass`` example scores below 1, a ``fail`` example scores 1,
    it has no passing or no failing example, it still holds a placeholder of the ``jevalkit probes
    new`` skeleton (``TODO``), or its file fails to load (bad format, changed content). With
    ``beside_bundled`` (``root`` is a user's folder looked up beside the bundled probes, as
    ``$JEVALKIT_PROBES`` is), a probe whose id is also bundled fails: loading it by name would be
    refused. A correct version not yet published in the lock is not a failure (it is one being
    written): its row is ok and says so in ``note``. Columns: ``probe``, ``label``, ``expect``,
    ``score``, ``ok``, ``problem`` (why a row is not ok, else empty), ``note`` (what to do next
    about a row that is ok, else empty).

    Example:
        >>> report = check_probes(["schema-ten-records@2"])
        >>> len(report), bool(report["ok"].all())
        (5, True)
    """
    given = root
    root = probes_dir() if root is None else root
    rows: list[dict] = []
    if refs:
        targets = [(ref, lambda ref=ref: load_probe(ref, root=given)) for ref in refs]
    else:
        lock = read_lock(root / LOCK_NAME)
        targets = [
            (f"{f.parent.name}@{f.stem[1:]}", lambda f=f: read_probe_file(f, lock))
            for f in probe_files(root)
        ]
    if not targets:
        rows.append(_problem(str(root), "no probes here (expected <id>/v<N>.yaml files)"))
    for name, load in targets:
        try:
            probe = load()
        except (ProbeError, CaseFileError) as exc:
            rows.append(_problem(name, str(exc)))
            continue
        for result in probe.check_examples():
            ex = result.example
            problem = ""
            if not result.ok:
                want = "score 1" if ex.expect == "pass" else "score below 1"
                problem = f"must {want}, scored {result.score.value:g}"
                if result.score.errors:
                    problem += f" ({result.score.errors[0]})"
            rows.append(
                {
                    "probe": probe.name,
                    "label": ex.label,
                    "expect": ex.expect,
                    "score": result.score.value,
                    "ok": result.ok,
                    "problem": problem,
                    "note": "",
                }
            )
        expects = {ex.expect for ex in probe.examples}
        for kind in ("pass", "fail") if len(expects) < 2 else ():
            if kind not in expects:
                rows.append(_problem(probe.name, f"has no worked example that must {kind}"))
        home = probe.path.parent.parent if probe.path is not None else root
        if beside_bundled and (probes_dir() / probe.id).is_dir():
            rows.append(
                _problem(
                    probe.name,
                    f"{home / probe.id}: the id {probe.id!r} is also a bundled probe's, so "
                    "`jevalkit run` and load_probe refuse it; rename the folder and the id",
                )
            )
        unwritten = _unwritten(probe.path) if probe.path is not None else ""
        if unwritten:
            rows.append(_problem(probe.name, unwritten))
        if probe.name not in read_lock(home / LOCK_NAME) and not unwritten:
            where = f" --probes-dir {shlex.quote(str(home))}" if given is not None else ""
            note = (
                f"not yet published: run `jevalkit probes lock{where}` when this version is final"
            )
            rows.append({**_problem(probe.name, ""), "ok": True, "note": note})
    return pd.DataFrame(rows, columns=CHECK_COLUMNS)


def _unwritten(path: Path) -> str:
    """Why the probe file at ``path`` is not ready to publish (the skeleton's placeholders it
    still holds), or an empty string."""
    found = placeholders(load_yaml(path, ProbeError))
    if not found:
        return ""
    more = f" and {len(found) - 4} more" if len(found) > 4 else ""
    return (
        f"{path}: still holds the skeleton's TODO placeholder(s) at {', '.join(found[:4])}{more}; "
        "write them, then check again"
    )


def _problem(probe: str, problem: str) -> dict:
    return {
        "probe": probe,
        "label": "",
        "expect": "",
        "score": None,
        "ok": False,
        "problem": problem,
        "note": "",
    }


def publish_probes(*, root: Path | None = None) -> list[str]:
    """Record the hash of every probe version not yet in ``probes.lock``; return their names.

    Versions already published are verified, never rewritten.

    Raises:
        ProbeError: a version not yet published still holds a placeholder of the ``jevalkit
            probes new`` skeleton (``TODO``); nothing is published then.

    Example (on a copy of the bundled probes: a doctest must not write the real lock):
        >>> import shutil, tempfile
        >>> bundled = load_probe("schema-ten-records").path.parents[1]
        >>> root = Path(shutil.copytree(bundled, Path(tempfile.mkdtemp()) / "probes"))
        >>> publish_probes(root=root)  # everything bundled is already published
        []
        >>> _ = (root / LOCK_NAME).write_text("")  # as if nothing were
        >>> "schema-ten-records@2" in publish_probes(root=root)
        True
    """
    root = probes_dir() if root is None else root
    published = read_lock(root / LOCK_NAME)
    for file in probe_files(root):
        unwritten = f"{file.parent.name}@{file.stem[1:]}" not in published and _unwritten(file)
        if unwritten:
            raise ProbeError(f"nothing was published: {unwritten}")
    return publish_versions(
        probe_files(root),
        read_probe_file,
        root / LOCK_NAME,
        ProbeError,
        what="probe",
        command="probes",
    )
