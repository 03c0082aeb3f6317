"""Build llama.cpp's own ``llama-server`` from sources a package registry carries.

The llama-cpp-python source distribution on PyPI vendors llama.cpp. We download that one pinned
file (its sha256 is checked), extract only ``vendor/llama.cpp``, and build the single target
``llama-server`` with CMake and Ninja (the ``cmake`` and ``ninja`` wheels of the ``local`` extra,
or the system's), portable: the default native build crashed (SIGSEGV in the AMX matmul) on the
Xeons this project is developed on, so the CPU features are chosen explicitly. Measured on
2 cores: about 4.5 minutes. The binary goes to ``<environment>/bin/llama-server``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

import httpx

from ..errors import LocalModelError

SDIST_NAME = "llama_cpp_python-0.3.36.tar.gz"
SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
PROJECT = "llama-cpp-python"
PORTABLE_FLAGS = (
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DCMAKE_BUILD_TYPE=Release",
)


def installed_server_path(prefix: Path | None = None) -> Path:
    """Where :func:`build_server` puts the binary: ``<prefix>/bin/llama-server``.

    Example:
        >>> installed_server_path(Path("/opt/env"))
        PosixPath('/opt/env/bin/llama-server')
    """
    return Path(prefix or sys.prefix) / "bin" / "llama-server"


def _tool(name: str) -> str:
    here = Path(sys.prefix) / "bin" / name
    found = str(here) if here.exists() else shutil.which(name)
    if not found:
        raise LocalModelError(
            f"building llama-server needs {name}: pip install {name} (or your system's package)"
        )
    return found


def _index_url() -> str:
    return (os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple").rstrip("/")


def download_sources(dest: Path) -> Path:
    """Download the pinned llama-cpp-python source distribution into ``dest``; check its sha256."""
    page_url = f"{_index_url()}/{PROJECT}/"
    try:
        with httpx.Client(timeout=60, follow_redirects=True) as client:
            page = client.get(page_url)
            page.raise_for_status()
            links = re.findall(r'href="([^"]+)"', page.text)
            link = next((u for u in links if u.split("#")[0].endswith("/" + SDIST_NAME)), None)
            if link is None:
                raise LocalModelError(f"{page_url} does not list {SDIST_NAME}")
            url = httpx.URL(page_url).join(link.split("#")[0])
            target = dest / SDIST_NAME
            digest = hashlib.sha256()
            with client.stream("GET", url) as response, target.open("wb") as fh:
                response.raise_for_status()
                for chunk in response.iter_bytes():
                    digest.update(chunk)
                    fh.write(chunk)
    except httpx.HTTPError as exc:
        raise LocalModelError(f"cannot download {SDIST_NAME} from {page_url}: {exc}") from None
    if digest.hexdigest() != SDIST_SHA256:
        raise LocalModelError(
            f"{SDIST_NAME}: sha256 {digest.hexdigest()[:16]}… is not the pinned {SDIST_SHA256[:16]}…"
        )
    return target


def _extract_llama_cpp(sdist: Path, dest: Path) -> Path:
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if "/vendor/llama.cpp/" in m.name]
        tar.extractall(dest, members=members, filter="data")
    return next(dest.glob("*/vendor/llama.cpp"))


MAX_JOBS = 1024  # parallel compile jobs


def build_server(
    prefix: Path | None = None,
    *,
    jobs: int | None = None,
    on_line: Callable[[str], None] | None = None,
) -> Path:
    """Download, build and install ``llama-server``; return its path.

    Args:
        prefix: the environment to install into (default: the running Python's, ``sys.prefix``).
        jobs: parallel compile jobs (default: the number of CPUs).
        on_line: called with each line of the build's output (progress).

    Raises:
        LocalModelError: the download, the checksum, CMake or the compiler failed (the last
            lines of the build log are quoted).
    """
    if jobs is not None and (
        isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= MAX_JOBS
    ):  # before anything is downloaded
        raise LocalModelError(f"jobs must be a whole number from 1 to {MAX_JOBS}, got {jobs!r}")
    target = installed_server_path(prefix)
    cmake, ninja = _tool("cmake"), _tool("ninja")
    with tempfile.TemporaryDirectory(prefix="jevalkit-llama-") as tmp:
        work = Path(tmp)
        source = _extract_llama_cpp(download_sources(work), work / "src")
        build = work / "build"
        steps = [
            [
                cmake,
                "-S",
                str(source),
                "-B",
                str(build),
                "-G",
                "Ninja",
                f"-DCMAKE_MAKE_PROGRAM={ninja}",
                *PORTABLE_FLAGS,
            ],
            [
                cmake,
                "--build",
                str(build),
                "--target",
                "llama-server",
                "-j",
                str(jobs or os.cpu_count() or 2),
            ],
        ]
        log: list[str] = []
        for step in steps:
            proc = subprocess.Popen(
                step, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
            )
            assert proc.stdout is not None
            for line in proc.stdout:
                log.append(line.rstrip())
                if on_line is not None:
                    on_line(line.rstrip())
            if proc.wait() != 0:
                tail = " | ".join(log[-3:])
                raise LocalModelError(
                    f"building llama-server failed ({Path(step[0]).name}): {tail}"
                )
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(build / "bin" / "llama-server", target)
    return target
