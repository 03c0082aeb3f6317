"""Arguments shared by the commands that send requests (``run``, ``judge``): one definition,
named like the Python keywords they set."""

from __future__ import annotations

import argparse
from typing import Any

from ..client import DEFAULT_MAX_RESPONSE_BYTES

__all__ = [
    "add_cluster_arguments",
    "add_endpoint_arguments",
    "add_run_arguments",
    "generation_options",
    "repeats_value",
    "run_options",
    "split_list",
]


def add_endpoint_arguments(cmd: argparse.ArgumentParser, *, required: bool = True) -> None:
    """``--model``, ``--base-url`` and ``--api-key-env``."""
    cmd.add_argument(
        "--model", required=required, help="model name; `local` for the embedded model"
    )
    cmd.add_argument(
        "--base-url",
        help="OpenAI-compatible base URL (default: $JEVALKIT_BASE_URL, else OpenRouter)",
    )
    cmd.add_argument(
        "--api-key-env", metavar="NAME", help="environment variable holding the key for --base-url"
    )


def repeats_value(text: str) -> int | str:
    """``--repeats``: a whole number, or ``auto``.

    Example:
        >>> repeats_value("5"), repeats_value("auto")
        (5, 'auto')
    """
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number or 'auto', got {text!r}"
        ) from None


def add_run_arguments(
    cmd: argparse.ArgumentParser,
    concurrency: int,
    timeout: float,
    max_retries: int,
    *,
    adaptive: bool = False,
) -> None:
    """How requests are sent: repeats, concurrency, timeout, retries, size cap, cache, budget
    and prices (with ``adaptive``: ``--repeats auto`` and its options)."""
    if adaptive:
        cmd.add_argument(
            "--repeats",
            type=repeats_value,
            default=1,
            metavar="K",
            help="runs per item (default 1), or 'auto': rounds until the interval is narrow",
        )
        cmd.add_argument(
            "--target-half-width",
            type=float,
            default=0.03,
            metavar="H",
            help="with --repeats auto: stop once the interval is +/-H (default 0.03)",
        )
        cmd.add_argument("--min-repeats", type=int, default=2, metavar="K")
        cmd.add_argument("--max-repeats", type=int, default=20, metavar="K")
    else:
        cmd.add_argument(
            "--repeats", type=int, default=1, metavar="K", help="runs per item (default 1)"
        )
    cmd.add_argument(
        "--budget-usd",
        type=float,
        metavar="D",
        help="stop cleanly before this invocation spends more than D dollars (every attempt, "
        "retries included, reserves its largest cost; exit 1 if the endpoint bills beyond it)",
    )
    cmd.add_argument(
        "--budget-requests",
        type=int,
        metavar="N",
        help="stop cleanly after N HTTP attempts (retries included) reach the endpoint",
    )
    cmd.add_argument(
        "--price-in", type=float, metavar="P", help="dollars per million prompt tokens"
    )
    cmd.add_argument(
        "--price-out", type=float, metavar="P", help="dollars per million completion tokens"
    )
    cmd.add_argument(
        "--concurrency",
        type=int,
        default=concurrency,
        metavar="N",
        help=f"requests in flight (default {concurrency})",
    )
    cmd.add_argument(
        "--timeout",
        type=float,
        default=timeout,
        metavar="S",
        help=f"seconds one attempt may take in total (default {timeout:g})",
    )
    cmd.add_argument("--max-retries", type=int, default=max_retries, metavar="N")
    cmd.add_argument(
        "--max-response-bytes",
        type=int,
        default=DEFAULT_MAX_RESPONSE_BYTES,
        metavar="B",
        help="a larger answer becomes an error row",
    )
    cmd.add_argument("--no-cache", action="store_true", help="bypass the response cache")
    cmd.add_argument("--retry-errors", action="store_true", help="re-run only the error rows")
    add_cluster_arguments(cmd, workers_default=None)
    cmd.add_argument(
        "--shard",
        metavar="I/N",
        help="run only shard I of N (from 0) into <out>.parts/I.jsonl; then `jevalkit merge`",
    )


def add_cluster_arguments(cmd: argparse.ArgumentParser, *, workers_default: int | None) -> None:
    """``--scheduler`` and ``--workers``: the same Dask options for runs and batch reports."""
    cmd.add_argument(
        "--scheduler", metavar="ADDRESS", help="run on an existing Dask scheduler, tcp://host:port"
    )
    cmd.add_argument(
        "--workers",
        type=int,
        default=workers_default,
        metavar="N",
        help="run on a LocalCluster of N worker processes on 127.0.0.1"
        + (f" (default {workers_default})" if workers_default else ""),
    )


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of :func:`jevalkit.run` / :func:`jevalkit.judges.judge` that the
    shared arguments set."""
    return {
        "base_url": args.base_url,
        "api_key_env": args.api_key_env,
        "repeats": args.repeats,
        "concurrency": args.concurrency,
        "timeout": args.timeout,
        "max_retries": args.max_retries,
        "max_response_bytes": args.max_response_bytes,
        "cache": not args.no_cache,
        "retry_errors": args.retry_errors,
        "budget_usd": args.budget_usd,
        "budget_requests": args.budget_requests,
        "price_in": args.price_in,
        "price_out": args.price_out,
        "scheduler": args.scheduler,
        "workers": args.workers,
        "shard": args.shard,
    }


def generation_options(args: argparse.Namespace) -> dict[str, Any]:
    """The generation keywords (``temperature``, ``seed``, ``max_tokens``, ``label`` and, where
    the command has them, ``top_p`` and ``constrained``) the command line set."""
    names = ("temperature", "seed", "max_tokens", "top_p", "label", "constrained")
    return {name: getattr(args, name) for name in names if hasattr(args, name)}


def split_list(text: str | None) -> list[str]:
    """``"a, b"`` -> ``["a", "b"]``; None -> ``[]``.

    Example:
        >>> split_list("model, probe")
        ['model', 'probe']
    """
    return [c.strip() for c in text.split(",") if c.strip()] if text else []
