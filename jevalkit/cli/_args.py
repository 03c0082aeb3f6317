"""Arguments shared by the commands that send requests (``run``, ``judge``, ``gate --repeats
auto``): derived from the one definition of the run options (:class:`jevalkit.runner.RunSettings`)
and of the generation parameters (:class:`jevalkit.generation.GenerationOptions`), a flag per
option named like its Python keyword (``--max-retries`` for ``max_retries``, ``--top-p`` for
``top_p``); and the flags that build a design (``--repeats auto``, ``--target-half-width``,
``--min-repeats``, ``--max-repeats``: :class:`jevalkit.stats.AdaptiveRepeats`), since in Python
a design is one keyword (``design=``)."""

from __future__ import annotations

import argparse
import math
from typing import Any

from ..errors import UsageError
from ..generation import GENERATION
from ..results import DEFAULT_MAX_ERROR_RATE
from ..runner import RUN_OPTIONS
from ..stats import AdaptiveRepeats

__all__ = [
    "adaptive_design",
    "add_generation_arguments",
    "add_max_error_rate",
    "add_model_argument",
    "add_run_arguments",
    "generation_options",
    "repeats_value",
    "run_options",
    "split_list",
]


def add_model_argument(cmd: argparse.ArgumentParser, *, required: bool = True) -> None:
    """``--model``."""
    cmd.add_argument(
        "--model",
        required=required,
        help="provider/model: openai/gpt-4o-mini (OpenAI), openrouter/<id> (OpenRouter), "
        "anthropic/<model>, local (the embedded base model, Gemma 3 270M) or local-chat (the "
        "embedded chat model, SmolLM2 135M Instruct); with --base-url, any name",
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
        if name == "repeats":
            _add_repeats_arguments(cmd)
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


def _add_repeats_arguments(cmd: argparse.ArgumentParser | Any) -> None:
    """``--repeats K|auto`` and the flags of adaptive repeats."""
    cmd.add_argument(
        "--repeats",
        dest="repeats",
        type=repeats_value,
        default=1,
        metavar="K",
        help="runs per item, or 'auto': rounds until the interval is narrow (default 1)",
    )
    cmd.add_argument(
        "--target-half-width",
        dest="target_half_width",
        type=float,
        metavar="H",
        help="stop once the anytime-valid interval is +/-H: with repeats 'auto' (default 0.03), "
        "or with --cases active:K (default: run all K)",
    )
    cmd.add_argument(
        "--min-repeats",
        dest="min_repeats",
        type=int,
        default=2,
        metavar="K",
        help="with repeats 'auto': repeats of every item first (default 2)",
    )
    cmd.add_argument(
        "--max-repeats",
        dest="max_repeats",
        type=int,
        default=20,
        metavar="K",
        help="with repeats 'auto': no item gets more (default 20)",
    )


def adaptive_design(
    args: argparse.Namespace, *, metric: str = "pass_rate", decide_at: float | None = None
) -> AdaptiveRepeats | None:
    """The adaptive repeats ``--repeats auto`` asks for (with ``--target-half-width``,
    ``--min-repeats``, ``--max-repeats``), else None.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_run_arguments(parser)
        >>> adaptive_design(parser.parse_args(["--repeats", "auto", "--max-repeats", "8"])).max_repeats
        8
    """
    if getattr(args, "repeats", None) != "auto":
        return None
    target = args.target_half_width
    return AdaptiveRepeats(
        **({} if target is None else {"target_half_width": target}),
        min_repeats=args.min_repeats,
        max_repeats=args.max_repeats,
        metric=metric,
        decide_at=decide_at,
    )


def run_options(
    args: argparse.Namespace,
    *,
    metric: str = "pass_rate",
    decide_at: float | None = None,
    design: Any = None,
) -> dict[str, Any]:
    """The run options (keywords of :func:`jevalkit.run` / :func:`jevalkit.runner.judge`) the
    command line set: ``design`` when given (an active plan, a cascade), else adaptive repeats
    on ``metric`` (stopping at ``decide_at`` either way, for a gate) when ``--repeats auto``;
    a ``--target-half-width`` that nothing would read is refused."""
    options = {name: getattr(args, name) for name in RUN_OPTIONS if hasattr(args, name)}
    auto = getattr(args, "repeats", None) == "auto"
    if auto and design is not None:
        what = "--cases active:K" if design.kind == "active" else f"a {design.kind}"
        raise UsageError(f"{what} runs fixed repeats of each drawn case: drop --repeats auto")
    target = getattr(args, "target_half_width", None)
    if target is not None and not auto and getattr(design, "kind", None) != "active":
        raise UsageError(
            "--target-half-width stops --repeats auto (adaptive repeats) or an active plan "
            "(--cases active:K); this run sends fixed repeats of every case, so nothing would "
            f"stop at {target!r}: drop it, or add --repeats auto"
        )
    chosen = (
        design if design is not None else adaptive_design(args, metric=metric, decide_at=decide_at)
    )
    if chosen is not None:
        options["design"] = chosen
        if options.get("repeats") == "auto":
            options["repeats"] = 1
    return options


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
        many: dict[str, Any] = {"action": "append"} if sampling.kind == "texts" else {}
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
    """``--max-error-rate E`` (default :data:`jevalkit.results.DEFAULT_MAX_ERROR_RATE`, the
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
