"""``jevalkit local serve | status | stop``: the embedded model's server."""

from __future__ import annotations

import argparse

from .. import local


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``local`` command group."""
    group = sub.add_parser("local", help="the embedded Gemma 3 270M server on 127.0.0.1")
    cmds = group.add_subparsers(dest="local_command", required=True, metavar="SUBCOMMAND")
    serve = cmds.add_parser("serve", help="start the server (returns once it is healthy)")
    serve.add_argument("--port", type=int, default=local.DEFAULT_PORT)
    serve.add_argument("--parallel", type=int, default=2, metavar="N",
                       help="CPU threads for generation (llama-cpp-python serves one request at a time)")  # fmt: skip
    serve.set_defaults(handler=_serve)
    cmds.add_parser("status", help="is it running, and where").set_defaults(handler=_status)
    cmds.add_parser("stop", help="stop it").set_defaults(handler=_stop)


def _describe(server: local.LocalServer) -> str:
    return (
        f"running: {server.base_url} (pid {server.pid}), model {server.model_name}, "
        f"sha256 {server.model_sha256[:16]}…"
    )


def _serve(args: argparse.Namespace) -> int:
    print("starting the embedded model (loading takes a few seconds)…", flush=True)
    print(_describe(local.serve(port=args.port, parallel=args.parallel)))
    return 0


def _status(args: argparse.Namespace) -> int:
    server = local.status()
    print(_describe(server) if server else "not running")
    return 0 if server else 1


def _stop(args: argparse.Namespace) -> int:
    print("stopped" if local.stop() else "not running")
    return 0
