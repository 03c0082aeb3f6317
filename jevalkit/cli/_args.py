"""Arguments shared by the commands that send requests (``run``, ``judge``, ``gate --repeats
auto``): derived from the one definition of the run options (:class:`jevalkit.runner.RunSettings`)
and of the generation parameters (:class:`jevalkit.client.GenerationOptions`), a flag per option
named like its Python keyword (``--max-retries`` for ``max_retries``, ``--top-p`` for ``top_p``)."""

from __future__ import annotations

import argparse
import math
from typing import Any

from ..client import GENERATION
from ..metrics import DEFAULT_MAX_ERROR_RATE
from ..runner import RUN_OPTIONS

__all__ = [
    "add_generation_arguments",
    "add_max_error_rate",
    "add_model_argument",
    "add_run_arguments",
    "generation_options",
    "run_options",
    "split_list",
]


def add_model_argument(cmd: argparse.ArgumentParser, *, required: bool = True) -> None:
    """``--model``."""
    cmd.add_argument(
        "--model",
        required=required,
        help="provider/model: openai/gpt-4o-mini (OpenAI), openrouter/<id> (OpenRouter), "
        "anthropic/<model>, or local (the embedded model); with --base-url, any name",
    )


def add_run_arguments(cmd: argparse.ArgumentParser | Any, *, skip: tuple[str, ...] = ()) -> None:
    """A flag for every run option that has one (:data:`jevalkit.runner.RUN_OPTIONS`), with its
    default and help, except those in ``skip``.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_run_arguments(parser)
        >>> args = parser.parse_args(["--repeats", "auto", "--no-cache", "--max-retries", "2"])
        >>> args.repeats, args.cache, args.max_retries, args.concurrency
        ('auto', False, 2, 8)
    """
    for name, option in RUN_OPTIONS.items():
        flag = option.cli_flag(name)
        if flag is None or name in skip:
            continue
        if isinstance(option.default, bool):
            action = "store_false" if option.default else "store_true"
            cmd.add_argument(flag, dest=name, action=action, help=option.flag_help or option.help)
            continue
        shown = (
            ""
            if option.default is None
            else f" (default {option.default:g})"
            if isinstance(option.default, float)
            else f" (default {option.default})"
        )
        cmd.add_argument(
            flag,
            dest=name,
            type=option.parse or str,
            default=option.default,
            metavar=option.metavar,
            help=option.help + shown,
        )


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The run options (keywords of :func:`jevalkit.run` / :func:`jevalkit.judges.judge`) the
    command line set."""
    return {name: getattr(args, name) for name in RUN_OPTIONS if hasattr(args, name)}


def add_generation_arguments(cmd: argparse.ArgumentParser | Any) -> None:
    """A flag for every generation parameter (:data:`jevalkit.client.GENERATION`), with its help;
    a parameter that takes several texts (``stop``) takes the flag once per text.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_generation_arguments(parser)
        >>> args = parser.parse_args(["--top-p", "0.9", "--stop", "END", "--stop", "##"])
        >>> args.top_p, args.stop, args.temperature
        (0.9, ['END', '##'], None)
    """
    for name, sampling in GENERATION.items():
        flag = "--" + name.replace("_", "-")
        many = {"action": "append"} if sampling.kind == "texts" else {}
        cmd.add_argument(
            flag,
            dest=name,
            type=sampling.parse,
            metavar=sampling.metavar,
            help=f"{sampling.help} ({sampling.values()})",
            **many,
        )


def generation_options(args: argparse.Namespace) -> dict[str, Any]:
    """The generation parameters the command line has flags for (None: not given)."""
    return {name: getattr(args, name) for name in GENERATION if hasattr(args, name)}


def _rate(text: str) -> float:
    """A share from 0 to 1 (``--max-error-rate``)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 <= value <= 1):
        raise argparse.ArgumentTypeError(f"expected a share from 0 to 1, got {text!r}")
    return value


def add_max_error_rate(cmd: argparse.ArgumentParser | Any, help: str) -> None:
    """``--max-error-rate E`` (default :data:`jevalkit.metrics.DEFAULT_MAX_ERROR_RATE`, the
    gate's and a run's alike).

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_max_error_rate(parser, "exit 1 above it")
        >>> parser.parse_args([]).max_error_rate, parser.parse_args(["--max-error-rate", "0"]).max_error_rate
        (0.05, 0.0)
    """
    cmd.add_argument(
        "--max-error-rate",
        type=_rate,
        default=DEFAULT_MAX_ERROR_RATE,
        metavar="E",
        help=f"{help} (default {DEFAULT_MAX_ERROR_RATE:g})",
    )


def split_list(text: str | None) -> list[str]:
    """``"a, b"`` -> ``["a", "b"]``; None -> ``[]``.

    Example:
        >>> split_list("model, probe")
        ['model', 'probe']
    """
    return [c.strip() for c in text.split(",") if c.strip()] if text else []
