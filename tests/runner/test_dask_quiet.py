"""A LocalCluster that jevalkit starts shows Dask's errors, not its housekeeping warnings (a
lease released after it timed out on a busy machine, a worker killed at close): nothing a user
of the run can act on."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_a_semaphore_release_warning_of_our_cluster_is_not_printed(tmp_path):
    script = tmp_path / "release.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(REPO)!r})
            from jevalkit.cluster import dask_client

            def release_unknown(dask_scheduler):  # what a lease that timed out leads to
                dask_scheduler.extensions["semaphores"].release(name="gone", lease_id="x")

            if __name__ == "__main__":
                with dask_client(workers=1) as client:
                    client.run_on_scheduler(release_unknown)
                print("released")
            """
        )
    )
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert out.returncode == 0 and out.stdout.strip() == "released", out.stderr
    assert "Tried to release Lock or Semaphore" not in out.stderr  # was a WARNING line
    assert "WARNING" not in out.stderr, out.stderr
