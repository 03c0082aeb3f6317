"""The run options, defined once: every keyword that :func:`jevalkit.run`, :func:`jevalkit.arun`,
:func:`jevalkit.runner.plan`, :func:`jevalkit.judges.judge` and :func:`jevalkit.judges.ajudge`
share, with its type, default and help.

:class:`RunOptions` is the definition (a ``TypedDict`` the entry points take as
``**options: Unpack[RunOptions]``, so editors complete and check the keywords). Everything else
is derived from it: :class:`RunSettings`, the frozen and validated settings of one run (a field
per option, the same defaults), and the command line's arguments (``jevalkit.cli`` adds a flag
per option from :data:`RUN_OPTIONS`: ``--max-retries`` for ``max_retries``, the same help).

To add a run option: add one line to :class:`RunOptions` (its type, and an :class:`Option` with
the default and a help line; ``flag=None`` keeps it out of the command line), read it where it
acts (``settings.<name>``), check its range in ``RunSettings.__post_init__`` if it has one, and
test it. ``run``, ``judge``, their async forms, ``plan`` and the CLI take it from there.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass, field, make_dataclass
from pathlib import Path
from typing import Annotated, Any, TypedDict, get_args, get_type_hints

from ..client import DEFAULT_MAX_RESPONSE_BYTES, RetryPolicy, default_cache_dir
from ..costs import Budget, Price, price_for
from ..errors import UsageError
from ._adaptive import ADAPTIVE_METRICS, AdaptiveRepeats
from ._plan import check_repeats

DEFAULT_CONCURRENCY = 8
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 5


@dataclass(frozen=True)
class Option:
    """What the command line needs to know of a run option.

    Attributes:
        default: the default (the same in Python and on the command line).
        help: one line for ``--help`` and the docs.
        flag: the command-line flag; ``""`` derives it from the name (``--max-retries``), None
            keeps the option Python-only. A boolean that defaults to True gets a ``--no-...``
            flag that turns it off.
        metavar: the placeholder in ``--help``.
        parse: turns the flag's text into the value (``int``, ``float``, ...; default ``str``).
        flag_help: the flag's own line in ``--help`` when ``help`` (the keyword's) would read
            backwards there (a ``--no-...`` flag does the opposite of its keyword).
    """

    default: Any
    help: str
    flag: str | None = ""
    metavar: str | None = None
    parse: Callable[[str], Any] | None = None
    flag_help: str | None = None

    def cli_flag(self, name: str) -> str | None:
        """The flag of option ``name`` (None: not on the command line).

        Example:
            >>> Option(5, "retries").cli_flag("max_retries"), Option(True, "cache").cli_flag("cache")
            ('--max-retries', '--no-cache')
        """
        if self.flag is None or self.flag:
            return self.flag
        dashed = name.replace("_", "-")
        return f"--no-{dashed}" if self.default is True else f"--{dashed}"


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


class RunOptions(TypedDict, total=False):
    """The options every run takes (probes and judges alike). Each is a keyword of ``run``,
    ``arun``, ``plan``, ``judge`` and ``ajudge``, a field of :class:`RunSettings` and, unless
    marked Python-only, a command-line flag of ``jevalkit run`` / ``judge`` / ``gate``.

    Example:
        >>> from jevalkit.runner import RUN_OPTIONS
        >>> RUN_OPTIONS["concurrency"].default, RUN_OPTIONS["concurrency"].cli_flag("concurrency")
        (8, '--concurrency')
    """

    base_url: Annotated[
        str | None,
        Option(
            None,
            "OpenAI-compatible base URL; the model name is sent as written (default: the "
            "model's provider prefix, else $JEVALKIT_BASE_URL)",
        ),
    ]
    api_key_env: Annotated[
        str | None,
        Option(None, "environment variable holding the key for the base URL", metavar="NAME"),
    ]
    out: Annotated[
        str | Path | None,
        Option(
            None, "the results JSONL (default runs/<name>__<model>[__<host>].jsonl)", metavar="PATH"
        ),
    ]
    label: Annotated[
        str | None, Option(None, "a name for this configuration (a 'system' in comparisons)")
    ]
    repeats: Annotated[
        int | str,
        Option(
            1,
            "runs per item, or 'auto': rounds until the interval is narrow",
            metavar="K",
            parse=repeats_value,
        ),
    ]
    target_half_width: Annotated[
        float,
        Option(
            0.03,
            "with repeats 'auto': stop once the interval is +/-H",
            metavar="H",
            parse=float,
        ),
    ]
    min_repeats: Annotated[
        int, Option(2, "with repeats 'auto': repeats of every item first", metavar="K", parse=int)
    ]
    max_repeats: Annotated[
        int, Option(20, "with repeats 'auto': no item gets more", metavar="K", parse=int)
    ]
    adaptive: Annotated[
        AdaptiveRepeats | None,
        Option(None, "every option of adaptive repeats (implies repeats 'auto')", flag=None),
    ]
    concurrency: Annotated[
        int, Option(DEFAULT_CONCURRENCY, "requests in flight", metavar="N", parse=int)
    ]
    timeout: Annotated[
        float,
        Option(DEFAULT_TIMEOUT, "seconds one attempt may take in total", metavar="S", parse=float),
    ]
    max_retries: Annotated[
        int,
        Option(
            DEFAULT_MAX_RETRIES,
            "retries of 429, 5xx, timeouts and connection errors",
            metavar="N",
            parse=int,
        ),
    ]
    max_response_bytes: Annotated[
        int,
        Option(
            DEFAULT_MAX_RESPONSE_BYTES,
            "a larger answer becomes an error row",
            metavar="B",
            parse=int,
        ),
    ]
    cache: Annotated[
        bool,
        Option(
            True,
            "use the response cache, one entry per request and repeat (False: bypass it)",
            flag_help="bypass the response cache: send every request again and store nothing "
            "(by default an answer cached for the same request and repeat is reused)",
        ),
    ]
    cache_dir: Annotated[
        str | Path | None,
        Option(None, "where responses are cached (default: the user cache)", flag=None),
    ]
    retry_errors: Annotated[bool, Option(False, "re-run only the error rows")]
    progress: Annotated[bool, Option(True, "show a progress bar", flag=None)]
    budget_usd: Annotated[
        float | None,
        Option(
            None,
            "stop cleanly before this invocation spends more than D dollars (every HTTP "
            "attempt, retries included, reserves its largest cost; an endpoint billing beyond "
            "max_tokens stops the run at once, exit 1)",
            metavar="D",
            parse=float,
        ),
    ]
    budget_requests: Annotated[
        int | None,
        Option(
            None,
            "stop cleanly after N HTTP attempts (retries included) reach the endpoint",
            metavar="N",
            parse=int,
        ),
    ]
    price_in: Annotated[
        float | None,
        Option(None, "dollars per million prompt tokens", metavar="P", parse=float),
    ]
    price_out: Annotated[
        float | None,
        Option(None, "dollars per million completion tokens", metavar="P", parse=float),
    ]
    scheduler: Annotated[
        str | None,
        Option(
            None, "run on the Dask scheduler at this address, tcp://host:port", metavar="ADDRESS"
        ),
    ]
    cluster: Annotated[
        Any,
        Option(None, "run on this Dask Client or cluster object (LocalCluster, ...)", flag=None),
    ]
    workers: Annotated[
        int | None,
        Option(
            None, "run on a LocalCluster of N worker processes on 127.0.0.1", metavar="N", parse=int
        ),
    ]
    shard: Annotated[
        str | None,
        Option(
            None,
            "run only shard I of N (from 0) into <out>.parts/I.jsonl; then `jevalkit merge`",
            metavar="I/N",
        ),
    ]


_HINTS = get_type_hints(RunOptions, include_extras=True)
RUN_OPTIONS: dict[str, Option] = {name: hint.__metadata__[0] for name, hint in _HINTS.items()}


class _Settings:
    """The behaviour of :class:`RunSettings` (its fields come from :class:`RunOptions`)."""

    def __post_init__(self) -> None:
        s: Any = self
        for name in ("concurrency", "max_response_bytes"):
            value = getattr(s, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"{name} must be a whole number of at least 1, got {value!r}")
        t = s.timeout
        if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t <= 0:
            raise UsageError(f"timeout must be a positive number of seconds, got {t!r}")
        if s.repeats != "auto":
            check_repeats(s.repeats)
        if s.adaptive is not None and not isinstance(s.adaptive, AdaptiveRepeats):
            raise UsageError(f"adaptive must be an AdaptiveRepeats, got {s.adaptive!r}")
        RetryPolicy(max_retries=s.max_retries)  # validates it
        self.new_budget()  # validates the limits
        price_for("", price_in=s.price_in, price_out=s.price_out)  # validates the prices

    def new_budget(self) -> Budget:
        """A fresh budget with this run's limits (one per invocation)."""
        s: Any = self
        return Budget(usd=s.budget_usd, requests=s.budget_requests)

    def price(self, model: str) -> Price | None:
        """The price of ``model``: the overrides, else the price table, else None."""
        s: Any = self
        return price_for(model, price_in=s.price_in, price_out=s.price_out)

    def require_price(self, model: str) -> Price:
        """The price of ``model``, which a dollar budget needs; refused when unknown."""
        price = self.price(model)
        if price is None:
            raise UsageError(
                f"--budget-usd needs a price for {model!r}: it is not in data/prices.yaml; "
                "give --price-in and --price-out (dollars per million tokens)"
            )
        return price

    def cache_root(self) -> Path:
        """Where responses are cached."""
        s: Any = self
        return Path(s.cache_dir) if s.cache_dir else default_cache_dir() / "responses"

    def adaptive_plan(self, metric: str = "pass_rate") -> AdaptiveRepeats | None:
        """The adaptive-repeats plan of this run: ``adaptive`` when given, else one from
        ``target_half_width``, ``min_repeats``, ``max_repeats`` and ``metric`` when ``repeats``
        is ``"auto"``, else None (fixed repeats)."""
        s: Any = self
        if s.adaptive is not None:
            return s.adaptive
        if s.repeats != "auto":
            return None
        if metric not in ADAPTIVE_METRICS:
            raise UsageError(f"metric must be one of {', '.join(ADAPTIVE_METRICS)}, got {metric!r}")
        return AdaptiveRepeats(
            target_half_width=s.target_half_width,
            min_repeats=s.min_repeats,
            max_repeats=s.max_repeats,
            metric=metric,
        )

    @classmethod
    def of(cls, options: dict[str, Any]) -> Any:
        """The settings of keyword arguments; a keyword that is not a run option is refused
        naming the ones there are.

        Example:
            >>> RunSettings.of({"concurency": 2})
            Traceback (most recent call last):
            ...
            TypeError: unexpected keyword argument 'concurency'; the run options are: base_url, ...
        """
        unknown = sorted(set(options) - set(RUN_OPTIONS))
        if unknown:
            raise TypeError(
                f"unexpected keyword argument {unknown[0]!r}; the run options are: "
                + ", ".join(RUN_OPTIONS)
            )
        return cls(**options)


RunSettings = make_dataclass(
    "RunSettings",
    [
        (name, get_args(_HINTS[name])[0], field(default=option.default))
        for name, option in RUN_OPTIONS.items()
    ],
    bases=(_Settings,),
    frozen=True,
    kw_only=True,
    namespace={
        "__module__": __name__,
        "__doc__": """How one run sends its requests: a frozen, validated field per run option
    (:class:`RunOptions`, with the same defaults), for probes and judges alike.

    Example:
        >>> RunSettings().concurrency, RunSettings().timeout, RunSettings().max_retries
        (8, 60.0, 5)
        >>> RunSettings(concurrency=0)
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: concurrency must be a whole number of at least 1, got 0
    """,
    },
)
